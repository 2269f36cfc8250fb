"""A restore of 1,200 members' roles through the bot, counted against the fewest requests the platform allows: the
member list read a page at a time (1,000 a page, so 2 pages) and one grant per role a member lacks; no member read
alone, in the dry run or in the run. The backup is the service's own (manageBackup `create` from the live guild);
then 30 members leave and a second actor strips everyone's roles. The sandbox's member-role bucket is opened wide
here: this test counts requests, the nuke's (test_restore_nuke.py) keeps the platform's pace."""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any

from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import ALICE, DeployQueue, link, writes

MEMBERS, LEAVING, ROLES, PAGE = 1200, 30, 3, 1000
BOT_ROLE = "1191000000000002051"
MEMBER_LIST, ONE_MEMBER = "/guilds/{guild_id}/members", "/guilds/{guild_id}/members/{user_id}"
GRANT = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"


def _member(n: int) -> str:
    return f"1193000000{n:09d}"


def _role(n: int) -> str:
    return f"1193100000{n:09d}"


def build(platform: Any) -> dict[str, list[str]]:
    """Three roles below the bot's and 1,200 members holding one or two of them: what each holds."""
    guild = platform.guilds[BUILD_GUILD]
    held: dict[str, list[str]] = {}
    with platform.lock:
        guild["roles"][BOT_ROLE]["position"] = ROLES + 1
        for n in range(ROLES):
            guild["roles"][_role(n)] = {
                "id": _role(n),
                "name": f"tier-{n}",
                "permissions": str(1 << 11),  # SEND_MESSAGES: nothing dangerous
                "position": n + 1,
                "color": 0,
                "hoist": False,
                "mentionable": False,
                "managed": False,
            }
        for m in range(MEMBERS):
            user_id = _member(m)
            held[user_id] = sorted({_role(m % ROLES), _role((m + 1) % ROLES)} if m % 4 == 0 else {_role(m % ROLES)})
            platform.users[user_id] = {"id": user_id, "username": f"member{m}", "discriminator": "0"}
            guild["members"][user_id] = {"roles": list(held[user_id]), "joined_at": 0, "nick": None}
    return held


def leave_and_strip(platform: Any, held: dict[str, list[str]]) -> set[str]:
    """Every 40th member leaves the server; a second actor strips every other member's roles. Who left."""
    guild = platform.guilds[BUILD_GUILD]
    gone = {_member(m) for m in range(0, MEMBERS, MEMBERS // LEAVING)}
    with platform.lock:
        for user_id in held:
            if user_id in gone:
                del guild["members"][user_id]
            else:
                guild["members"][user_id]["roles"] = []
    return gone


def member_reads(platform: Any) -> tuple[int, int]:
    """(pages of the member list, the backup's members read alone) in the request log since it was cleared (the bot
    and the caller are read alone by every deploy: not the backup's members)."""
    alone = [e for e in platform.requests("GET", ONE_MEMBER) if e["path"].rsplit("/", 1)[1].startswith("1193000000")]
    return len(platform.requests("GET", MEMBER_LIST)), len(alone)


def test_a_restore_of_1200_members_reads_two_pages_and_makes_one_request_a_grant(
    invoke, platform, function_environment, aws
):
    function_environment("DeployToChatFunction", "DeployWorkerFunction", "ManageBackupFunction")
    link(invoke, platform)
    held = build(platform)
    made = invoke("manageBackup", {"action": "create", "guild_id": BUILD_GUILD, "user_id": ALICE})
    assert made.status == 201, made.body
    assert made.body["data"]["members_count"] == MEMBERS
    gone = leave_and_strip(platform, held)
    lacking = sum(len(roles) for user_id, roles in held.items() if user_id not in gone)
    pages = math.ceil((MEMBERS - LEAVING) / PAGE)  # from just below the backup's first member on
    platform.configure(route_limits={f"PUT {GRANT}": (100_000, 1.0)}, global_limit_per_second=0)
    restore = {"action": "restore", "backup_id": made.body["data"]["backup_id"], "guild_id": BUILD_GUILD}
    restore["user_id"] = ALICE
    platform.clear_log()

    planned = invoke("manageBackup", {**restore, "dry_run": True})

    assert planned.status == 200, planned.body
    assert planned.body["members"] == {"planned": lacking, "left_server": LEAVING, "dangerous": []}
    assert member_reads(platform) == (pages, 0)

    platform.clear_log()
    started = time.monotonic()
    queued = invoke("manageBackup", restore)
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    wall = time.monotonic() - started
    info = invoke("manageBackup", {"action": "info", "deployment_id": queued.body["deployment_id"]}).body

    assert info["status"] == "succeeded", info
    assert info["steps"]["members"] == {
        "planned": lacking,
        "granted": lacking,
        "left_server": LEAVING,
        "failed": 0,
        "removed": 0,
    }
    grants = platform.requests("PUT", GRANT)
    list_pages, alone = member_reads(platform)
    least = pages + lacking
    print(
        f"\n{MEMBERS - LEAVING} members, {lacking} grants: {list_pages} member-list pages + {len(grants)} grants "
        f"+ {alone} members read alone = {list_pages + len(grants) + alone} member requests against a minimum of "
        f"{least}; all writes {dict(Counter(f'{m} {r}' for m, r in writes(platform)))}; wall {wall:.1f} s"
    )
    assert (list_pages, alone, len(grants)) == (pages, 0, lacking)
    assert len({entry["path"] for entry in grants}) == lacking  # no grant twice
    members = platform.guilds[BUILD_GUILD]["members"]
    assert {u: sorted(members[u]["roles"]) for u in held if u not in gone} == {
        u: roles for u, roles in held.items() if u not in gone
    }
