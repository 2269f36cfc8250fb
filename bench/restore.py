"""The nuke of issue 30, through `make run` and the bot's calls only: a guild of 40 roles, 10 categories, 150
channels and 200 members holding roles (BENCH_QUICK: 10, 2, 20, 20) is backed up by a schedule (fired by the runner
once the sandbox's clock passes it) and by hand (manageBackup `create` from the live server); a second actor, a
moderator, deletes 60 % of its roles and channels (categories included), renames one in five and strips every
other member's roles (bench/nuke.py); manageBackup `diff` against the live server must list exactly that; the
restore's dry run, then the restore confirmed (`prune` with the dry run's `plan_id`), polled through manageBackup
`info` to its end.

Asserted: the diff's items and member entries are the nuke's; after the restore, deployToChat `export` equals the
backup's configuration, ids aside (that read is the checker's, made with a signed-in user's bearer: the restore
itself is the bot's alone); every member still in the server holds the roles they held (read from the sandbox);
`steps.members` counts the grants; the platform answered no 429. Then the nuker renames a re-created channel and the
same backup is restored again: it renames it back and creates nothing (the guild's id map).

Printed: the restore's wall time (confirmed to finished), its platform requests (the sandbox's request log, the
bot's, from the confirming request to the end) by route beside their minimum, the 429s, and the members' grants per
second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import requests

from bench import nuke
from bench.deploy import ALICE, BUILD_GUILD, planned_floors, sign_in
from bench.quick import scaled
from bench.service import ROOT, local_service

if TYPE_CHECKING:
    from bench.floors import Floors

GUILD = BUILD_GUILD  # Alice's Build Lab: empty, a Community server; Alice owns it, the bot holds all but ADMINISTRATOR
# roles, categories, channels, members: 3,100 members lose 5,007 roles to the nuke (a member-role bucket's 500 s)
SIZE = scaled(40, 10), scaled(10, 2), scaled(150, 20), scaled(3100, 20)
HOUR = 3600.0
FINISHED = ("succeeded", "partial", "failed", "cancelled")
GRANT = "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"
MEMBER_READ = "GET /guilds/{guild_id}/members/{user_id}"
MEMBER_LIST = "GET /guilds/{guild_id}/members"
# What the request reads and the worker reads again when it plans (docs/05-deploy-engine.md): the guild with its
# roles, its channels, the bot's member, the caller's member, and v4's AutoMod rules, onboarding and welcome screen
# (a Community server's)
LIVE_READS = 7


class Bot:
    """manageBackup as the bot calls it: its key, nothing else."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.url = f"{state['base_url']}/functions/manageBackup"
        self.headers = {"x-bot-token": state["bot_token"]}

    def __call__(self, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        answer = requests.post(self.url, json=body, headers=self.headers, timeout=120)
        assert answer.status_code == status, f"{body['action']}: {answer.status_code} {answer.text}"
        return dict(answer.json())


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]
    print(
        "\nNuke and restore: {} roles, {} categories, {} channels, {} members through make run (starting it)".format(
            *SIZE
        )
    )
    began = time.monotonic()
    with local_service() as state:
        sandbox = state["chat_api_base_url"].removesuffix("/api/v10")
        bot, bot_id = Bot(state), requests.get(f"{sandbox}/_sandbox/users", timeout=30).json()["bot"]["id"]
        print(f"  make run answered after {time.monotonic() - began:.1f} s")
        built = nuke.build(sandbox, GUILD, ALICE, SIZE)
        backup = _backups(bot, sandbox)
        before = nuke.view(sandbox, GUILD)
        with _lifted(sandbox, nuke.MEMBER_ROLE_REMOVE):  # the nuker's pace is not measured: its removals at once
            done = nuke.nuke(sandbox, GUILD, built)
        after = nuke.view(sandbox, GUILD)
        lost = nuke.lost_roles(before, after, bot_id)
        print(
            f"  the nuker: {len(done.deleted_roles)} roles and {len(done.deleted_channels)} channels deleted,"
            f" {len(done.renamed)} renamed, {sum(map(len, done.stripped.values()))} roles taken from"
            f" {len(done.stripped)} members ({done.requests} requests)"
        )
        _check_diff(bot({"action": "diff", "backup_id": backup, "user_id": ALICE}), built, done, before, after, lost)

        planned = bot(_restore(backup, dry_run=True))
        grants = sum(map(len, lost.values()))
        assert planned["members"] == {"planned": grants, "left_server": 0, "dangerous": []}, planned["members"]
        creates = [i for i in planned["plan"] if i["action"] == "create" and i["kind"] != "overwrite"]
        print(f"  dry run: {len(planned['plan'])} plan items, {len(creates)} creations, members {planned['members']}")
        found = _floors(state, bot, backup, lost, len(creates))
        outcome = _restored(bot, sandbox, _restore(backup, prune=True, confirm=planned["plan_id"]))
        info = outcome[0]
        assert info["status"] == "succeeded", info
        assert info["steps"]["members"] == {
            "planned": grants,
            "granted": grants,
            "left_server": 0,
            "failed": 0,
            "removed": 0,
        }, info["steps"]["members"]
        restored = nuke.view(sandbox, GUILD)
        assert nuke.held_names(restored) == nuke.held_names(before), "every member holds the roles they held"
        _same_configuration(state, sandbox, bot, backup)
        limits = requests.get(f"{sandbox}/_sandbox/stats", timeout=30).json()["config"]["route_limits"]
        minimum = _minimum(built, done, before, after, grants, _invocations(outcome[2], outcome[3]))
        _print_restore(outcome, minimum, limits, found)

        _again(bot, sandbox, built, backup)


