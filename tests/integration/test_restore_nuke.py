"""The nuke, at size, through the bot's calls: a guild of 40 roles, 10 categories, 150 channels and 200 members
holding roles is backed up; a second actor deletes 60 % of the roles and channels, renames others and strips every
member's roles; manageBackup `diff` lists exactly that; the restore (dry run, then for real) brings back the
configuration (ids aside) and every member's roles; a second restore after a rename renames back, creating nothing.
The wall time, the platform's requests against the minimum, and the grants per second are printed."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

import pytest

from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import ALICE, DeployQueue, link, without_ids, writes
from tests.helpers.rollbacks import call

ROLES, CATEGORIES, PER_CATEGORY, MEMBERS = 40, 10, 15, 200
BOT_ROLE = "1191000000000002051"
SEND, VIEW = 1 << 11, 1 << 10


def _id(kind: int, n: int) -> str:
    return f"11920000000{kind}{n:06d}"


def build(platform: Any) -> None:
    """The guild as a person built it by hand: roles below the bot's, categories of channels with overwrites."""
    rng = random.Random(5)
    guild = platform.guilds[BUILD_GUILD]
    with platform.lock:
        guild["roles"][BOT_ROLE]["position"] = ROLES + 1
        for n in range(ROLES):
            role = {"id": _id(1, n), "name": f"role-{n:02d}", "permissions": str(SEND if n % 2 else VIEW | SEND)}
            guild["roles"][role["id"]] = {
                **role,
                "position": ROLES - n,
                "color": rng.randrange(0, 1 << 24),
                "hoist": n % 3 == 0,
                "mentionable": False,
                "managed": False,
            }
        for c in range(CATEGORIES):
            category = {"id": _id(2, c), "name": f"Area {c}", "type": 4, "position": c, "parent_id": None}
            guild["channels"][category["id"]] = {**category, "permission_overwrites": [], "guild_id": BUILD_GUILD}
            platform.channel_guild[category["id"]] = BUILD_GUILD
            for k in range(PER_CATEGORY):
                n = c * PER_CATEGORY + k
                overwrites = (
                    [{"id": _id(1, n % ROLES), "type": 0, "allow": str(SEND), "deny": "0"}] if k % 4 == 0 else []
                )
                channel = {
                    "id": _id(3, n),
                    "name": f"room-{n:03d}",
                    "type": 0,
                    "position": k,
                    "parent_id": category["id"],
                    "topic": f"Topic {n}",
                    "nsfw": False,
                    "rate_limit_per_user": 0,
                    "permission_overwrites": overwrites,
                    "guild_id": BUILD_GUILD,
                }
                guild["channels"][channel["id"]] = channel
                platform.channel_guild[channel["id"]] = BUILD_GUILD
        for m in range(MEMBERS):
            user_id = _id(4, m)
            platform.users[user_id] = {"id": user_id, "username": f"member{m}", "discriminator": "0"}
            held = sorted({_id(1, rng.randrange(ROLES)) for _ in range(1 + m % 3)})
            guild["members"][user_id] = {"roles": held, "joined_at": 0, "nick": None}


def nuke(platform: Any) -> dict[str, set[str]]:
    """A second actor: 60 % of the roles and of the channels (categories included) deleted, 5 channels and 3 roles
    renamed, every member's roles stripped. What it did, by name."""
    guild = platform.guilds[BUILD_GUILD]
    with platform.lock:
        doomed_roles = [_id(1, n) for n in range(0, ROLES, 5) for n in (n, n + 1, n + 2)][: int(ROLES * 0.6)]
        channels = [c for c in guild["channels"].values() if c["id"].startswith("11920000000")]
        doomed_channels = [c["id"] for c in channels][::5] + [c["id"] for c in channels if c["type"] == 4][:6]
        doomed_channels = list(dict.fromkeys(doomed_channels))
        doomed_channels += [c["id"] for c in channels if c["id"] not in doomed_channels][: int(len(channels) * 0.6)]
        doomed_channels = doomed_channels[: int(len(channels) * 0.6)]
        deleted = {
            "roles": {guild["roles"][r]["name"] for r in doomed_roles},
            "channels": {guild["channels"][c]["name"] for c in doomed_channels},
        }
        for role_id in doomed_roles:
            del guild["roles"][role_id]
        for channel_id in doomed_channels:
            del guild["channels"][channel_id]
        for channel in guild["channels"].values():
            channel["permission_overwrites"] = [
                o for o in channel["permission_overwrites"] if o["id"] not in doomed_roles
            ]
            if channel.get("parent_id") in doomed_channels:
                channel["parent_id"] = None
        kept_channels = [c for c in guild["channels"].values() if c["id"].startswith("11920000000") and c["type"] == 0]
        renamed = {c["name"] for c in kept_channels[:5]}
        for channel in kept_channels[:5]:
            channel["name"] += "-renamed"
        kept_roles = [r for r in guild["roles"].values() if r["id"].startswith("119200000001")]
        renamed_roles = {r["name"] for r in kept_roles[:3]}
        for role in kept_roles[:3]:
            role["name"] += " (renamed)"
        for user_id, member in guild["members"].items():
            if user_id.startswith("119200000004"):
                member["roles"] = []
    return {**deleted, "renamed": renamed, "renamed_roles": renamed_roles}


