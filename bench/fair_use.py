"""A flood of users' requests beside a deploy, through `make run` (loopback only, bounded): 300 parallel `import`
calls of distinct template codes while the 40-role, 8-category, 120-channel deploy runs, first by the deploy's
user (the limit per user answers), then by 300 users (the users' share of the bot's rate answers).

Printed: the flood's answers by status and cause (429 of a limit per user, 429 of the runner's own throttle, 503
of the bot's share, 404 from the platform: the codes are made up), the platform's requests and 429s during the
flood, the bot's busiest second, and the deploy's wall time (its first to its last platform request, from the
sandbox's log) alone and with each flood. Each run starts its own runner, so each deploy meets a fresh sandbox.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from bench.deploy import BUILD_GUILD, sign_in
from bench.quick import QUICK, scaled
from bench.service import local_service

FLOOD_CALLS = scaled(300, 20)
# Quick (BENCH_QUICK=1): a small deploy beside a small flood by its user, once, with no run alone.
FLOODS = ("one user",) if QUICK else ("one user", "many users")
FLOOD_TIMEOUT_SECONDS = 120
TEMPLATE_ROUTE = "/guilds/templates/{code}"


def _import(url: str, bearer: dict[str, str], number: int) -> str:
    """One flood call's outcome: its status, and for a 429 whose limit it is (or the runner's throttle)."""
    body = {"action": "import", "template": f"flood{number:04d}"}
    if not bearer:  # each call its own user
        from local.settings import LOCAL_JWT_SECRET
        from local.tokens import issue_token

        bearer = {"Authorization": f"Bearer {issue_token(LOCAL_JWT_SECRET, f'flood-user-{number}')}"}
    try:
        answer = requests.post(url, json=body, headers=bearer, timeout=FLOOD_TIMEOUT_SECONDS)
    except requests.RequestException as exc:
        return f"no answer ({type(exc).__name__})"
    if answer.status_code == 429:
        return f"429 {answer.json().get('limit') or 'runner throttle'}"
    return str(answer.status_code)


def deploy_beside_flood(flood: str, config: dict[str, Any]) -> dict[str, Any]:
    """The deploy, with no flood (""), a flood by its own user ("one user") or by as many users as calls."""
    with local_service() as state:
        sandbox = state["chat_api_base_url"].removesuffix("/api/v10")
        bearer = sign_in(state, sandbox)
        url = f"{state['base_url']}/functions/deployToChat"
        before = len(requests.get(f"{sandbox}/_sandbox/log", timeout=30).json()["requests"])
        body = {"action": "deploy", "guild_id": BUILD_GUILD, "config": config}
        body |= {"project_id": "bench", "project_name": "Bench"}
        queued = requests.post(url, json=body, headers=bearer, timeout=60)
        assert queued.status_code == 202, queued.text
        outcomes: Counter[str] = Counter()
        flood_span = (0.0, 0.0)
        if flood:
            started = time.time()
            flooder = bearer if flood == "one user" else {}
            with ThreadPoolExecutor(max_workers=FLOOD_CALLS) as pool:
                outcomes.update(pool.map(lambda n: _import(url, flooder, n), range(FLOOD_CALLS)))
            flood_span = (started, time.time())
        while True:
            info = requests.post(url, json={"action": "info", "project_id": "bench"}, headers=bearer, timeout=60)
            if info.status_code == 200 and info.json()["status"] in ("succeeded", "partial", "failed"):
                break
            time.sleep(0.5)
        log = requests.get(f"{sandbox}/_sandbox/log", timeout=30).json()["requests"][before:]
    worker = [entry for entry in log if entry["path"].startswith(f"/guilds/{BUILD_GUILD}")]
    flood_requests = [entry for entry in log if entry["route"] == TEMPLATE_ROUTE]
    during = [entry for entry in log if flood_span[0] <= entry["time"] <= flood_span[1]]
    return {
        "status": info.json()["status"],
        "wall": worker[-1]["time"] - worker[0]["time"],
        "worker_429": sum(1 for entry in worker if entry["status"] == 429),
        "outcomes": outcomes,
        "flood_requests": len(flood_requests),
        "flood_429": sum(1 for entry in flood_requests if entry["status"] == 429),
        "all_429_during": sum(1 for entry in during if entry["status"] == 429),
        "flood_seconds": flood_span[1] - flood_span[0],
        # The limits count per clock minute: a flood that crosses a minute's end meets a fresh allowance.
        "flood_minutes": int(flood_span[1] // 60) - int(flood_span[0] // 60) + 1 if flood else 0,
        "peak_per_second": max(Counter(int(entry["time"]) for entry in log).values(), default=0),
        "flood_peak_per_second": max(Counter(int(entry["time"]) for entry in flood_requests).values(), default=0),
    }


def run() -> None:
    from local.samples import large_community

    config = large_community(roles=scaled(40, 4), categories=scaled(8, 2), channels=scaled(120, 6))
    alone: dict[str, Any] = {}
    if not QUICK:  # quick: the flooded run alone, which takes the same path and the flood's besides
        print(f"\nThe {len(config['roles'])}-role deploy alone, through make run (starting the runner) ...", flush=True)
        alone = deploy_beside_flood("", config)
        print(f"  {alone['status']}: worker wall time {alone['wall']:.1f} s, platform 429s {alone['worker_429']}")
    for flood in FLOODS:
        who = "its user" if flood == "one user" else f"{FLOOD_CALLS} users"
        print(f"\nThe same deploy with {FLOOD_CALLS} parallel imports by {who} (a fresh runner) ...", flush=True)
        flooded = deploy_beside_flood(flood, config)
        print(f"  {flooded['status']}: worker wall time {flooded['wall']:.1f} s, platform 429s {flooded['worker_429']}")
        print(f"  flood answers in {flooded['flood_seconds']:.1f} s:")
        for outcome, count in sorted(flooded["outcomes"].items()):
            print(f"    {outcome}: {count}")
        print(
            f"  the flood's platform requests: {flooded['flood_requests']}, of which 429: {flooded['flood_429']};"
            f" platform 429s of any request during the flood: {flooded['all_429_during']}"
        )
        print(
            f"  the bot's busiest second: {flooded['peak_per_second']} requests (its global limit: 50), of which the"
            f" flood's at most {flooded['flood_peak_per_second']} (the users' share: 25)"
        )
        if alone.get("wall"):
            change = flooded["wall"] / alone["wall"] - 1
            print(f"  the deploy's wall time with the flood: {change:+.1%} of its time alone")
