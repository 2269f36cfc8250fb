"""Load through `make run`: 2,000 requests at 50 concurrent across the operations, on loopback.

The mix: the bot's manageBackup create, list and get and getConfigByCode; a signed-in user's validateChatInvite
against the sandbox's invites, getChatGuilds, and deployToChat info and dry runs. Afterwards every backup that
was created is listed and fetched again ("lost" when either fails or its data differs).

Printed: requests, concurrency, wall time and throughput, 5xx, 429, other unexpected statuses, backups created
and lost, p50 and p99 latency in all and per operation, and the worker processes each function ran.
"""

from __future__ import annotations

import itertools
import os
import random
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests

from bench.quick import scaled
from bench.service import local_service

# The user's platform reads, and the users' share of the bot's rate (0: none kept), lifted: see run().
LIFTED_LIMITS = {"SVC_PLATFORM_READS_PER_MINUTE": "1000000", "CHAT_USER_REQUESTS_PER_SECOND": "0"}

REQUESTS = int(os.environ.get("LOAD_REQUESTS") or scaled(2000, 40))
CONCURRENCY = int(os.environ.get("LOAD_CONCURRENCY") or scaled(50, 5))
DEADLINE_SECONDS = 600  # the run stops sending after this, whatever is left
REQUEST_TIMEOUT_SECONDS = 60
ALICE = "1191000000000000101"
DEMO_GUILD = "1191000000000001001"  # alice owns it
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
GUILDS = [str(1_300_000_000_000_000_000 + index) for index in range(40)]  # 40 guilds: no retention pruning
INVITES = ["svcDemo", "Temp2026x", "https://discord.gg/Old2024y", "noSuchInvite"]
DRY_RUN_CONFIG = {
    "name": "Load",
    "roles": [{"name": "Load Tester", "permissions": ["SEND_MESSAGES"]}],
    "categories": [{"name": "Load", "channels": [{"name": "load-chat", "type": "text"}]}],
    "channels": [],
}
# Answers the operations give to this mix when the service works; anything else is counted as unexpected.
EXPECTED = {
    "manageBackup create": {201},
    "manageBackup list": {200},
    "manageBackup get": {200},
    "getConfigByCode": {200},
    "validateChatInvite": {200},
    "getChatGuilds": {200},
    "deployToChat info": {404},
    "deployToChat dry_run": {200},
}
MIX = [  # one round of the mix; creates come first so that gets find backups
    "manageBackup create",
    "getConfigByCode",
    "manageBackup list",
    "validateChatInvite",
    "manageBackup get",
    "getChatGuilds",
    "manageBackup create",
    "deployToChat info",
    "manageBackup get",
    "deployToChat dry_run",
]


@dataclass
class Result:
    name: str
    status: int
    seconds: float


class Load:
    def __init__(self, state: dict[str, Any]):
        self.state = state
        self.bot = {"x-bot-token": state["bot_token"]}
        self.bearer = {"Authorization": f"Bearer {state['user_token']}"}
        self.created: dict[str, tuple[str, dict[str, Any]]] = {}  # backup_id -> (guild_id, backup_data)
        self.lock = threading.Lock()
        self.random = random.Random(2026)
        self.local = threading.local()

    def session(self) -> requests.Session:
        if not hasattr(self.local, "session"):
            self.local.session = requests.Session()  # one keep-alive connection per caller, as a client pool has
        session: requests.Session = self.local.session
        return session

    def post(self, operation: str, body: dict[str, Any], headers: dict[str, str]) -> requests.Response:
        url = f"{self.state['base_url']}/functions/{operation}"
        return self.session().post(url, json=body, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)

    def link_user(self) -> None:
        """Alice linked as a web app links her (v4): a sign-in's state, a code for its PKCE challenge, the exchange."""
        sandbox = self.state["chat_api_base_url"].removesuffix("/api/v10")
        started = self.post("chatAuth", {"redirect_uri": REDIRECT_URI, "replace": True}, self.bearer).json()
        challenge = parse_qs(urlsplit(started["authorize_url"]).query)["code_challenge"][0]
        minted = {"user_id": ALICE, "redirect_uri": REDIRECT_URI, "code_challenge": challenge}
        code = requests.post(f"{sandbox}/_sandbox/oauth/codes", json=minted, timeout=30).json()["code"]
        body = {"code": code, "redirect_uri": REDIRECT_URI, "state": started["state"]}
        linked = self.post("chatAuth", body, self.bearer)
        assert linked.status_code == 200, linked.text

    def request(self, index: int, name: str) -> Result:
        with self.lock:
            guild = self.random.choice(GUILDS)
            known = list(self.created.items())
            picked = self.random.choice(known) if known else None
        if name == "manageBackup get" and picked is None:
            name = "manageBackup list"
        started = time.perf_counter()
        if name == "manageBackup create":
            data = {"roles": [{"name": f"Role {index}"}], "channels": [{"name": f"c{index}", "type": "text"}]}
            response = self.post("manageBackup", {"action": "create", "guild_id": guild, "backup_data": data}, self.bot)
            if response.status_code == 201:
                with self.lock:
                    self.created[response.json()["data"]["backup_id"]] = (guild, data)
        elif name == "manageBackup list":
            response = self.post("manageBackup", {"action": "list", "guild_id": guild}, self.bot)
        elif name == "manageBackup get":
            assert picked is not None
            response = self.post("manageBackup", {"action": "get", "backup_id": picked[0]}, self.bot)
        elif name == "getConfigByCode":
            response = self.post("getConfigByCode", {"code": self.state["sample_code"]}, self.bot)
        elif name == "validateChatInvite":
            response = self.post("validateChatInvite", {"invite": INVITES[index % len(INVITES)]}, self.bearer)
        elif name == "getChatGuilds":
            response = self.post("getChatGuilds", {}, self.bearer)
        elif name == "deployToChat info":
            response = self.post("deployToChat", {"action": "info", "project_id": "load-none"}, self.bearer)
        else:
            body = {
                "action": "deploy",
                "dry_run": True,
                "guild_id": DEMO_GUILD,
                "project_id": "load",
                "project_name": "Load",
                "config": DRY_RUN_CONFIG,
            }
            response = self.post("deployToChat", body, self.bearer)
        return Result(name, response.status_code, time.perf_counter() - started)

    def lost_backups(self) -> list[str]:
        """Backups created during the run that a list of their guild or a get does not return as stored."""
        by_guild: dict[str, set[str]] = defaultdict(set)
        for backup_id, (guild, _) in self.created.items():
            by_guild[guild].add(backup_id)
        lost = []
        for guild, ids in by_guild.items():
            listed = self.post("manageBackup", {"action": "list", "guild_id": guild}, self.bot)
            found = {backup["backup_id"] for backup in listed.json().get("backups", [])}
            lost += sorted(ids - found)
        for backup_id, (_, data) in self.created.items():
            fetched = self.post("manageBackup", {"action": "get", "backup_id": backup_id}, self.bot)
            if fetched.status_code != 200 or fetched.json()["data"]["backup_data"] != data:
                lost.append(backup_id)
        return sorted(set(lost))


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else 0.0


