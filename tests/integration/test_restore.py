"""A restore through the bot (manageBackup `restore`, `info`, `diff`) and through deployToChat `restore`: a guild
deployed, its members given roles, backed up, then changed by a second actor (a role and a channel deleted, a
channel renamed, members' roles stripped); the diff names exactly that, the restore brings it back (the members'
roles included), and a second restore after a rename renames back instead of re-creating (the guild's id map)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import ALICE, DeployQueue, WorkerContext, deploy_body, link, without_ids, writes
from tests.helpers.rollbacks import BASE, call, finished

MEMBERS = {f"11910000000000009{n:02d}": name for n, name in enumerate(("Mods", "Crew", "Crew", "Guests", "Crew"))}
GONE_MEMBER = "1191000000000000999"  # in the backup, no longer in the server
MEMBER_LIST, ONE_MEMBER = "/guilds/{guild_id}/members", "/guilds/{guild_id}/members/{user_id}"  # the sandbox's log


@pytest.fixture
def backed_up(invoke, platform, function_environment, aws):
    """BASE deployed to the build guild, five members holding its roles, and a backup of it as the service makes
    one: the export with ids, the members' roles, the owner and the administrators."""
    function_environment("DeployToChatFunction", "DeployWorkerFunction", "ManageBackupFunction")
    link(invoke, platform)
    assert call(invoke, deploy_body(BUILD_GUILD, BASE)).status == 202
    assert finished(invoke, aws)["status"] == "succeeded"
    guild = platform.guilds[BUILD_GUILD]
    role_ids = {role["name"]: role["id"] for role in guild["roles"].values()}
    with platform.lock:
        for user_id, role in MEMBERS.items():
            platform.users[user_id] = {"id": user_id, "username": f"user{user_id[-2:]}", "discriminator": "0"}
            guild["members"][user_id] = {"roles": [role_ids[role]], "joined_at": 0, "nick": None}
    exported = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    data = {
        **exported,
        "members": [{"user_id": u, "roles": [role_ids[r]]} for u, r in MEMBERS.items()]
        + [{"user_id": GONE_MEMBER, "roles": [role_ids["Crew"]]}],
        "owner_id": ALICE,
        "administrator_ids": [],
    }
    created = bot(invoke, {"action": "create", "guild_id": BUILD_GUILD, "backup_data": data, "label": "nightly"})
    assert created.status == 201, created.body
    return created.body["data"]["backup_id"], exported


def bot(invoke: Any, body: dict[str, Any]) -> Any:
    return invoke("manageBackup", body)


def nuke(platform: Any) -> None:
    """A second actor: deletes Guests and memes, renames general, strips every member's roles."""
    guild = platform.guilds[BUILD_GUILD]
    with platform.lock:
        guests = next(r for r in guild["roles"].values() if r["name"] == "Guests")
        del guild["roles"][guests["id"]]
        for channel in guild["channels"].values():
            channel["permission_overwrites"] = [o for o in channel["permission_overwrites"] if o["id"] != guests["id"]]
        memes = next(c for c in guild["channels"].values() if c["name"] == "memes")
        del guild["channels"][memes["id"]]
        next(c for c in guild["channels"].values() if c["name"] == "general")["name"] = "general-renamed"
        for user_id in MEMBERS:
            guild["members"][user_id]["roles"] = []


def held(platform: Any) -> dict[str, list[str]]:
    guild = platform.guilds[BUILD_GUILD]
    names = {role["id"]: role["name"] for role in guild["roles"].values()}
    return {user_id: sorted(names[r] for r in guild["members"][user_id]["roles"]) for user_id in MEMBERS}


def member_reads(platform: Any) -> tuple[list[str], list[str]]:
    """The member list's pages read (their `after`) and the backup's members read alone, from the request log."""
    pages = [entry["query"] for entry in platform.requests("GET", MEMBER_LIST)]
    backup_members = {*MEMBERS, GONE_MEMBER}
    alone = [e["path"].rsplit("/", 1)[1] for e in platform.requests("GET", ONE_MEMBER)]
    return [dict(part.split("=") for part in query.split("&"))["after"] for query in pages], [
        user_id for user_id in alone if user_id in backup_members
    ]


