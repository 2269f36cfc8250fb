"""The caller's rights are checked again when a deployment runs: a waiting deployment whose caller lost
MANAGE_ROLES before it resumes ends with the reason and writes nothing more."""

from __future__ import annotations

import pytest

from tests.helpers.chat_sandbox import ALICE_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import USER, DeployQueue, deploy_body, link, schedules, writes
from tests.helpers.handlers import bearer

DAY = 24 * 3600
MANAGERS = "1191000000000002063"  # the lab's MANAGE_GUILD-only role
CONFIG = {"name": "Crew", "roles": [{"name": f"Crew {index}", "permissions": ["SEND_MESSAGES"]} for index in range(3)]}


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)  # alice: an administrator of the lab through its Admins role
    platform.clear_log()
    return platform


def info(invoke) -> dict:
    return invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body


def test_a_waiting_deployment_whose_caller_lost_manage_roles_ends_and_writes_nothing_more(invoke, linked, aws):
    # Given a deploy of three roles that waits for the platform's role quota (used up a day ago)
    linked.use_quota(RIGHTS_LAB, roles=250, age_seconds=DAY)
    queue = DeployQueue(aws)
    queued = invoke("deployToChat", deploy_body(RIGHTS_LAB, CONFIG), headers=bearer(USER))
    assert queued.status == 202, queued.body
    queue.drain()
    waiting = info(invoke)
    assert waiting["status"] == "waiting", waiting
    assert waiting["steps"]["roles"]["created"] == 0
    # the server's name went beside the roles' bucket, which the quota closed (the steps run side by side)
    assert waiting["steps"]["settings"]["updated"] == 1
    [schedule] = schedules()

    # When alice loses her Admins role for a MANAGE_GUILD-only one before the schedule resumes it
    with linked.lock:
        linked.guilds[RIGHTS_LAB]["members"][ALICE_ID]["roles"] = [MANAGERS]
    linked.advance_clock(DAY + 5)
    linked.clear_log()
    queue.sqs.send_message(QueueUrl=queue.url, MessageBody=schedule["Target"]["Input"])
    queue.drain()

    # Then it ends (partial: the name was written before the wait), naming what she no longer holds, and nothing
    # more reached the guild
    done = info(invoke)
    assert done["status"] == "partial", done
    assert done["steps"]["roles"]["created"] == 0
    assert "MANAGE_ROLES" in done["generation"]["error"]
    assert "your rights or the server changed" in done["generation"]["error"]
    assert writes(linked) == []
    crew = [r for r in linked.guild(RIGHTS_LAB)["roles"].values() if r["name"].startswith("Crew")]
    assert crew == []


def test_a_rollback_its_caller_may_no_longer_make_is_refused_per_object_before_anything_is_queued(invoke, linked, aws):
    # Given alice's finished deploy of three roles to the lab
    queue = DeployQueue(aws)
    queued = invoke("deployToChat", deploy_body(RIGHTS_LAB, CONFIG), headers=bearer(USER))
    assert queued.status == 202, queued.body
    queue.drain()
    assert info(invoke)["status"] == "succeeded"
    # When she holds only MANAGE_GUILD and asks to roll it back (its plan deletes the three roles)
    with linked.lock:
        linked.guilds[RIGHTS_LAB]["members"][ALICE_ID]["roles"] = [MANAGERS]
    linked.clear_log()
    body = {"action": "rollback", "project_id": "proj-1", "guild_id": RIGHTS_LAB}
    refused = invoke("deployToChat", body, headers=bearer(USER))
    # Then 403 names each role, nothing is queued and the roles stay
    assert refused.status == 403, refused.body
    assert len(refused.body["details"]) == 3
    assert all("MANAGE_ROLES" in detail["message"] for detail in refused.body["details"])
    assert queue.receive() == []
    assert writes(linked) == []
    assert info(invoke)["kind"] == "deploy"
