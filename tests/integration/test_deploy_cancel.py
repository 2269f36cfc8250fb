"""Cancelling a deployment (issue 31, finding 6), through deployToChat's handler against the sandbox and moto: the
lowest manager of the rights lab deploys one channel past the platform's creation quota, so his deployment waits;
the owner's dry runs are answered meanwhile, her deploy is refused naming it and who may cancel it, she cancels it,
and her deploy then runs. Who may cancel whom, and a running deployment stopped between two steps with an exact
journal that its rollback undoes."""

from __future__ import annotations

from typing import Any

import pytest

from svcconf.deployments.common import deployment_repository
from tests.helpers.chat_sandbox import ALICE_ID, BOB_ID, CAROL_ID, DAVE_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import DeployQueue, WorkerContext, deploy_body, link, schedules, writes
from tests.helpers.handlers import bearer

DAY = 24 * 3600
LAB = "Carol's Rights Lab"
DAVE, CAROL, BOB, ALICE = "web-dave", "web-carol", "web-bob", "web-alice"
ONE_CHANNEL = {"name": LAB, "channels": [{"name": "dave-notes"}]}
LOUNGE_TOPIC = {"name": LAB, "channels": [{"name": "lounge", "topic": "Carol's corner"}]}


@pytest.fixture
def lab(invoke, platform, function_environment):
    """The rights lab with dave, carol (the owner), bob (a manager above dave) and alice (an administrator) linked."""
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    for user, chat_user in ((DAVE, DAVE_ID), (CAROL, CAROL_ID), (BOB, BOB_ID), (ALICE, ALICE_ID)):
        link(invoke, platform, user=user, chat_user=chat_user)
    platform.clear_log()
    return platform


def call(invoke, user: str, body: dict[str, Any]):
    return invoke("deployToChat", body, headers=bearer(user))


def deploy(user: str, config: dict[str, Any], project_id: str, **extra: Any) -> dict[str, Any]:
    return {**deploy_body(RIGHTS_LAB, config, **extra), "project_id": project_id}


def info(invoke, user: str, project_id: str, **extra: Any) -> dict[str, Any]:
    answer = call(invoke, user, {"action": "info", "project_id": project_id, **extra})
    assert answer.status == 200, answer.body
    return answer.body


def waiting_deploy(invoke, lab, aws, user: str = DAVE, project_id: str = "dave-proj") -> str:
    """`user` deploys one channel while the lab's channel quota is used up: it waits. Its deployment id."""
    lab.use_quota(RIGHTS_LAB, channels=500, age_seconds=DAY)
    queued = call(invoke, user, deploy(user, ONE_CHANNEL, project_id))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    waiting = info(invoke, user, project_id)
    assert waiting["status"] == "waiting", waiting
    return queued.body["deployment_id"]


def lounge_topic(platform) -> str | None:
    [lounge] = [c for c in platform.guild(RIGHTS_LAB)["channels"].values() if c["name"] == "lounge"]
    return lounge.get("topic")