def restore_body(backup_id: str, **extra: Any) -> dict[str, Any]:
    return {"action": "restore", "backup_id": backup_id, "guild_id": BUILD_GUILD, "user_id": ALICE, **extra}


def test_the_diff_names_what_a_second_actor_changed(invoke, platform, backed_up):
    backup_id, _ = backed_up
    nuke(platform)
    platform.clear_log()

    diff = bot(invoke, {"action": "diff", "backup_id": backup_id, "user_id": ALICE})

    assert diff.status == 200, diff.body
    changes = sorted((c["kind"], c["name"], c["action"]) for c in diff.body["changes"] if c["kind"] != "overwrite")
    assert changes == [
        ("channel", "Lobby / general", "update"),
        ("channel", "Lobby / memes", "create"),
        ("role", "Guests", "create"),
    ]
    renamed = next(c for c in diff.body["changes"] if c["name"] == "Lobby / general")
    assert {"field": "name", "old": "general-renamed", "new": "general"} in renamed["changes"]
    assert sorted((m["user_id"], m["missing"]) for m in diff.body["members"]) == sorted(
        (u, [r]) for u, r in MEMBERS.items()
    )
    assert diff.body["counts"]["members"] == len(MEMBERS)
    assert writes(platform) == []  # a comparison writes nothing


def test_a_restore_through_the_bot_brings_back_the_guild_and_the_members_roles(invoke, platform, backed_up, aws):
    backup_id, exported = backed_up
    nuke(platform)
    platform.clear_log()

    planned = bot(invoke, restore_body(backup_id, dry_run=True))
    assert planned.status == 200, planned.body
    assert planned.body["members"]["planned"] == len(MEMBERS)
    assert planned.body["members"]["left_server"] == 1
    assert planned.body["members"]["dangerous"] == [{"user_id": next(iter(MEMBERS)), "role": "Mods"}]
    assert writes(platform) == []
    # the members' roles from one page of the list, starting just below the backup's first member: no member alone
    first_below = str(int(min(MEMBERS)) - 1)
    assert member_reads(platform) == ([first_below], [])
    assert "members-read-one-by-one" not in {w["rule"] for w in planned.body["warnings"]}

    refused = bot(invoke, restore_body(backup_id))
    assert refused.status == 409, refused.body
    assert [d["rule"] for d in refused.body["details"]] == ["member-dangerous-role"]

    queued = bot(invoke, restore_body(backup_id, acknowledge=["member-dangerous-role"]))
    assert queued.status == 202, queued.body
    assert (queued.body["kind"], queued.body["status"]) == ("restore", "queued")
    platform.clear_log()
    DeployQueue(aws).drain()
    assert member_reads(platform) == ([first_below], [])  # the run's grants read one page too
    info = bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]})

    assert info.status == 200, info.body
    assert info.body["status"] == "succeeded", info.body
    assert info.body["steps"]["members"] == {"planned": 5, "granted": 5, "left_server": 1, "failed": 0, "removed": 0}
    assert held(platform) == {u: [r] for u, r in MEMBERS.items()}
    after = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    assert without_ids(after) == without_ids(exported)

    # Then someone renames the re-created channel: the same backup renames it back, creating nothing
    with platform.lock:
        next(c for c in platform.guilds[BUILD_GUILD]["channels"].values() if c["name"] == "memes")["name"] = "dank"
    again = bot(invoke, restore_body(backup_id, dry_run=True))
    assert again.status == 200, again.body
    assert [i for i in again.body["plan"] if i["action"] == "create"] == []
    assert [(i["name"], i["action"]) for i in again.body["plan"] if i["action"] != "keep"] == [
        ("Lobby / memes", "update")
    ]
    assert again.body["members"]["planned"] == 0


