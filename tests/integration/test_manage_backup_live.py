"""manageBackup v4 through its handler, against the sandbox: a backup made from the live guild (configuration with
ids, members' roles page by page, owner, administrators, maker, digest), uploaded backups in every format, the
kinds' retention with `pruned`, `delete`, and what `list` shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from local.chat_sandbox import SandboxState
from local.chat_sandbox.actors import add_members
from svcconf.backups.formats import read_backup
from svcconf.chat import ChatClient
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import read_live_guild
from svcconf.settings import get_settings
from svcconf.store import documents
from tests.helpers.chat_sandbox import (
    ALICE_ID,
    BOB_ID,
    BOT_ID,
    CAROL_ID,
    DEMO_GUILD,
    QUIET_GUILD,
    chat_settings_for,
    new_chat_client,
)

DATA = Path(__file__).parents[1] / "data" / "backups"
MODERATOR, MEMBER = "1191000000000002012", "1191000000000002013"
MEMBER_LIST = "/guilds/{guild_id}/members"


def live_create(invoke: Any, guild_id: str = DEMO_GUILD, **fields: Any) -> Any:
    return invoke("manageBackup", {"action": "create", "guild_id": guild_id, **fields})


def fetched(invoke: Any, backup_id: str, guild_id: str = DEMO_GUILD) -> dict[str, Any]:
    answer = invoke("manageBackup", {"action": "get", "backup_id": backup_id, "guild_id": guild_id})
    assert answer.status == 200
    data: dict[str, Any] = answer.body["data"]["backup_data"]
    return data


@pytest.fixture
def bot(platform: SandboxState) -> ChatClient:
    return new_chat_client(chat_settings_for(get_settings().chat_api_base_url, SVC_BOT_TOKEN=platform.bot["token"]))


def test_a_backup_from_the_live_guild_holds_its_configuration_members_owner_and_admins(
    invoke: Any, platform: SandboxState, bot: ChatClient
):
    # Given the demo guild with 2,100 more members holding its plain roles
    crowd = add_members(platform, DEMO_GUILD, 2100, [MODERATOR, MEMBER], per_member=1)
    platform.clear_log()
    # When the bot asks for a backup for alice (the owner)
    answer = live_create(invoke, label="nightly", user_id=ALICE_ID)
    # Then 201: a configuration, restorable, manual, made by alice, with members counted
    assert answer.status == 201
    data = answer.body["data"]
    assert (data["kind"], data["format"], data["restorable"], data["made_by"]) == (
        "manual",
        "configuration",
        True,
        ALICE_ID,
    )
    assert (data["guild_name"], data["label"], data["pruned"], data["warnings"]) == (
        "Svc Demo Guild",
        "nightly",
        [],
        [],
    )
    assert data["members_count"] == 2100 + 2  # bob (Moderator) and carol (Member) too
    assert data["digest"].startswith("sha256:")
    # And the member list was read in the fewest pages the platform allows (1,000 a page)
    pages = platform.requests("GET", MEMBER_LIST)
    assert len(pages) == 3
    assert all(entry["query"].startswith("limit=1000&after=") for entry in pages)
    # And the stored data is the export (ids included) plus members, owner and administrators
    stored = fetched(invoke, data["backup_id"])
    exported = export_config(read_live_guild(bot, DEMO_GUILD), read_live_guild(bot, DEMO_GUILD).settings)
    reading = read_backup(stored)
    assert reading.format == "configuration"
    assert reading.config == exported.config
    assert [role["id"] for role in stored["roles"]] == [MODERATOR, MEMBER]
    assert all(value is not None for role in stored["roles"] for value in role.values())  # nulls left out
    members = {member["user_id"]: member["roles"] for member in stored["members"]}
    assert members[BOB_ID] == [MODERATOR]
    assert members[CAROL_ID] == [MEMBER]
    assert members[crowd[0]] == [MODERATOR]
    assert members[crowd[1]] == [MEMBER]
    assert BOT_ID not in members  # its only role is managed: nothing to give back
    assert stored["owner_id"] == ALICE_ID
    assert stored["administrator_ids"] == []  # no member of the demo guild holds ADMINISTRATOR


def test_without_the_member_intent_the_backup_is_made_without_members_and_says_so(invoke: Any, platform: SandboxState):
    platform.configure(guild_members_intent=False)
    answer = live_create(invoke)
    assert answer.status == 201
    data = answer.body["data"]
    assert data["members_count"] is None
    assert [(w["field"], w["rule"]) for w in data["warnings"]] == [("members", "members-not-read")]
    assert "GUILD_MEMBERS" in data["warnings"][0]["message"]
    assert "members" not in fetched(invoke, data["backup_id"])


def test_members_false_reads_no_member_list(invoke: Any, platform: SandboxState):
    platform.clear_log()
    answer = live_create(invoke, members=False)
    assert answer.status == 201
    assert answer.body["data"]["members_count"] is None
    assert answer.body["data"]["warnings"] == []
    assert platform.requests("GET", MEMBER_LIST) == []


def test_the_bot_not_in_the_guild_is_409_with_the_install_link(invoke: Any, platform: SandboxState):
    answer = live_create(invoke, guild_id=QUIET_GUILD)
    assert answer.status == 409
    assert "client_id=" in answer.body["install_url"]
    assert invoke("manageBackup", {"action": "list", "guild_id": QUIET_GUILD}).body["backups"] == []


@pytest.mark.parametrize(
    ("user_id", "made_by"),
    [
        (BOB_ID, BOB_ID),  # Moderator holds MANAGE_GUILD
        (CAROL_ID, None),  # Member holds nothing
        ("1191000000000000999", None),  # not a member
    ],
)
def test_made_by_is_recorded_only_for_a_user_who_manages_the_guild(
    invoke: Any, platform: SandboxState, user_id: str, made_by: str | None
):
    for members in (True, False):  # read from the member list, or asked for the one member
        answer = live_create(invoke, user_id=user_id, members=members)
        assert answer.body["data"]["made_by"] == made_by


def test_the_digest_follows_the_content(invoke: Any, platform: SandboxState):
    first = live_create(invoke).body["data"]["digest"]
    assert live_create(invoke).body["data"]["digest"] == first  # nothing changed
    with platform.lock:
        platform.guilds[DEMO_GUILD]["members"][CAROL_ID]["roles"] = []  # a member lost her role
    assert live_create(invoke).body["data"]["digest"] != first


def test_a_live_backup_too_big_for_an_item_goes_to_the_documents_bucket(
    invoke: Any, platform: SandboxState, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(documents, "INLINE_LIMIT_BYTES", 200)
    add_members(platform, DEMO_GUILD, 300, [MEMBER])
    answer = live_create(invoke)
    assert answer.status == 201
    backup_id = answer.body["data"]["backup_id"]
    key = f"backups/{DEMO_GUILD}/{backup_id}.json.bz2"
    bucket = boto3.client("s3").list_objects_v2(Bucket=get_settings().documents_bucket)
    assert key in [item["Key"] for item in bucket.get("Contents", [])]
    assert len(fetched(invoke, backup_id)["members"]) == 302
    # and deleting it removes the object too
    assert invoke("manageBackup", {"action": "delete", "backup_id": backup_id, "guild_id": DEMO_GUILD}).status == 200
    bucket = boto3.client("s3").list_objects_v2(Bucket=get_settings().documents_bucket)
    assert key not in [item["Key"] for item in bucket.get("Contents", [])]


@pytest.mark.parametrize("name", ["configuration", "discord-backup", "template", "platform"])
def test_an_uploaded_backup_answers_its_format_and_is_stored_as_sent(invoke: Any, name: str):
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    answer = invoke("manageBackup", {"action": "create", "guild_id": DEMO_GUILD, "backup_data": data})
    assert answer.status == 201
    created = answer.body["data"]
    assert (created["kind"], created["format"], created["restorable"], created["problems"]) == (
        "uploaded",
        name,
        True,
        [],
    )
    assert fetched(invoke, created["backup_id"]) == data


def test_an_unknown_shape_is_stored_not_restorable_with_its_reason(invoke: Any):
    answer = invoke("manageBackup", {"action": "create", "guild_id": DEMO_GUILD, "backup_data": {"hello": "world"}})
    assert answer.status == 201
    created = answer.body["data"]
    assert (created["format"], created["restorable"]) == ("unknown", False)
    assert [problem["field"] for problem in created["problems"]] == ["roles", "categories", "name"]
    assert fetched(invoke, created["backup_id"]) == {"hello": "world"}


def test_manual_and_uploaded_share_a_retention_and_create_names_what_it_pruned(
    invoke: Any, platform: SandboxState, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SVC_BACKUPS_PER_GUILD", "2")
    get_settings.cache_clear()
    uploaded = invoke("manageBackup", {"action": "create", "guild_id": DEMO_GUILD, "backup_data": {"n": 1}})
    manual = live_create(invoke, members=False)
    assert (uploaded.body["data"]["pruned"], manual.body["data"]["pruned"]) == ([], [])
    third = live_create(invoke, members=False)
    assert third.body["data"]["pruned"] == [uploaded.body["data"]["backup_id"]]
    listed = invoke("manageBackup", {"action": "list", "guild_id": DEMO_GUILD}).body
    assert [backup["backup_id"] for backup in listed["backups"]] == [
        third.body["data"]["backup_id"],
        manual.body["data"]["backup_id"],
    ]
    assert listed["schedule"] is None


def test_list_shows_each_backups_kind_format_restorability_and_maker(invoke: Any, platform: SandboxState):
    live_create(invoke, user_id=BOB_ID, members=False)
    invoke("manageBackup", {"action": "create", "guild_id": DEMO_GUILD, "backup_data": {"hello": "world"}})
    listed = invoke("manageBackup", {"action": "list", "guild_id": DEMO_GUILD}).body["backups"]
    assert [(b["kind"], b["format"], b["restorable"], b.get("made_by")) for b in listed] == [
        ("uploaded", "unknown", False, None),
        ("manual", "configuration", True, BOB_ID),
    ]


def test_delete_removes_one_backup_and_unknown_is_404(invoke: Any, platform: SandboxState):
    kept = live_create(invoke, members=False).body["data"]["backup_id"]
    gone = live_create(invoke, members=False).body["data"]["backup_id"]
    answer = invoke("manageBackup", {"action": "delete", "backup_id": gone, "guild_id": DEMO_GUILD})
    assert (answer.status, answer.body) == (200, {"action": "delete", "data": {"backup_id": gone}})
    listed = invoke("manageBackup", {"action": "list", "guild_id": DEMO_GUILD}).body["backups"]
    assert [backup["backup_id"] for backup in listed] == [kept]
    assert invoke("manageBackup", {"action": "delete", "backup_id": gone, "guild_id": DEMO_GUILD}).status == 404
    other = invoke("manageBackup", {"action": "delete", "backup_id": kept, "guild_id": QUIET_GUILD})
    assert other.status == 404  # another guild's id deletes nothing
    missing = invoke("manageBackup", {"action": "delete", "backup_id": kept})
    assert (missing.status, [d["field"] for d in missing.body["details"]]) == (400, ["guild_id"])