@contextmanager
def _lifted(sandbox: str, route: str) -> Iterator[None]:
    """`route`'s limit lifted for the block (a second actor's requests, not measured), then restored."""
    limits = requests.get(f"{sandbox}/_sandbox/stats", timeout=30).json()["config"]["route_limits"]
    assert requests.post(f"{sandbox}/_sandbox/config", json={"route_limits": {route: [1000, 1.0]}}, timeout=30).ok
    try:
        yield
    finally:
        assert requests.post(f"{sandbox}/_sandbox/config", json={"route_limits": limits}, timeout=30).ok


def _floors(state: dict[str, Any], bot: Bot, backup_id: str, lost: dict[str, set[str]], creations: int) -> Floors:
    """The restore's plan as the worker makes it (the backup's configuration on the nuked guild, pruning with no
    deletion confirmed: the nuker made nothing), and its floors with the members' grants beside its steps."""
    from svcconf.deploy_engine.steps import role_key

    data = bot({"action": "get", "backup_id": backup_id, "guild_id": GUILD})["data"]["backup_data"]
    grants = [role_key(name) for names in lost.values() for name in sorted(names)]
    plan, found = planned_floors(state, GUILD, data, prune=True, grants=grants)
    made = [item for item in plan.items if item.action == "create" and item.kind != "overwrite"]
    assert len(made) == creations, f"the bench's plan creates {len(made)}, the dry run's {creations}"
    return found