def test_a_member_who_kept_a_dangerous_role_needs_no_acknowledgement(invoke, platform, backed_up, aws):
    # Given the nuke, after which the moderator got Mods back by hand: the dry run lists no dangerous grant
    backup_id, _ = backed_up
    nuke(platform)
    moderator = next(u for u, r in MEMBERS.items() if r == "Mods")
    guild = platform.guilds[BUILD_GUILD]
    with platform.lock:
        guild["members"][moderator]["roles"] = [r["id"] for r in guild["roles"].values() if r["name"] == "Mods"]
    planned = bot(invoke, restore_body(backup_id, dry_run=True))
    assert planned.body["members"]["dangerous"] == []

    # When the restore is confirmed as the dry run showed it, without acknowledge
    queued = bot(invoke, restore_body(backup_id))

    # Then it is queued (only a grant the dry run lists needs it), and the others get their roles back
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]}).body
    assert info["steps"]["members"] == {"planned": 4, "granted": 4, "left_server": 1, "failed": 0, "removed": 0}
    assert held(platform) == {u: [r] for u, r in MEMBERS.items()}


def test_only_channels_restores_the_channels_alone(invoke, platform, backed_up, aws):
    backup_id, _ = backed_up
    nuke(platform)

    queued = bot(invoke, restore_body(backup_id, only=["channels"]))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()

    guild = platform.guilds[BUILD_GUILD]
    assert "Guests" not in {role["name"] for role in guild["roles"].values()}
    assert {"memes", "general"} <= {channel["name"] for channel in guild["channels"].values()}
    assert held(platform) == {u: [] for u in MEMBERS}


def test_a_backup_that_is_not_restorable_is_refused_with_its_problems(invoke, platform, backed_up):
    created = bot(invoke, {"action": "create", "guild_id": BUILD_GUILD, "backup_data": {"hello": "world"}})
    refused = bot(invoke, restore_body(created.body["data"]["backup_id"], dry_run=True))

    assert refused.status == 409, refused.body
    # its problems name what a restore would need (docs/03-api.md, manageBackup: an `unknown` shape's `problems`),
    # the same ones its create answered
    assert [detail["field"] for detail in refused.body["details"]] == ["roles", "categories", "name"]
    problems = created.body["data"]["problems"]
    assert refused.body["details"] == [{"field": p["field"], "message": p["message"]} for p in problems]


def test_a_member_without_manage_guild_may_not_restore(invoke, platform, backed_up):
    backup_id, _ = backed_up
    crew = next(u for u, r in MEMBERS.items() if r == "Crew")

    refused = bot(invoke, {**restore_body(backup_id, dry_run=True), "user_id": crew})

    assert refused.status == 403, refused.body


def test_deploy_to_chat_restores_for_a_signed_in_user(invoke, platform, backed_up, aws):
    backup_id, exported = backed_up
    nuke(platform)

    planned = call(invoke, {"action": "restore", "backup_id": backup_id, "guild_id": BUILD_GUILD, "dry_run": True})
    assert planned.status == 200, planned.body
    assert planned.body["status"] == "planned"
    assert planned.body["members"]["planned"] == len(MEMBERS)
    body = {"action": "restore", "backup_id": backup_id, "guild_id": BUILD_GUILD, "members": False}
    queued = call(invoke, body)
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = call(invoke, {"action": "info", "project_id": f"restore-{backup_id}"}).body
    assert info["status"] == "succeeded", info
    after = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    assert without_ids(after) == without_ids(copy.deepcopy(exported))