def bot(invoke: Any, body: dict[str, Any]) -> Any:
    return invoke("manageBackup", body)


@pytest.fixture
def nuked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction", "ManageBackupFunction")
    link(invoke, platform)
    build(platform)
    exported = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    members = platform.guilds[BUILD_GUILD]["members"]
    data = {
        **exported,
        "members": [{"user_id": u, "roles": m["roles"]} for u, m in members.items() if u.startswith("119200000004")],
        "owner_id": ALICE,
        "administrator_ids": [],
    }
    created = bot(invoke, {"action": "create", "guild_id": BUILD_GUILD, "backup_data": data, "label": "manual"})
    assert created.status == 201, created.body
    held = {u: sorted(m["roles"]) for u, m in members.items() if u.startswith("119200000004")}
    return created.body["data"]["backup_id"], exported, held, nuke(platform)


def test_the_nuke_is_diffed_exactly_and_restored_with_every_members_roles(invoke, platform, nuked, aws):
    backup_id, exported, held_before, done = nuked
    restore = {"action": "restore", "backup_id": backup_id, "guild_id": BUILD_GUILD, "user_id": ALICE}

    diff = bot(invoke, {"action": "diff", "backup_id": backup_id, "user_id": ALICE}).body
    created = {
        c["name"].split(" / ")[-1] for c in diff["changes"] if c["action"] == "create" and c["kind"] != "overwrite"
    }
    assert created == done["roles"] | done["channels"]
    names = {
        c["name"].split(" / ")[-1]
        for c in diff["changes"]
        if c["action"] == "update" and any(change["field"] == "name" for change in c["changes"])
    }
    assert names == done["renamed"] | done["renamed_roles"]
    assert [c for c in diff["changes"] if c["action"] == "delete"] == []
    assert diff["counts"]["members"] == sum(1 for roles in held_before.values() if roles)

    planned = bot(invoke, {**restore, "dry_run": True}).body
    assert planned["status"] == "planned", planned
    lacking = sum(len(roles) for roles in held_before.values())
    assert planned["members"] == {"planned": lacking, "left_server": 0, "dangerous": []}
    platform.clear_log()
    started = time.monotonic()
    queued = bot(invoke, {**restore, "confirm": planned["plan_id"]})
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    wall = time.monotonic() - started
    info = bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]}).body

    assert info["status"] == "succeeded", info
    assert info["steps"]["members"] == {
        "planned": lacking,
        "granted": lacking,
        "left_server": 0,
        "failed": 0,
        "removed": 0,
    }
    after = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    assert without_ids(after) == without_ids(exported)
    members = platform.guilds[BUILD_GUILD]["members"]
    role_names_now = {r["id"]: r["name"] for r in platform.guilds[BUILD_GUILD]["roles"].values()}
    role_names_then = {r["id"]: r["name"] for r in exported["roles"]}
    for user_id, roles in held_before.items():
        assert sorted(role_names_now[r] for r in members[user_id]["roles"]) == sorted(role_names_then[r] for r in roles)
    requests = Counter(f"{method} {route}" for method, route in writes(platform))
    grants = requests["PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"]
    least = len(done["roles"]) + len(done["channels"]) + len(done["renamed"]) + len(done["renamed_roles"]) + lacking
    pages = platform.requests("GET", "/guilds/{guild_id}/members")
    alone = [
        e
        for e in platform.requests("GET", "/guilds/{guild_id}/members/{user_id}")
        if e["path"].rsplit("/", 1)[1] in held_before
    ]
    print(
        f"\nnuke restored: wall {wall:.1f} s; platform writes {sum(requests.values())} against a minimum of {least} "
        f"({dict(requests)}); {grants} grants, {grants / wall:.1f} grants/s over the whole restore; members read "
        f"from {len(pages)} page(s) of the list, {len(alone)} alone"
    )
    assert grants == lacking
    assert (len(pages), alone) == (1, [])  # 200 members: one page, no member read alone

    # Then a restored channel renamed by someone comes back by a rename, nothing created
    with platform.lock:
        restored = next(c for c in platform.guilds[BUILD_GUILD]["channels"].values() if c["name"] in done["channels"])
        restored["name"] = "someone-renamed-it"
    again = bot(invoke, {**restore, "dry_run": True}).body
    assert [i for i in again["plan"] if i["action"] == "create"] == []
    assert [i["id"] for i in again["plan"] if i["action"] == "update"] == [restored["id"]]
