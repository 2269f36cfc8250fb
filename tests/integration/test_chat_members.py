"""Members and the audit log over HTTP: the client's paged member list, member-role grants, audit-log entries,
and a second actor (a person's own token) changing a guild through the sandbox's HTTP API."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from local.chat_sandbox import SandboxServer, SandboxState
from local.chat_sandbox.actors import act_as, add_members
from svcconf.chat import ChatApiError, ChatClient, MissingAccess, MissingPermissions, UnknownMember, UnknownRole
from tests.helpers.chat_sandbox import ALICE_ID, BOB_GUILD, BOT_ID, CAROL_ID, DAVE_ID, DEMO_GUILD, RIGHTS_LAB

REGULAR = "1191000000000002022"  # BOB_GUILD's plain role
BOT_ROLE_BOB = "1191000000000002021"  # the bot's managed role there
RIGHTS_ADMINS, RIGHTS_MANAGERS, RIGHTS_HELPERS = "1191000000000002064", "1191000000000002063", "1191000000000002061"
MEMBER_ROLE = "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"


def person(chat_sandbox: SandboxServer, token: str) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = token  # a person's token has no scheme
    return session


def api(chat_sandbox: SandboxServer, path: str) -> str:
    return chat_sandbox.base_url.removesuffix("/api/v10") + path


def test_every_member_is_read_page_by_page_with_their_roles(chat_client: ChatClient, chat_state: SandboxState):
    # Given 2,500 more members of BOB_GUILD holding its plain role
    added = add_members(chat_state, BOB_GUILD, 2500, [REGULAR])
    chat_state.clear_log()
    # When the client reads the member list
    members = chat_client.list_members(BOB_GUILD)
    # Then every member comes once, ascending, with their roles, in the fewest pages of 1,000
    ids = [member.user.id for member in members if member.user]
    assert ids == sorted(ids, key=int)
    assert len(ids) == len(set(ids)) == 2503
    assert set(added) <= set(ids)
    by_id = {member.user.id: member.roles for member in members if member.user}
    assert by_id[added[0]] == [REGULAR]
    assert by_id[BOT_ID] == [BOT_ROLE_BOB]
    pages = chat_state.requests("GET", "/guilds/{guild_id}/members")
    assert [entry["query"] for entry in pages] == [
        "limit=1000&after=0",
        f"limit=1000&after={ids[999]}",
        f"limit=1000&after={ids[1999]}",
    ]


def test_a_bot_without_the_members_intent_is_refused_50001(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(guild_members_intent_denied=[BOB_GUILD])
    with pytest.raises(MissingAccess):
        chat_client.list_members(BOB_GUILD)
    assert len(chat_client.list_members(DEMO_GUILD)) == 4  # another guild still answers
    chat_state.configure(guild_members_intent=False)
    with pytest.raises(MissingAccess):
        chat_client.list_members(DEMO_GUILD)


def test_member_list_limits_are_the_platforms(chat_sandbox: SandboxServer, chat_state: SandboxState):
    auth = {"Authorization": "Bot dev-bot-token"}
    path = api(chat_sandbox, f"/api/v10/guilds/{BOB_GUILD}/members")
    one = requests.get(path, headers=auth, timeout=5)
    assert [member["user"]["id"] for member in one.json()] == [BOT_ID]  # limit defaults to 1, lowest id first
    for limit in ("0", "1001", "x"):
        refused = requests.get(path, params={"limit": limit}, headers=auth, timeout=5)
        assert (refused.status_code, refused.json()["code"]) == (400, 50035)
        assert "limit" in refused.json()["errors"]


def test_grants_and_removals_follow_the_hierarchy(chat_client: ChatClient, chat_state: SandboxState):
    # The bot (ADMINISTRATOR in BOB_GUILD) grants and takes the plain role
    chat_client.add_member_role(BOB_GUILD, ALICE_ID, REGULAR)  # held already: nothing changes
    assert chat_state.guild(BOB_GUILD)["members"][ALICE_ID]["roles"] == [REGULAR]
    chat_client.remove_member_role(BOB_GUILD, ALICE_ID, REGULAR)
    assert chat_state.guild(BOB_GUILD)["members"][ALICE_ID]["roles"] == []
    chat_client.add_member_role(BOB_GUILD, ALICE_ID, REGULAR, reason="restore")
    assert chat_state.guild(BOB_GUILD)["members"][ALICE_ID]["roles"] == [REGULAR]
    # Its own (managed) role, at its highest, is refused by the hierarchy first (a role at or above the bot's highest
    # is 403 50013 on PUT: docs/04-chat-platform.md, "Members and the audit log"); a managed role below it (an
    # integration's) and @everyone are 50028
    with pytest.raises(MissingPermissions):
        chat_client.add_member_role(RIGHTS_LAB, ALICE_ID, "1191000000000002065")
    with chat_state.lock:
        chat_state.guilds[RIGHTS_LAB]["roles"][RIGHTS_MANAGERS].update(managed=True, tags={"integration_id": "1"})
    for invalid in (RIGHTS_MANAGERS, RIGHTS_LAB):
        with pytest.raises(ChatApiError) as managed:
            chat_client.add_member_role(RIGHTS_LAB, ALICE_ID, invalid)
        assert (managed.value.platform_status, managed.value.platform_code) == (400, 50028), invalid
    assert chat_state.guild(RIGHTS_LAB)["members"][ALICE_ID]["roles"] == [RIGHTS_ADMINS]  # nothing granted
    # A role not below its own, an unknown role or member are refused
    with chat_state.lock:
        chat_state.guilds[RIGHTS_LAB]["roles"][RIGHTS_HELPERS]["position"] = 9  # above the bot's highest (5)
    with pytest.raises(MissingPermissions):
        chat_client.add_member_role(RIGHTS_LAB, ALICE_ID, RIGHTS_HELPERS)
    with pytest.raises(UnknownRole):
        chat_client.add_member_role(BOB_GUILD, ALICE_ID, "1191000000000009999")
    with pytest.raises(UnknownMember):
        chat_client.add_member_role(BOB_GUILD, CAROL_ID, REGULAR)
    # In a guild where the bot lacks MANAGE_ROLES: 50013
    with pytest.raises(MissingPermissions):
        chat_client.add_member_role("1191000000000001004", ALICE_ID, "1191000000000002042")


def test_member_role_grants_have_their_own_bucket_of_ten(chat_client: ChatClient, chat_state: SandboxState):
    added = add_members(chat_state, BOB_GUILD, 11, [])
    chat_state.configure(route_limits={MEMBER_ROLE: (10, 0.5)})
    chat_state.clear_log()
    for user_id in added:
        chat_client.add_member_role(BOB_GUILD, user_id, REGULAR)
    grants = chat_state.requests("PUT", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}")
    assert [entry["status"] for entry in grants] == [204] * 11  # the client waited out the bucket: no 429
    assert all(chat_state.guild(BOB_GUILD)["members"][user_id]["roles"] == [REGULAR] for user_id in added)


def test_the_audit_log_names_who_changed_what(
    chat_sandbox: SandboxServer, chat_client: ChatClient, chat_state: SandboxState
):
    # Given the bot's changes and a person's (carol, the owner of the rights lab), each through the HTTP API
    role = chat_client.create_role(RIGHTS_LAB, {"name": "Crew"}, reason="deploy")
    chat_client.modify_role(RIGHTS_LAB, role.id, {"name": "Deck crew"})
    carol = person(chat_sandbox, act_as(chat_state, CAROL_ID))
    answer = carol.delete(api(chat_sandbox, f"/api/v10/guilds/{RIGHTS_LAB}/roles/{RIGHTS_MANAGERS}"), timeout=5)
    assert answer.status_code == 204
    answer = carol.delete(
        api(chat_sandbox, f"/api/v10/guilds/{RIGHTS_LAB}/members/{DAVE_ID}/roles/{RIGHTS_HELPERS}"), timeout=5
    )
    assert answer.status_code == 204
    # When the bot reads the audit log
    log = chat_client.audit_log(RIGHTS_LAB)
    entries = [(e.action_type, e.user_id, e.target_id) for e in log.audit_log_entries]
    # Then the newest come first, each with its actor, target and changes
    assert entries == [
        (25, CAROL_ID, DAVE_ID),
        (32, CAROL_ID, RIGHTS_MANAGERS),
        (31, BOT_ID, role.id),
        (30, BOT_ID, role.id),
    ]
    stripped, deleted, renamed, created = log.audit_log_entries
    assert [(c.key, c.new_value) for c in stripped.changes] == [
        ("$remove", [{"id": RIGHTS_HELPERS, "name": "Helpers"}])
    ]
    assert ("name", "Managers") in [(c.key, c.old_value) for c in deleted.changes]
    assert [(c.key, c.old_value, c.new_value) for c in renamed.changes] == [("name", "Crew", "Deck crew")]
    assert created.reason == "deploy"
    assert {user.id for user in log.users} == {CAROL_ID, BOT_ID}
    # Filters: by actor, by action type, before an entry
    assert [e.action_type for e in chat_client.audit_log(RIGHTS_LAB, user_id=CAROL_ID).audit_log_entries] == [25, 32]
    assert [e.user_id for e in chat_client.audit_log(RIGHTS_LAB, action_type=30).audit_log_entries] == [BOT_ID]
    older = chat_client.audit_log(RIGHTS_LAB, before=deleted.id, limit=1).audit_log_entries
    assert [e.id for e in older] == [renamed.id]


def test_the_audit_log_needs_view_audit_log(chat_client: ChatClient, chat_state: SandboxState):
    with pytest.raises(MissingPermissions):
        chat_client.audit_log("1191000000000001004")  # the bot holds no VIEW_AUDIT_LOG in the locked room


def test_a_second_actor_nukes_a_guild_through_the_http_api(chat_sandbox: SandboxServer, chat_state: SandboxState):
    # Given carol (the owner) acting with her own token, and 200 members holding roles
    add_members(chat_state, RIGHTS_LAB, 200, [RIGHTS_ADMINS, RIGHTS_MANAGERS, RIGHTS_HELPERS])
    guild_before = chat_state.guild(RIGHTS_LAB)
    carol = person(chat_sandbox, act_as(chat_state, CAROL_ID))
    base = api(chat_sandbox, f"/api/v10/guilds/{RIGHTS_LAB}")
    # When she deletes roles and channels, renames the guild and strips a member's role
    for role_id in (RIGHTS_MANAGERS, RIGHTS_HELPERS):
        assert carol.delete(f"{base}/roles/{role_id}", timeout=5).status_code == 204
    channels = carol.get(f"{base}/channels", timeout=5).json()
    for channel in channels[: len(channels) // 2]:
        assert carol.delete(api(chat_sandbox, f"/api/v10/channels/{channel['id']}"), timeout=5).status_code == 200
    assert carol.patch(base, json={"name": "nuked"}, timeout=5).status_code == 200
    crowd = next(
        user_id for user_id, m in guild_before["members"].items() if RIGHTS_ADMINS in m["roles"] and user_id != ALICE_ID
    )
    assert carol.delete(f"{base}/members/{crowd}/roles/{RIGHTS_ADMINS}", timeout=5).status_code == 204
    # Then the guild is changed as she asked, and the log names her as the actor of each change
    after = chat_state.guild(RIGHTS_LAB)
    assert after["name"] == "nuked"
    assert RIGHTS_MANAGERS not in after["roles"]
    assert RIGHTS_HELPERS not in after["roles"]
    assert len(after["channels"]) == len(channels) - len(channels) // 2
    assert after["members"][crowd]["roles"] == []
    actors = {entry["user_id"] for entry in after["audit_log"]}
    assert actors == {CAROL_ID}
    assert [entry["action_type"] for entry in after["audit_log"]].count(12) == len(channels) // 2


def test_a_second_actor_is_held_to_the_hierarchy(chat_sandbox: SandboxServer, chat_state: SandboxState):
    # dave holds Helpers (MANAGE_ROLES, the lowest role): he cannot delete a role above his own, nor grant one
    dave = person(chat_sandbox, act_as(chat_state, DAVE_ID))
    base = api(chat_sandbox, f"/api/v10/guilds/{RIGHTS_LAB}")
    refused: list[Any] = [
        dave.delete(f"{base}/roles/{RIGHTS_MANAGERS}", timeout=5),
        dave.put(f"{base}/members/{DAVE_ID}/roles/{RIGHTS_ADMINS}", timeout=5),
    ]
    assert [(answer.status_code, answer.json()["code"]) for answer in refused] == [(403, 50013), (403, 50013)]
    assert RIGHTS_MANAGERS in chat_state.guild(RIGHTS_LAB)["roles"]
    assert "audit_log" not in chat_state.guild(RIGHTS_LAB)
    # An unknown token is no one
    stranger = person(chat_sandbox, "person-not-minted")
    assert stranger.get(f"{base}/roles", timeout=5).status_code == 401


def test_the_control_api_mints_actors_and_adds_members(chat_sandbox: SandboxServer, chat_state: SandboxState):
    minted = requests.post(api(chat_sandbox, "/_sandbox/actors"), json={"user_id": CAROL_ID}, timeout=5)
    assert minted.status_code == 201
    roles = person(chat_sandbox, minted.json()["token"]).get(api(chat_sandbox, f"/api/v10/guilds/{RIGHTS_LAB}/roles"))
    assert roles.status_code == 200
    unknown = requests.post(api(chat_sandbox, "/_sandbox/actors"), json={"user_id": "1191000000000009999"}, timeout=5)
    assert (unknown.status_code, unknown.json()["details"][0]["field"]) == (400, "user_id")
    grown = requests.post(
        api(chat_sandbox, f"/_sandbox/guilds/{BOB_GUILD}/members"), json={"count": 3, "roles": [REGULAR]}, timeout=5
    )
    assert grown.json()["added"] == 3
    assert chat_state.guild(BOB_GUILD)["members"][grown.json()["last"]]["roles"] == [REGULAR]
    bad = requests.post(api(chat_sandbox, f"/_sandbox/guilds/{BOB_GUILD}/members"), json={"count": 0}, timeout=5)
    assert (bad.status_code, bad.json()["details"][0]["field"]) == (400, "count")
