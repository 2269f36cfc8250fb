"""The 40-role, 8-category, 120-channel deploy, end to end through `make run` against the sandbox.

Then the same server edited the way people edit it (channels renamed, moved to another category, a category's
order reversed, channels and a role pruned, the server renamed), dry-run with `prune` and deployed with its
`plan_id`: its requests beside the minimum that plan needs (the reads, one request per object changed or deleted,
one bulk request per order that changes).

Printed: the platform requests of the request (its authorization and preflight reads) and of the worker, beside
the minimum a deploy needs (one read of the guild's roles, channels and the bot's roles, one request per object
created, one role reorder, and one guild PATCH when the server's name or settings differ: the configuration names
the server); and the worker's wall time beside the time the sandbox's creation rate limits
allow (each creation route takes `limit` requests per `window` seconds; roles come before channels, which need
them for their overwrites).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import requests

from bench.quick import QUICK, scaled
from bench.service import ROOT, local_service

if TYPE_CHECKING:
    from bench.floors import Floors
    from svcconf.deploy_engine.steps import DeploymentPlan

ALICE = "1191000000000000101"
BUILD_GUILD = "1191000000000001005"
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
ROLE_CREATE = "POST /guilds/{guild_id}/roles"
CHANNEL_CREATE = "POST /guilds/{guild_id}/channels"
# the guild with its roles, its channels, the bot's member; and the caller's member, read when the deploy is asked
# and again when it runs (docs/05-deploy-engine.md, "What a caller may do")
MINIMUM_READS = 3 + 2
# The reads of a first deploy in a fresh `make run`, by who makes them: the request reads the caller's guilds (their
# token: may they deploy here), the bot's own id (once per process), and the live guild (the guild, its channels, the
# bot's and the caller's members, and v4's AutoMod rules, onboarding and welcome screen: a Community server's); the
# worker reads the live guild again, the bot's member aside (the request's, kept in the record)
FIRST_DEPLOY_READS = {"request": 1 + 1 + 7, "worker": 6}


def sign_in(state: dict[str, Any], sandbox: str, user: str = ALICE) -> dict[str, str]:
    """The runner's user linked to `user` as a web app links them (chatAuth v4): a sign-in started for the bearer
    (its `state` and PKCE challenge), a code the sandbox issues for that challenge, the code exchanged with the
    state. The bearer headers."""
    bearer = {"Authorization": f"Bearer {state['user_token']}"}
    url = f"{state['base_url']}/functions/chatAuth"
    started = requests.post(url, json={"redirect_uri": REDIRECT_URI, "replace": True}, headers=bearer, timeout=60)
    assert started.status_code == 200, started.text
    challenge = parse_qs(urlsplit(started.json()["authorize_url"]).query)["code_challenge"][0]
    minted = {"user_id": user, "redirect_uri": REDIRECT_URI, "code_challenge": challenge}
    code = requests.post(f"{sandbox}/_sandbox/oauth/codes", json=minted, timeout=30).json()["code"]
    body = {"code": code, "redirect_uri": REDIRECT_URI, "state": started.json()["state"]}
    linked = requests.post(url, json=body, headers=bearer, timeout=60)
    assert linked.status_code == 200, linked.text
    return bearer


def _ideal_seconds(count: int, limit: int, window: float) -> float:
    """The earliest the last of `count` requests can go out when `limit` go per `window`."""
    return ((count - 1) // limit) * window if count else 0.0


def _deploy(state: dict[str, Any], config: dict[str, Any]) -> tuple[float, float, float, dict[str, Any]]:
    """Deploys and polls `info` until the deployment ends: (sent, accepted, seen finished) times, and the info."""
    bearer = {"Authorization": f"Bearer {state['user_token']}"}
    url = f"{state['base_url']}/functions/deployToChat"
    body = {
        "action": "deploy",
        "guild_id": BUILD_GUILD,
        "project_id": "bench",
        "project_name": "Bench",
        "config": config,
    }
    started = time.time()
    accepted, info = _queued_until_finished(url, body, bearer)
    return started, accepted, time.time(), info


def _queued_until_finished(url: str, body: dict[str, Any], bearer: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Sends a deploy and polls `info` until it ends: when it was accepted, and the finished info."""
    queued = requests.post(url, json=body, headers=bearer, timeout=60)
    assert queued.status_code == 202, queued.text
    accepted = time.time()
    while True:
        info = requests.post(url, json={"action": "info", "project_id": "bench"}, headers=bearer, timeout=60).json()
        if info["status"] in ("succeeded", "partial", "failed"):
            return accepted, info
        time.sleep(0.2)


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]
    from local.samples import CAPS_CATEGORIES, CAPS_CHANNELS, CAPS_ROLES, caps_community, large_community

    size = scaled(40, 4), scaled(8, 2), scaled(120, 6)  # roles, categories, channels
    _measured(size, large_community(*size), converge=True)
    if not QUICK:  # the platform's caps (with @everyone and the bot's role, 250 roles; 500 channels): full size only
        caps = CAPS_ROLES, CAPS_CATEGORIES, CAPS_CHANNELS
        _measured(caps, caps_community(), converge=False, label=" (the platform's caps)")