def test_a_restore_by_a_member_below_administrator_is_refused_per_object_above_them(invoke, platform, backed_up):
    # Given a helper holding MANAGE_GUILD, MANAGE_ROLES and MANAGE_CHANNELS in a role between Crew and Mods, and a
    # second actor who recoloured Mods besides the nuke
    backup_id, _ = backed_up
    nuke(platform)
    helper = "1191000000000000950"
    guild = platform.guilds[BUILD_GUILD]
    with platform.lock:
        roles = guild["roles"]
        mods = next(r for r in roles.values() if r["name"] == "Mods")
        mods["color"] = 0xFF0000
        crew_position = next(r for r in roles.values() if r["name"] == "Crew")["position"]
        for role in roles.values():
            if role["position"] > crew_position:
                role["position"] += 1
        rights = (1 << 5) | (1 << 28) | (1 << 4) | (1 << 10)  # MANAGE_GUILD, MANAGE_ROLES, MANAGE_CHANNELS, VIEW
        roles["1191000000000002959"] = {
            "id": "1191000000000002959",
            "name": "Helpers",
            "permissions": str(rights),
            "position": crew_position + 1,
            "color": 0,
            "hoist": False,
            "mentionable": False,
            "managed": False,
        }
        platform.users[helper] = {"id": helper, "username": "helper", "discriminator": "0"}
        guild["members"][helper] = {"roles": ["1191000000000002959"], "joined_at": 0, "nick": None}
    platform.clear_log()

    refused = bot(invoke, {**restore_body(backup_id, dry_run=True), "user_id": helper})

    # Then the dry run refuses what is above them, one detail per object, and nothing is written
    assert refused.status == 403, refused.body
    fields = sorted(detail["field"] for detail in refused.body["details"])
    assert fields == ["members.roles.Mods", "roles[0]"], refused.body["details"]
    assert writes(platform) == []


def test_the_rollback_of_a_restore_takes_back_the_grants_it_made(invoke, platform, backed_up, aws):
    backup_id, _ = backed_up
    nuke(platform)
    nuked_roles = sorted(role["name"] for role in platform.guilds[BUILD_GUILD]["roles"].values())
    body = {"action": "restore", "backup_id": backup_id, "guild_id": BUILD_GUILD}
    queued = call(invoke, {**body, "acknowledge": ["member-dangerous-role"]})
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    assert held(platform) == {u: [r] for u, r in MEMBERS.items()}
    # a person takes a granted role away meanwhile: the rollback has nothing of it to take back
    crew_member = next(u for u, r in MEMBERS.items() if r == "Crew")
    with platform.lock:
        platform.guilds[BUILD_GUILD]["members"][crew_member]["roles"] = []

    rolled = call(invoke, {"action": "rollback", "project_id": f"restore-{backup_id}"})
    assert rolled.status == 202, rolled.body
    platform.clear_log()
    DeployQueue(aws).drain()
    info = call(invoke, {"action": "info", "project_id": f"restore-{backup_id}"}).body

    assert (info["kind"], info["status"]) == ("rollback", "succeeded"), info
    assert info["steps"]["members"]["removed"] == 3  # Mods and two Crews; Guests went with its role
    assert member_reads(platform) == ([str(int(min(MEMBERS)) - 1)], [])  # the granted members from one page
    assert held(platform) == {u: [] for u in MEMBERS}
    assert sorted(role["name"] for role in platform.guilds[BUILD_GUILD]["roles"].values()) == nuked_roles


class ShortContext(WorkerContext):
    """An invocation whose time runs low after a few looks at the clock: the member grants go on in the next one."""

    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    def get_remaining_time_in_millis(self) -> int:
        self.looks += 1
        return 300_000 if self.looks <= LOOKS else 1_000


LOOKS = 4


