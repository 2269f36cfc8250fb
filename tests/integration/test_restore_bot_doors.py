"""manageBackup `cancel` and `rollback` of a restore made through the bot: deployToChat's own engine by the bot's
door, for the chat user the bot names (the restore's own, or one who outranks them). A cancelled queued restore
writes nothing when its worker runs and frees the guild; the rollback of a finished one deletes what it re-created,
puts back what it renamed, and takes back the member grants it made. An id that is not a restore made through the
bot is unknown to all three doors."""

from __future__ import annotations

from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import ALICE, DeployQueue, without_ids, writes
from tests.helpers.rollbacks import call
from tests.integration.test_restore import MEMBERS, backed_up, bot, held, nuke, restore_body

__all__ = ["backed_up"]  # the fixture, shared with test_restore.py

ACKNOWLEDGED = {"acknowledge": ["member-dangerous-role"]}


def test_a_queued_restore_cancelled_through_the_bot_writes_nothing_and_frees_the_guild(
    invoke, platform, backed_up, aws
):
    backup_id, _ = backed_up
    nuke(platform)
    queued = bot(invoke, restore_body(backup_id, **ACKNOWLEDGED))
    assert queued.status == 202, queued.body
    restore_id = queued.body["deployment_id"]
    platform.clear_log()

    cancelled = bot(invoke, {"action": "cancel", "deployment_id": restore_id, "user_id": ALICE})
    DeployQueue(aws).drain()  # the worker gets the restore's job: it stops at once

    assert cancelled.status == 200, cancelled.body
    assert (cancelled.body["action"], cancelled.body["status"]) == ("cancel", "cancelled")
    assert (cancelled.body["deployment_id"], cancelled.body["kind"]) == (restore_id, "restore")
    assert writes(platform) == []
    assert held(platform) == {user_id: [] for user_id in MEMBERS}
    seen = bot(invoke, {"action": "info", "deployment_id": restore_id}).body
    assert (seen["status"], seen["steps"]["members"]) == ("cancelled", None)
    assert ALICE in seen["generation"]["result"]
    # ended: nothing more to cancel; the guild is free for the next restore
    again = bot(invoke, {"action": "cancel", "deployment_id": restore_id, "user_id": ALICE})
    assert again.status == 409, again.body
    assert again.body["deployment_id"] == restore_id
    assert bot(invoke, restore_body(backup_id, **ACKNOWLEDGED)).status == 202


def test_a_member_who_may_not_deploy_there_may_not_cancel_it(invoke, platform, backed_up, aws):
    backup_id, _ = backed_up
    queued = bot(invoke, restore_body(backup_id, **ACKNOWLEDGED))
    crew = next(user_id for user_id, role in MEMBERS.items() if role == "Crew")

    refused = bot(invoke, {"action": "cancel", "deployment_id": queued.body["deployment_id"], "user_id": crew})

    assert refused.status == 403, refused.body
    assert bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]}).body["status"] == "queued"


def test_the_rollback_of_a_restore_made_through_the_bot_takes_back_what_it_made_and_the_members_roles(
    invoke, platform, backed_up, aws
):
    # Given the nuked guild restored through the bot: Guests and memes made again, general renamed back, five
    # members given their roles back
    backup_id, _ = backed_up
    nuke(platform)
    nuked = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    restore_id = bot(invoke, restore_body(backup_id, **ACKNOWLEDGED)).body["deployment_id"]
    DeployQueue(aws).drain()
    assert held(platform) == {user_id: [role] for user_id, role in MEMBERS.items()}
    platform.clear_log()

    queued = bot(invoke, {"action": "rollback", "deployment_id": restore_id, "user_id": ALICE})
    DeployQueue(aws).drain()

    assert queued.status == 202, queued.body
    assert (queued.body["kind"], queued.body["status"], queued.body["rollback_of"]) == (
        "rollback",
        "queued",
        restore_id,
    )
    done = bot(invoke, {"action": "info", "deployment_id": queued.body["deployment_id"]}).body
    assert done["status"] == "succeeded", done
    # Guests' grant goes with the role the restore made (deleted first): the four others are taken back one by one
    kept_roles = [user_id for user_id, role in MEMBERS.items() if role != "Guests"]
    assert done["steps"]["members"]["removed"] == len(kept_roles) == 4
    # the guild is as the restore found it: what it made deleted, what it renamed named back, the grants taken back
    after = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    assert without_ids(after) == without_ids(nuked)
    assert held(platform) == {user_id: [] for user_id in MEMBERS}
    deleted = sorted(e["route"] for e in platform.requests("DELETE"))
    assert deleted == [
        *["/channels/{channel_id}"],
        *["/guilds/{guild_id}/members/{user_id}/roles/{role_id}"] * len(kept_roles),
        "/guilds/{guild_id}/roles/{role_id}",
    ]
    # a restore rolled back is not rolled back twice
    twice = bot(invoke, {"action": "rollback", "deployment_id": restore_id, "user_id": ALICE})
    assert twice.status == 404, twice.body


def test_an_id_that_is_not_a_restore_made_through_the_bot_is_unknown_to_info_cancel_and_rollback(
    invoke, platform, backed_up
):
    deployed = call(invoke, {"action": "info", "project_id": "proj-1"}).body["deployment_id"]  # deployToChat's
    platform.clear_log()

    answers = [
        bot(invoke, {"action": "info", "deployment_id": deployed}),
        bot(invoke, {"action": "cancel", "deployment_id": deployed, "user_id": ALICE}),
        bot(invoke, {"action": "rollback", "deployment_id": deployed, "user_id": ALICE}),
        bot(invoke, {"action": "rollback", "deployment_id": "dp_0000000000000000beef", "user_id": ALICE}),
    ]

    assert [answer.status for answer in answers] == [404, 404, 404, 404], [answer.body for answer in answers]
    assert writes(platform) == []


def test_deploy_to_chat_cancels_a_restore_by_its_deployment_id(invoke, platform, backed_up):
    # (its reference item, which `cancel` finds a deployment by, was overwritten by the restore's own pointer: a 500)
    backup_id, _ = backed_up
    nuke(platform)
    body = {"action": "restore", "backup_id": backup_id, "guild_id": BUILD_GUILD, "members": False}
    queued = call(invoke, body)
    assert queued.status == 202, queued.body

    cancelled = call(invoke, {"action": "cancel", "deployment_id": queued.body["deployment_id"]})

    assert cancelled.status == 200, cancelled.body
    assert (cancelled.body["status"], cancelled.body["kind"]) == ("cancelled", "restore")