def planned_floors(
    state: dict[str, Any], guild_id: str, config: dict[str, Any], *, prune: bool = False, grants: Sequence[str] = ()
) -> tuple[DeploymentPlan, Floors]:
    """The guild read as the bot reads it (through the sandbox, before the measured requests) and `config` planned on
    it as the worker plans it (a pruning plan here deletes nothing: the measured ones confirm no deletion): the plan,
    and its floors with `grants` (a role key per member grant) beside its steps."""
    from bench.floors import Limits, floors, own_rate  # svcconf: on the path once run() has put it there
    from svcconf.chat import ChatClient
    from svcconf.config import ServerConfig
    from svcconf.deploy_engine.live import read_live_guild
    from svcconf.deploy_engine.plan import plan_deployment
    from svcconf.settings import Settings

    values = {"CHAT_API_BASE_URL": state["chat_api_base_url"], "SVC_BOT_TOKEN": state["bot_token"]}
    settings = Settings.model_validate(values)
    live = read_live_guild(ChatClient(settings), guild_id)
    plan = plan_deployment(live, ServerConfig.model_validate(config, extra="ignore"), prune=prune, confirmed_deletes=[])
    sandbox = state["chat_api_base_url"].removesuffix("/api/v10")
    stats = requests.get(f"{sandbox}/_sandbox/stats", timeout=30).json()["config"]
    limits = Limits.of(stats, own_rate(settings.chat_user_requests_per_second))
    return plan, floors(plan.steps, guild_id, limits, grants)


def _measured(size: tuple[int, int, int], config: dict[str, Any], *, converge: bool, label: str = "") -> None:
    from bench.floors import report

    print(
        f"\nDeploy of {size[0]} roles, {size[1]} categories, {size[2]} channels{label} through make run (starting it)"
    )
    with local_service() as state:
        sandbox = state["chat_api_base_url"].removesuffix("/api/v10")
        sign_in(state, sandbox)
        plan, found = planned_floors(state, BUILD_GUILD, config)
        before = len(requests.get(f"{sandbox}/_sandbox/log", timeout=30).json()["requests"])
        started, accepted, seen, info = _deploy(state, config)
        log = requests.get(f"{sandbox}/_sandbox/log", timeout=30).json()["requests"][before:]
        converged = _converge(state, sandbox) if converge else None
    request_side = [entry for entry in log if entry["time"] < accepted]
    worker = [entry for entry in log if entry["time"] >= accepted]
    routes = [f"{entry['method']} {entry['route']}" for entry in worker]
    roles, channels = routes.count(ROLE_CREATE), routes.count(CHANNEL_CREATE)
    rate_limited = sum(1 for entry in log if entry["status"] == 429)
    overwrites = sum(1 for item in plan.items if item.kind == "overwrite" and item.action == "create")
    minimum = sum(FIRST_DEPLOY_READS.values()) + found.requests  # one write per step (two for a channel's flags)
    span = worker[-1]["time"] - worker[0]["time"] if worker else 0.0
    print(f"  status {info['status']}: {info['generation']['result']}")
    print(f"  the plan: {len(plan.steps)} steps, {found.requests} writes ({overwrites} overwrites in creation bodies)")
    print(f"  platform requests of the request (authorization, preflight reads): {len(request_side)}")
    print(
        f"  platform requests of the worker: {len(worker)} ({sum(1 for r in routes if r.startswith('GET'))} reads:"
        f" {', '.join(sorted({r.split(' ', 1)[1] for r in routes if r.startswith('GET')}))}; {roles} role and"
        f" {channels} channel creations, {routes.count('PATCH /guilds/{guild_id}/roles')} reorder,"
        f" {routes.count('PATCH /guilds/{guild_id}')} name and settings)"
    )
    reads = " + ".join(f"{n} {who} reads" for who, n in FIRST_DEPLOY_READS.items())
    print(f"  minimum: {reads} + {found.requests} writes (one per step, two for a channel whose flags need a modify)")
    report(found, span, len(log), minimum, rate_limited)
    if worker:
        from datetime import datetime

        finished = datetime.fromisoformat(info["finished_at"]).timestamp()
        print(
            f"  the request took {accepted - started:.1f} s; the worker's first platform request came"
            f" {worker[0]['time'] - accepted:.1f} s after it; the deployment was finished"
            f" {finished - worker[-1]['time']:.1f} s after the last"
        )
    print(f"  from the request to the finished status seen by polling: {seen - started:.1f} s")
    if converged is not None:
        _print_converge(*converged)


