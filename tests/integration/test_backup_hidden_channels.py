"""manageBackup `diff` and `restore` in a member's view (docs/05-deploy-engine.md, "Restore"): the channels of the
backup that the member could not view under the backup's own overwrites are left out, against the live guild and
against another backup, and so is every reference to them. In the sandbox's rights lab, dave manages the server but
cannot view staff-secrets (its @everyone overwrite denies VIEW_CHANNEL, and no role of his allows it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.chat_sandbox import CAROL_ID, DAVE_ID, RIGHTS_LAB

STAFF_SECRETS, LOUNGE = "1191000000000003064", "1191000000000003063"


@pytest.fixture
def lab(invoke, platform, function_environment):
    function_environment("ManageBackupFunction")
    return platform


def bot(invoke: Any, body: dict[str, Any]) -> Any:
    return invoke("manageBackup", body)


def backup_now(invoke) -> str:
    """A backup the service makes from the live lab (as the owner's bot would): staff-secrets included."""
    created = bot(invoke, {"action": "create", "guild_id": RIGHTS_LAB, "user_id": CAROL_ID, "members": False})
    assert created.status == 201, created.body
    return created.body["data"]["backup_id"]


def second_actor(platform, *, delete_staff: bool = False, staff_topic: str | None = None) -> None:
    """Someone in the platform's client: deletes staff-secrets or changes its topic, and renames lounge."""
    guild = platform.guilds[RIGHTS_LAB]
    with platform.lock:
        if delete_staff:
            del guild["channels"][STAFF_SECRETS]
        if staff_topic is not None:
            guild["channels"][STAFF_SECRETS]["topic"] = staff_topic
        guild["channels"][LOUNGE]["name"] = "lounge-renamed"


def names(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted((c["kind"], c["name"], c["action"]) for c in answer["changes"] if c["kind"] != "overwrite")


def assert_never_named(answer: Any) -> None:
    assert "staff-secrets" not in str(answer.body)
    assert STAFF_SECRETS not in str(answer.body)


def test_a_diff_against_the_live_guild_leaves_out_what_the_member_could_not_view_in_the_backup(invoke, lab):
    # Given a backup holding staff-secrets, then deleted by a second actor (the guild no longer hides it from anyone)
    backup_id = backup_now(invoke)
    second_actor(lab, delete_staff=True)
    # When the bot's own view and dave's are compared with the live guild
    bots = bot(invoke, {"action": "diff", "backup_id": backup_id, "against": "live"})
    daves = bot(invoke, {"action": "diff", "backup_id": backup_id, "against": "live", "user_id": DAVE_ID})
    assert (bots.status, daves.status) == (200, 200), (bots.body, daves.body)
    # Then the bot's names the channel to create again; dave's names it nowhere, and the rest is the same
    assert ("channel", "staff-secrets", "create") in names(bots.body)
    assert_never_named(daves)
    assert names(daves.body) == [item for item in names(bots.body) if item[1] != "staff-secrets"]
    assert ("channel", "lounge", "update") in names(daves.body)


def test_a_diff_against_a_live_guild_that_still_has_the_hidden_channel_does_not_offer_to_create_it(invoke, lab):
    backup_id = backup_now(invoke)
    second_actor(lab)
    daves = bot(invoke, {"action": "diff", "backup_id": backup_id, "user_id": DAVE_ID})
    assert daves.status == 200, daves.body
    assert_never_named(daves)
    assert names(daves.body) == [("channel", "lounge", "update")]


def test_a_diff_against_another_backup_leaves_out_what_the_member_could_not_view_in_either(invoke, lab):
    # Given two backups between which a second actor changed staff-secrets' topic and renamed lounge
    older = backup_now(invoke)
    second_actor(lab, staff_topic="the new raise list")
    newer = backup_now(invoke)
    # When they are compared in the bot's view and in dave's
    bots = bot(invoke, {"action": "diff", "backup_id": older, "against": newer})
    daves = bot(invoke, {"action": "diff", "backup_id": older, "against": newer, "user_id": DAVE_ID})
    assert (bots.status, daves.status) == (200, 200), (bots.body, daves.body)
    # Then only the bot's names staff-secrets
    assert ("channel", "staff-secrets", "update") in names(bots.body)
    assert_never_named(daves)
    assert names(daves.body) == [("channel", "lounge", "update")]
    assert daves.body["counts"]["update"] == 1


def test_a_restore_by_the_member_never_brings_back_what_they_could_not_view(invoke, lab):
    # Given a backup holding staff-secrets, deleted since
    backup_id = backup_now(invoke)
    second_actor(lab, delete_staff=True)
    body = {"action": "restore", "backup_id": backup_id, "guild_id": RIGHTS_LAB, "dry_run": True}
    # When dave and the owner each ask for the restore's dry run
    daves = bot(invoke, {**body, "user_id": DAVE_ID})
    carols = bot(invoke, {**body, "user_id": CAROL_ID})
    assert (daves.status, carols.status) == (200, 200), (daves.body, carols.body)
    # Then the owner's plan creates staff-secrets again; dave's renames lounge back and never names it
    planned = {(i["kind"], i["name"], i["action"]) for i in carols.body["plan"] if i["action"] != "keep"}
    assert ("channel", "staff-secrets", "create") in planned
    assert_never_named(daves)
    changed = [(i["kind"], i["name"], i["action"]) for i in daves.body["plan"] if i["action"] != "keep"]
    assert changed == [("channel", "lounge", "update")]


def test_the_backups_references_to_a_hidden_channel_are_left_out_of_the_members_diff_and_restore(invoke, lab):
    # Given a rule that alerts staff-secrets and exempts it, backed up, then its keywords changed by a second actor
    guild = lab.guilds[RIGHTS_LAB]
    with lab.lock:
        guild["automod_rules"] = {
            "1191000000000007001": {
                "id": "1191000000000007001",
                "guild_id": RIGHTS_LAB,
                "creator_id": CAROL_ID,
                "name": "Invite links",
                "event_type": 1,
                "trigger_type": 1,
                "trigger_metadata": {"keyword_filter": ["discord.gg*"], "regex_patterns": [], "allow_list": []},
                "actions": [{"type": 1, "metadata": {}}, {"type": 2, "metadata": {"channel_id": STAFF_SECRETS}}],
                "enabled": True,
                "exempt_roles": [],
                "exempt_channels": [STAFF_SECRETS, LOUNGE],
            }
        }
    backup_id = backup_now(invoke)
    with lab.lock:
        guild["automod_rules"]["1191000000000007001"]["trigger_metadata"]["keyword_filter"] = ["dsc.gg*"]
    # When dave compares the backup with the live guild and asks for its restore's dry run
    diffed = bot(invoke, {"action": "diff", "backup_id": backup_id, "user_id": DAVE_ID})
    body = {"action": "restore", "backup_id": backup_id, "guild_id": RIGHTS_LAB, "user_id": DAVE_ID, "dry_run": True}
    planned = bot(invoke, body)
    assert (diffed.status, planned.status) == (200, 200), (diffed.body, planned.body)
    # Then both change the rule's keywords alone and name the hidden channel nowhere
    for changes in (diffed.body["changes"], planned.body["plan"]):
        [rule] = [c for c in changes if c["kind"] == "automod_rule"]
        assert (rule["action"], [c["field"] for c in rule["changes"]]) == ("update", ["keywords"])
    assert_never_named(diffed)
    assert_never_named(planned)