def test_the_owner_cancels_the_lowest_managers_waiting_deployment_and_her_own_deploy_then_runs(invoke, lab, aws):
    # Given dave's deploy of one channel past the creation quota, waiting for two days
    dave_id = waiting_deploy(invoke, lab, aws)
    [schedule] = schedules()

    # While it waits, the owner's dry runs are answered, and her deploy is refused naming it and who may cancel it
    planned = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj", dry_run=True))
    assert planned.status == 200, planned.body
    assert planned.body["status"] == "planned"
    assert [item["action"] for item in planned.body["plan"] if item["name"] == "lounge"] == ["update"]
    refused = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj"))
    assert refused.status == 409, refused.body
    assert refused.body["deployment_id"] == dave_id
    assert dave_id in refused.body["message"]
    assert "cancel" in refused.body["message"]
    assert DAVE_ID in refused.body["message"]

    # When the owner cancels it
    lab.clear_log()
    cancelled = call(invoke, CAROL, {"action": "cancel", "deployment_id": dave_id})

    # Then it is cancelled, dave sees it so with who did it, and nothing reached the platform but reads
    assert cancelled.status == 200, cancelled.body
    assert (cancelled.body["status"], cancelled.body["deployment_id"]) == ("cancelled", dave_id)
    assert writes(lab) == []
    seen = info(invoke, DAVE, "dave-proj")
    assert (seen["status"], seen["resumes_at"]) == ("cancelled", None)
    assert CAROL_ID in seen["generation"]["result"]
    assert seen["finished_at"] is not None
    # the schedule that would have resumed it does nothing when it fires
    lab.advance_clock(2 * DAY + 5)
    queue = DeployQueue(aws)
    queue.sqs.send_message(QueueUrl=queue.url, MessageBody=schedule["Target"]["Input"])
    queue.drain()
    assert writes(lab) == []
    assert info(invoke, DAVE, "dave-proj")["status"] == "cancelled"
    assert [c for c in lab.guild(RIGHTS_LAB)["channels"].values() if c["name"] == "dave-notes"] == []

    # And the owner's deploy runs
    queued = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj"))
    assert queued.status == 202, queued.body
    queue.drain()
    assert info(invoke, CAROL, "carol-proj")["status"] == "succeeded"
    assert lounge_topic(lab) == "Carol's corner"


def test_a_waiting_deployment_never_refuses_a_rollback_dry_run_but_refuses_the_rollback(invoke, lab, aws):
    # Given carol's finished deploy, then dave's waiting one
    queued = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj"))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    dave_id = waiting_deploy(invoke, lab, aws)

    planned = call(invoke, CAROL, {"action": "rollback", "project_id": "carol-proj", "dry_run": True})
    refused = call(invoke, CAROL, {"action": "rollback", "project_id": "carol-proj"})

    assert planned.status == 200, planned.body
    assert [(i["name"], i["action"]) for i in planned.body["plan"] if i["action"] != "keep"] == [("lounge", "update")]
    assert refused.status == 409, refused.body
    assert refused.body["deployment_id"] == dave_id


@pytest.mark.parametrize(
    "canceller", [DAVE, BOB, ALICE, CAROL], ids=["the deployer", "a manager above him", "an administrator", "the owner"]
)
def test_who_may_cancel_a_deployment_of_the_lowest_manager(invoke, lab, aws, canceller):
    dave_id = waiting_deploy(invoke, lab, aws)

    answer = call(invoke, canceller, {"action": "cancel", "deployment_id": dave_id})

    assert answer.status == 200, answer.body
    assert answer.body["status"] == "cancelled"
    assert info(invoke, DAVE, "dave-proj")["status"] == "cancelled"


def test_managers_may_not_cancel_the_deployment_of_an_administrator_above_them(invoke, lab, aws):
    alice_id = waiting_deploy(invoke, lab, aws, user=ALICE, project_id="alice-proj")

    refused = [call(invoke, user, {"action": "cancel", "deployment_id": alice_id}) for user in (DAVE, BOB)]

    assert [answer.status for answer in refused] == [403, 403], [answer.body for answer in refused]
    assert all(alice_id in answer.body["message"] for answer in refused)
    assert info(invoke, ALICE, "alice-proj")["status"] == "waiting"
    # the owner always may, naming the guild's current deployment
    assert call(invoke, CAROL, {"action": "cancel", "guild_id": RIGHTS_LAB}).body["deployment_id"] == alice_id
    assert info(invoke, ALICE, "alice-proj")["status"] == "cancelled"