def _edited(config: dict[str, Any]) -> dict[str, Any]:
    """Five channels renamed, three moved to the next category, one category's text channels reversed, two
    channels and an unused role removed, the server renamed."""
    categories = config["categories"]
    for n, channel in enumerate(categories[0]["channels"][:5]):
        channel["name"] = f"renamed-{n}"
    if len(categories) > 2:
        moved, categories[1]["channels"] = categories[1]["channels"][:3], categories[1]["channels"][3:]
        categories[2]["channels"] = [*moved, *categories[2]["channels"]]
    last = categories[-1]["channels"]
    text = [c for c in last if c["type"] != "voice"]
    last[:] = [*reversed(text), *(c for c in last if c["type"] == "voice")]
    categories[-1]["channels"] = last[:-2]
    used = {o["role"] for c in categories for o in c["overwrites"]}
    used |= {o["role"] for c in categories for ch in c["channels"] for o in ch["overwrites"]}
    config["roles"] = [r for r in config["roles"] if r["name"] in used or r is not config["roles"][-1]]
    config["name"] = f"{config['name']}, renamed"
    return config


def _converge(state: dict[str, Any], sandbox: str) -> tuple[list[dict[str, Any]], dict[str, Any], int, int]:
    """The export edited, its prune dry run, and the deploy with its plan_id: (the plan, the finished info, the
    platform requests of the request, of the worker)."""
    bearer = {"Authorization": f"Bearer {state['user_token']}"}
    url = f"{state['base_url']}/functions/deployToChat"
    exported = requests.post(url, json={"action": "export", "guild_id": BUILD_GUILD}, headers=bearer, timeout=60)
    config = _edited(exported.json()["config"])
    body = {"action": "deploy", "guild_id": BUILD_GUILD, "project_id": "bench", "project_name": "Bench"}
    planned = {**body, "config": config, "dry_run": True, "prune": True}
    dry = requests.post(url, json=planned, headers=bearer, timeout=60)
    assert dry.status_code == 200, dry.text
    before = len(requests.get(f"{sandbox}/_sandbox/log", timeout=30).json()["requests"])
    confirmed = {**body, "config": config, "prune": True, "confirm": dry.json()["plan_id"]}
    accepted, info = _queued_until_finished(url, confirmed, bearer)
    log = requests.get(f"{sandbox}/_sandbox/log", timeout=30).json()["requests"][before:]
    worker = sum(1 for entry in log if entry["time"] >= accepted)
    return dry.json()["plan"], info, len(log) - worker, worker


def _print_converge(plan: list[dict[str, Any]], info: dict[str, Any], request_side: int, worker: int) -> None:
    changed = [i for i in plan if i["action"] == "update" and any(c["field"] != "position" for c in i["changes"])]
    deleted = [i for i in plan if i["action"] == "delete"]
    created = [i for i in plan if i["action"] == "create" and i["kind"] != "overwrite"]
    reordered = [i for i in plan if any(c["field"] == "position" for c in i["changes"])]
    orders = {"role" if i["kind"] == "role" else "channel" for i in reordered}
    minimum = MINIMUM_READS + len(changed) + len(deleted) + len(orders)
    kinds = sorted({c["field"] for i in changed for c in i["changes"]})
    print("\nThe same server edited (renames, moves, a reversed order, prune, a new name), dry run + confirmed deploy:")
    print(f"  status {info['status']}: {info['generation']['result']}")
    print(
        f"  the plan: {len(changed)} objects changed ({', '.join(kinds)}), {len(deleted)} deleted,"
        f" {len(orders)} bulk order request(s); objects created: {len(created)}"
    )
    print(f"  platform requests of the request: {request_side}; of the worker: {worker}")
    print(
        f"  minimum ({MINIMUM_READS} reads + {len(changed)} changes + {len(deleted)} deletes"
        f" + {len(orders)} orders): {minimum};"
        f" over it: {request_side + worker - minimum:+d} in all, {worker - minimum:+d} for the worker"
    )