def _backups(bot: Bot, sandbox: str) -> str:
    """A schedule fired once by the runner, and a manual backup of the same server: the manual backup's id."""
    bot({"action": "schedule", "guild_id": GUILD, "every_hours": 1, "keep": 3, "user_id": ALICE})
    moved = requests.post(f"{sandbox}/_sandbox/clock", json={"advance_seconds": 1.01 * HOUR}, timeout=30)
    assert moved.status_code == 200, moved.text
    deadline = time.monotonic() + 120
    while (schedule := bot({"action": "list", "guild_id": GUILD})["schedule"])["last_run_at"] is None:
        assert time.monotonic() < deadline, f"the schedule did not fire: {schedule}"
        time.sleep(0.5)
    assert schedule["last_result"]["outcome"] == "stored", schedule
    manual = bot({"action": "create", "guild_id": GUILD, "user_id": ALICE, "label": "before the nuke"}, 201)["data"]
    listed = {b["backup_id"]: b for b in bot({"action": "list", "guild_id": GUILD})["backups"]}
    scheduled = listed[schedule["last_result"]["backup_id"]]
    assert (scheduled["kind"], listed[manual["backup_id"]]["kind"]) == ("scheduled", "manual"), listed
    assert scheduled.get("digest") in (None, manual["digest"]), "the same server, the same content"
    print(
        f"  backups: scheduled {scheduled['backup_id']} (fired by the runner), manual {manual['backup_id']}:"
        f" {manual['roles_count']} roles, {manual['channels_count']} channels, {manual['members_count']} members"
        f" holding roles, {manual['size_bytes']:,} bytes stored"
    )
    return str(manual["backup_id"])


def _restore(backup_id: str, **options: Any) -> dict[str, Any]:
    return {"action": "restore", "backup_id": backup_id, "guild_id": GUILD, "user_id": ALICE, **options}


def _restored(
    bot: Bot, sandbox: str, body: dict[str, Any]
) -> tuple[dict[str, Any], float, list[dict[str, Any]], float]:
    """The restore confirmed and polled through `info` to its end: (its info, the seconds from the request to the
    end seen, the bot's platform requests meanwhile, when the request was accepted: the worker's requests after)."""
    first = len(_log(sandbox))
    started = time.monotonic()
    deployment_id = bot(body, 202)["deployment_id"]
    accepted = time.time()
    deadline = started + 1800  # 5,000 grants at the member-role bucket's 10 a second take 500 s at least
    while (info := bot({"action": "info", "deployment_id": deployment_id}))["status"] not in FINISHED:
        assert time.monotonic() < deadline, f"the restore did not end: {info}"
        time.sleep(0.25)
    seconds = time.monotonic() - started
    return info, seconds, [entry for entry in _log(sandbox)[first:] if entry["auth"] == "Bot"], accepted


def _log(sandbox: str) -> list[dict[str, Any]]:
    return list(requests.get(f"{sandbox}/_sandbox/log", timeout=60).json()["requests"])


def _check_diff(
    diff: dict[str, Any],
    built: nuke.Built,
    done: nuke.Nuke,
    before: dict[str, Any],
    after: dict[str, Any],
    lost: dict[str, set[str]],
) -> None:
    """The diff lists the nuke: a creation per deleted object and overwrite, an update per renamed object and per
    channel left without its category; position-only updates are the platform renumbering what was left."""
    names = {c["id"]: c["name"] for c in before["channels"]} | {r["id"]: r["name"] for r in before["roles"]}
    parents = {c["id"]: c["parent_id"] for c in before["channels"]}
    label = {c: names[c] if parents[c] is None else f"{names[parents[c]]} / {names[c]}" for c in built.channels}
    kinds = {c["id"]: "category" if c["type"] == 4 else "channel" for c in before["channels"]}
    expected = {("role", names[r]) for r in done.deleted_roles} | {(kinds[c], label[c]) for c in done.deleted_channels}
    items = diff["changes"]
    created = {(i["kind"], i["name"]) for i in items if i["action"] == "create" and i["kind"] != "overwrite"}
    assert created == expected, f"created {sorted(created ^ expected)}"
    overwrites = sum(1 for i in items if i["action"] == "create" and i["kind"] == "overwrite")
    assert overwrites == nuke.lost_overwrites(before, after), overwrites
    updates = [i for i in items if i["action"] == "update"]
    changed = {i["id"]: {c["field"] for c in i["changes"]} - {"position"} for i in updates}
    orphans = nuke.orphans(built, done, after)
    assert {k for k, fields in changed.items() if fields} == set(done.renamed) | orphans, changed
    for item in updates:
        if item["id"] in done.renamed:
            assert {"field": "name", "old": done.renamed[item["id"]], "new": names[item["id"]]} in item["changes"]
    assert not [i for i in items if i["action"] == "delete"], "the nuker made nothing"
    members = {m["user_id"]: set(m["missing"]) for m in diff["members"]}
    assert members == lost, "the member entries: the roles each member lacks"
    assert not any(m["extra"] for m in diff["members"]), "nobody holds a role the backup did not give them"
    print(
        f"  diff against the live server: {diff['counts']}: {len(expected)} objects to re-create and"
        f" {overwrites} overwrites, {len(done.renamed)} renamed and {len(orphans)} channels left without their"
        f" category to update (+{sum(1 for f in changed.values() if not f)} position-only updates), and"
        f" {len(members)} members lacking {sum(map(len, lost.values()))} roles: exactly the nuke"
    )