def _line(label: str, results: list[Result]) -> str:
    seconds = [result.seconds * 1000 for result in results]
    statuses = Counter(result.status for result in results)
    p50, p99 = _percentile(seconds, 0.5), _percentile(seconds, 0.99)
    return (
        f"  {label:<22} {len(results):>5}  p50 {p50:>7.0f} ms  p99 {p99:>7.0f} ms"
        f"  max {max(seconds, default=0):>7.0f} ms  statuses {dict(sorted(statuses.items()))}"
    )


def _sandbox_processes(pid: int) -> Counter[str]:
    """The runner's worker processes per function, from /proc (Linux): how far each function scaled out."""
    found: Counter[str] = Counter()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b"spawn_main" in command:
            found["worker processes"] += 1
    return found


def run() -> None:
    print(f"\nLoad: {REQUESTS} requests at {CONCURRENCY} concurrent through make run (starting the runner) ...")
    # One user sends every request here, 50 at once: the limits (docs/07-operations.md, Limits) would answer most
    # of them 429 or 503, and this measures the service's machinery, not the limits (bench.fair_use does).
    with local_service(LIFTED_LIMITS) as state:
        load = Load(state)
        load.link_user()
        names = list(itertools.islice(itertools.cycle(MIX), REQUESTS))
        deadline = time.monotonic() + DEADLINE_SECONDS
        results: list[Result] = []

        def one(index: int) -> Result | None:
            if time.monotonic() > deadline:
                return None
            try:
                return load.request(index, names[index])
            except requests.RequestException as exc:
                print(f"  request {index} ({names[index]}) failed: {type(exc).__name__}")
                return Result(names[index], 0, REQUEST_TIMEOUT_SECONDS)

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            results = [result for result in pool.map(one, range(REQUESTS)) if result is not None]
        wall = time.perf_counter() - started
        processes = _sandbox_processes(int(state["pid"]))
        lost = load.lost_backups()
    statuses = Counter(result.status for result in results)
    unexpected = [r for r in results if r.status not in EXPECTED[r.name] and r.status < 500 and r.status != 429]
    print(
        f"  requests {len(results)} of {REQUESTS}, concurrency {CONCURRENCY}, wall {wall:.1f} s,"
        f" {len(results) / wall:.0f} requests/s"
    )
    print(
        f"  5xx {sum(count for status, count in statuses.items() if status >= 500)}, 429 {statuses[429]},"
        f" unexpected other {len(unexpected)}, no answer {statuses[0]}"
    )
    print(f"  backups created {len(load.created)}, lost {len(lost)}")
    print(_line("all", results))
    by_name: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_name[result.name].append(result)
    for name in MIX:
        if name in by_name:
            print(_line(name, by_name.pop(name)))
    print(f"  worker processes at the end: {processes['worker processes']} (all functions)")