def test_cancel_answers_404_for_an_unknown_deployment_and_409_for_a_finished_one(invoke, lab, aws):
    unknown = call(invoke, CAROL, {"action": "cancel", "deployment_id": "dp_0000000000000000beef"})
    nothing = call(invoke, CAROL, {"action": "cancel", "guild_id": RIGHTS_LAB})
    queued = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj"))
    DeployQueue(aws).drain()
    finished = call(invoke, CAROL, {"action": "cancel", "deployment_id": queued.body["deployment_id"]})
    neither = call(invoke, CAROL, {"action": "cancel"})

    assert (unknown.status, nothing.status) == (404, 404)
    assert finished.status == 409, finished.body
    assert finished.body["deployment_id"] == queued.body["deployment_id"]
    assert "succeeded" in finished.body["message"]
    assert neither.status == 400
    assert [detail["field"] for detail in neither.body["details"]] == ["deployment_id"]
    assert info(invoke, CAROL, "carol-proj")["status"] == "succeeded"


def test_a_queued_deployment_cancelled_before_its_worker_runs_writes_nothing_and_frees_the_guild(invoke, lab, aws):
    queued = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj"))
    assert queued.status == 202, queued.body

    cancelled = call(invoke, CAROL, {"action": "cancel", "guild_id": RIGHTS_LAB})
    DeployQueue(aws).drain()

    assert cancelled.body["deployment_id"] == queued.body["deployment_id"]
    assert writes(lab) == []
    assert lounge_topic(lab) != "Carol's corner"
    again = call(invoke, CAROL, deploy(CAROL, LOUNGE_TOPIC, "carol-proj-2"))
    assert again.status == 202, again.body


ROLES = {"name": LAB, "roles": [{"name": f"Crew {index}", "permissions": ["SEND_MESSAGES"]} for index in range(6)]}


class CancelledAfter(WorkerContext):
    """A worker invocation during which the owner cancels its deployment once `steps` steps have been written."""

    steps: int = 2

    def get_remaining_time_in_millis(self) -> int:
        from svcconf.deployments.cancel import cancel_record  # here: main has none, and its other tests still run

        record = deployment_repository().newest(CAROL, "carol-roles")
        if record is not None and record.status == "running" and len(record.journal_created) >= self.steps:
            cancel_record(record, by=CAROL_ID)
        return self.remaining_ms


def test_a_running_deployment_starts_no_more_steps_with_an_exact_journal_that_its_rollback_undoes(invoke, lab, aws):
    before = sorted(role["name"] for role in lab.guild(RIGHTS_LAB)["roles"].values())
    queued = call(invoke, CAROL, deploy(CAROL, ROLES, "carol-roles"))
    assert queued.status == 202, queued.body

    DeployQueue(aws).drain(CancelledAfter)

    done = info(invoke, CAROL, "carol-roles")
    crew = sorted(r["name"] for r in lab.guild(RIGHTS_LAB)["roles"].values() if r["name"].startswith("Crew"))
    assert done["status"] == "cancelled", done
    # The cancel comes once two creations are journaled; the role bucket's next creation may be on its way by then
    # (a step's journaling runs while the next step of its bucket goes): it ends and is journaled, nothing after it
    assert crew in (["Crew 0", "Crew 1"], ["Crew 0", "Crew 1", "Crew 2"]), "it stopped at its next step"
    assert done["steps"]["roles"]["created"] == len(crew)
    record = deployment_repository().get(CAROL, "carol-roles", queued.body["deployment_id"])
    assert record is not None
    live_ids = {r["id"] for r in lab.guild(RIGHTS_LAB)["roles"].values() if r["name"].startswith("Crew")}
    assert set(record.journal_created.values()) == live_ids
    assert f"Created {len(crew)} roles" in done["generation"]["result"]

    # What it wrote stays, and its rollback (by its id) undoes exactly that
    rollback = call(invoke, CAROL, {"action": "rollback", "deployment_id": queued.body["deployment_id"]})
    assert rollback.status == 202, rollback.body
    assert rollback.body["rollback_of"] == queued.body["deployment_id"]
    DeployQueue(aws).drain()
    assert info(invoke, CAROL, "carol-roles")["status"] == "succeeded"
    assert sorted(role["name"] for role in lab.guild(RIGHTS_LAB)["roles"].values()) == before