def _invocations(log: list[dict[str, Any]], accepted: float) -> int:
    """The worker's invocations: each reads the guild once when it plans."""
    return sum(1 for e in log if e["time"] >= accepted and f"{e['method']} {e['route']}" == "GET /guilds/{guild_id}")


def _minimum(
    built: nuke.Built,
    done: nuke.Nuke,
    before: dict[str, Any],
    after: dict[str, Any],
    grants: int,
    invocations: int = 1,
) -> dict[str, int]:
    """The fewest platform requests a restore of this nuke can make, by part (the request and the worker), when the
    worker runs in `invocations` Lambda invocations (300 s each, the last 30 s left for the next: 5,000 grants need
    two). A later invocation's grants resume within a member-list page: reading it again may cost one page more."""
    members_now = len(after["members"])
    minimum = {
        # the bot's own member once: it is kept for the process's life, and make run's functions share one process
        # (Lambda's request and worker containers would read it once each)
        "live reads (request + worker)": 2 * LIVE_READS - 1,
        # who still lacks a dangerous role (the moderator, whom the backup gave ADMINISTRATOR): the request reads the
        # member list up to them
        "member list page read by the request": 1,
        "creations (one per deleted role, category, channel)": len(done.deleted_roles) + len(done.deleted_channels),
        "updates (one per object renamed, left without its category, or without an overwrite)": len(
            set(done.renamed) | nuke.orphans(built, done, after) | nuke.stripped_channels(before, after)
        ),
        "positions (one role order: new roles land at the bottom)": 1,
        "member list pages of 1,000 read by the worker": members_now // 1000 + 1,  # a full last page asks again
        "grants (one per role a member lacks)": grants,
    }
    if invocations > 1:  # each later one reads the live guild again (the bot's member kept in the record)
        minimum[f"live reads again by the worker's {invocations - 1} later invocation(s)"] = (invocations - 1) * (
            LIVE_READS - 1
        )
    return minimum