def test_member_grants_resume_across_invocations_without_granting_twice(invoke, platform, backed_up, aws):
    backup_id, _ = backed_up
    nuke(platform)
    queued = bot(invoke, restore_body(backup_id, acknowledge=["member-dangerous-role"]))
    assert queued.status == 202, queued.body
    platform.clear_log()

    granted_before: list[int] = []  # the grants made before each invocation

    def context() -> ShortContext:
        granted_before.append(
            sum(1 for e in platform.request_log if e["method"] == "PUT" and "/members/" in e["route"])
        )
        return ShortContext()

    DeployQueue(aws).drain(context)
    info = bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]}).body

    assert any(0 < n < 5 for n in granted_before), granted_before  # an invocation began with the grants half done
    assert info["status"] == "succeeded", info
    assert info["steps"]["members"] == {"planned": 5, "granted": 5, "left_server": 1, "failed": 0, "removed": 0}
    grants = [e for e in platform.request_log if e["method"] == "PUT" and "/members/" in e["route"]]
    assert len(grants) == 5
    assert len({(e["path"]) for e in grants}) == 5  # no grant twice
    assert held(platform) == {u: [r] for u, r in MEMBERS.items()}
    # each invocation that granted read the list again, from its cursor's member on; no member was read alone
    pages, alone = member_reads(platform)
    assert alone == []
    assert len(pages) >= 2, pages
    assert pages[0] == str(int(min(MEMBERS)) - 1)
    assert pages == sorted(pages, key=int), pages  # each from where the last invocation stopped
    assert int(pages[-1]) > int(pages[0]), pages


def test_without_the_member_access_the_members_are_read_alone_and_the_dry_run_says_so(invoke, platform, backed_up, aws):
    backup_id, _ = backed_up
    nuke(platform)
    platform.configure(guild_members_intent_denied=[BUILD_GUILD])
    platform.clear_log()

    planned = bot(invoke, restore_body(backup_id, dry_run=True))

    assert planned.status == 200, planned.body
    assert planned.body["members"] == {
        "planned": 5,
        "left_server": 1,
        "dangerous": [{"user_id": next(iter(MEMBERS)), "role": "Mods"}],
    }
    [warning] = [w for w in planned.body["warnings"] if w["rule"] == "members-read-one-by-one"]
    assert warning["field"] == "members"
    assert "6 member(s) were read one request each" in warning["message"]
    pages, alone = member_reads(platform)
    assert len(pages) == 1  # asked once, refused (403 50001)
    assert alone == sorted({*MEMBERS, GONE_MEMBER}, key=int)

    platform.clear_log()
    queued = bot(invoke, restore_body(backup_id, acknowledge=["member-dangerous-role"]))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]}).body

    assert info["status"] == "succeeded", info
    assert info["steps"]["members"] == {"planned": 5, "granted": 5, "left_server": 1, "failed": 0, "removed": 0}
    assert held(platform) == {u: [r] for u, r in MEMBERS.items()}
    pages, alone = member_reads(platform)
    assert (len(pages), alone) == (1, sorted({*MEMBERS, GONE_MEMBER}, key=int))


def test_a_copy_into_another_guild_needs_the_source_guilds_manager_or_its_recorded_owner_or_administrators(
    invoke, platform, backed_up
):
    # Given Bob, who owns his workshop (the bot is its administrator) and is not in the backup's guild
    backup_id, exported = backed_up
    bob, workshop = "1191000000000000102", "1191000000000001002"
    copy_body = {"action": "restore", "backup_id": backup_id, "guild_id": workshop, "user_id": bob, "dry_run": True}

    refused = bot(invoke, copy_body)  # the bot reads the source guild: Bob may not manage it

    with platform.lock:  # the bot leaves the source guild: the backup's record decides
        del platform.guilds[BUILD_GUILD]["members"]["1191000000000000001"]
    still_refused = bot(invoke, copy_body)
    data = {**exported, "owner_id": ALICE, "administrator_ids": [bob]}
    recorded = bot(invoke, {"action": "create", "guild_id": BUILD_GUILD, "backup_data": data}).body["data"]
    # (settings left out: the workshop is not a Community server, so the backup's description fails the preflight)
    allowed = bot(invoke, {**copy_body, "backup_id": recorded["backup_id"], "only": ["roles", "channels", "members"]})

    assert refused.status == 403, refused.body
    assert "another server" in refused.body["message"]
    assert still_refused.status == 403, still_refused.body
    assert allowed.status == 200, allowed.body
    created = sorted(i["name"] for i in allowed.body["plan"] if i["kind"] == "role" and i["action"] == "create")
    assert created == ["Crew", "Guests", "Mods"]