def _print_restore(
    restored: tuple[dict[str, Any], float, list[dict[str, Any]], float],
    minimum: dict[str, int],
    limits: dict[str, Any],
    found: Floors,
) -> None:
    from bench.floors import report

    info, seconds, log, accepted = restored
    routes = [f"{e['method']} {e['route']}" for e in log]
    limited = [e for e in log if e["status"] == 429]
    grants = [e["time"] for e in log if f"{e['method']} {e['route']}" == GRANT and e["status"] == 204]
    span = grants[-1] - grants[0] if len(grants) > 1 else 0.0
    print(f"  restore: {info['status']} in {seconds:.1f} s (the confirming request to the end seen through info)")
    print(f"  steps.members {info['steps']['members']}")
    print(f"  platform requests: {len(log)}, minimum {sum(minimum.values())}:")
    for part, count in minimum.items():
        print(f"    {count:>5}  {part}")
    alone = [e["path"].rsplit("/", 1)[-1] for e in log if f"{e['method']} {e['route']}" == MEMBER_READ]
    pages = [e["query"] for e in log if f"{e['method']} {e['route']}" == MEMBER_LIST]
    print(f"  member reads: {len(pages)} list page(s) {pages}, {len(alone)} member(s) read alone {alone}")
    for route in sorted(set(routes)):
        print(f"    {routes.count(route):>5}  {route}")
    print(f"  429s: {len(limited)} ({', '.join(sorted({e['route'] for e in limited})) or 'none'})")
    if span:
        print(
            f"  members' grants: {len(grants)} in {span:.1f} s, {len(grants) / span:.1f} per second"
            " (the platform's member-role limit: {} per {:g} s)".format(*limits[GRANT])
        )
    worker = [e["time"] for e in log if e["time"] >= accepted]
    report(found, worker[-1] - worker[0] if worker else 0.0, len(log), sum(minimum.values()), len(limited))
    assert not limited, f"{len(limited)} requests answered 429"
    resumed = _invocations(log, accepted) - 1  # each may read its member page again
    assert 0 <= len(log) - sum(minimum.values()) <= resumed, f"{len(log)} requests, {sum(minimum.values())} at least"
    writes = {  # each at its minimum
        "creations": sum(1 for r in routes if r.startswith("POST")),
        "updates": routes.count("PATCH /channels/{channel_id}")
        + routes.count("PATCH /guilds/{guild_id}/roles/{role_id}"),
        "positions": routes.count("PATCH /guilds/{guild_id}/roles") + routes.count("PATCH /guilds/{guild_id}/channels"),
        "grants": routes.count(GRANT),
    }
    least = {part.split()[0]: count for part, count in minimum.items() if part.split()[0] in writes}
    assert writes == least, f"writes {writes}, minimum {least}"


def _same_configuration(state: dict[str, Any], sandbox: str, bot: Bot, backup_id: str) -> None:
    """The checker's read (a signed-in user's export): the server is the backup's configuration, ids aside."""
    bearer = sign_in(state, sandbox)
    url = f"{state['base_url']}/functions/deployToChat"
    exported = requests.post(url, json={"action": "export", "guild_id": GUILD}, headers=bearer, timeout=120)
    assert exported.status_code == 200, exported.text
    data = bot({"action": "get", "backup_id": backup_id, "guild_id": GUILD})["data"]["backup_data"]
    config = exported.json()["config"]
    kept = {key: value for key, value in data.items() if key in config}
    assert _without_ids(config) == _without_ids(kept), "the export equals the backup's configuration"
    left = sorted(set(data) - set(config))
    assert left == ["administrator_ids", "members", "owner_id"], left  # a backup's own keys, beside the configuration
    print(f"  export after the restore == the backup's configuration, ids aside (the backup also holds {left})")


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def _again(bot: Bot, sandbox: str, built: nuke.Built, backup_id: str) -> None:
    """A re-created channel renamed by the nuker, and the same backup restored again: a rename back, no creation."""
    channel = next(c for c in nuke.view(sandbox, GUILD)["channels"] if c["name"] == "room-0-0")
    assert channel["id"] not in built.channels, "room-0-0 was re-created"
    nuke.rename(sandbox, built.nuker, channel["id"], "nuked-again")
    planned = bot(_restore(backup_id, dry_run=True))
    changed = [(i["kind"], i["name"], i["action"]) for i in planned["plan"] if i["action"] != "keep"]
    assert changed == [("channel", "Area 0 / room-0-0", "update")], changed
    info, seconds, log, _ = _restored(bot, sandbox, _restore(backup_id))
    routes = [f"{e['method']} {e['route']}" for e in log]
    creations = [r for r in routes if r.startswith("POST")]
    assert info["status"] == "succeeded", info
    assert not creations, creations
    assert any(c["name"] == "room-0-0" for c in nuke.view(sandbox, GUILD)["channels"] if c["id"] == channel["id"])
    writes = [r for r in routes if not r.startswith("GET")]
    print(
        f"  the same backup again after a rename of re-created room-0-0: {info['status']} in {seconds:.1f} s, "
        f"{len(log)} platform requests ({len(writes)} write: {', '.join(writes)}), 0 creations"
    )
