"""A deploy that meets the platform's creation quota: it keeps what it made, waits with `resumes_at` instead of
hammering the closed route, holds its guild, ignores a re-delivered message, and resumes from its schedule."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from svcconf.settings import get_settings
from svcconf.store.quota import QuotaRepository
from tests.helpers.deploy_worker import DEMO, USER, DeployQueue, deploy_body, link, schedules
from tests.helpers.handlers import bearer

ROLE_CREATE = "/guilds/{guild_id}/roles"
DAY = 24 * 3600
CONFIG = {
    "name": "Crew",
    "roles": [{"name": f"Crew {index:02d}", "permissions": ["SEND_MESSAGES"]} for index in range(12)],
}


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def info(invoke) -> dict:
    return invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body


def crew(platform) -> list[str]:
    return sorted(role["name"] for role in platform.guild(DEMO)["roles"].values() if role["name"].startswith("Crew"))


def after_first_429(platform) -> list[dict]:
    entries = platform.requests("POST", ROLE_CREATE)
    first = next(index for index, entry in enumerate(entries) if entry["status"] == 429)
    return entries[first + 1 :]


def test_a_deploy_past_the_quota_waits_then_resumes_from_its_schedule_and_succeeds(invoke, linked, aws):
    linked.use_quota(DEMO, roles=245, age_seconds=DAY)  # made a day ago: they free up in 24 hours
    queue = DeployQueue(aws)
    queued = invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    assert queued.status == 202, queued.body
    original_job = queue.receive()[0]
    queue.sqs.change_message_visibility(
        QueueUrl=queue.url, ReceiptHandle=original_job["ReceiptHandle"], VisibilityTimeout=0
    )

    queue.drain()

    waiting = info(invoke)
    assert waiting["status"] == "waiting"
    assert waiting["steps"]["roles"]["created"] == 5
    assert crew(linked) == [f"Crew {index:02d}" for index in range(5)]
    resumes_at = datetime.fromisoformat(waiting["resumes_at"])
    assert abs(resumes_at - (datetime.now(UTC) + timedelta(seconds=DAY))) < timedelta(seconds=30)
    assert "resumes by itself at" in waiting["wait_reason"]
    assert after_first_429(linked) == [], "nothing more was sent to the closed route"
    [schedule] = schedules()
    assert schedule["ActionAfterCompletion"] == "DELETE"
    assert schedule["Target"]["Arn"] == get_settings().deploy_queue_arn
    assert schedule["ScheduleExpression"] == f"at({resumes_at.strftime('%Y-%m-%dT%H:%M:%S')})"

    # A worker killed while the deployment waits, its message delivered again: nothing is sent, nothing changes.
    linked.clear_log()
    queue.sqs.send_message(QueueUrl=queue.url, MessageBody=original_job["Body"])
    queue.drain()
    assert linked.request_log == []
    assert info(invoke)["status"] == "waiting"

    # While it waits, the guild is its own: a rollback or another deploy is refused, naming it and its time.
    for body in (deploy_body(DEMO, CONFIG), {"action": "rollback", "project_id": "proj-1", "guild_id": DEMO}):
        refused = invoke("deployToChat", body, headers=bearer(USER))
        assert refused.status == 409
        assert waiting["deployment_id"] in refused.body["message"]
        assert resumes_at.isoformat(timespec="seconds") in refused.body["message"]

    # A day later on the platform's clock, the schedule's delivery resumes it: the 7 others, none twice.
    linked.advance_clock(DAY + 5)
    queue.sqs.send_message(QueueUrl=queue.url, MessageBody=schedule["Target"]["Input"])
    queue.drain()

    done = info(invoke)
    assert done["status"] == "succeeded", done
    assert done["steps"]["roles"]["created"] == 12
    assert done["resumes_at"] is None
    assert crew(linked) == [role["name"] for role in CONFIG["roles"]]
    assert [entry["status"] for entry in linked.requests("POST", ROLE_CREATE)] == [200] * 7


def test_the_dry_run_and_the_202_warn_of_the_quota_with_what_fits_now_and_the_expected_finish(invoke, linked):
    made_at = datetime.now(UTC) - timedelta(seconds=DAY)
    linked.use_quota(DEMO, roles=245, age_seconds=DAY)
    QuotaRepository(get_settings().deployments_table).record_creations(
        DEMO, "role", [str(index) for index in range(245)], made_at
    )

    planned = invoke("deployToChat", deploy_body(DEMO, CONFIG, dry_run=True), headers=bearer(USER))
    queued = invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))

    [warning] = [warning for warning in planned.body["warnings"] if warning["rule"] == "quota"]
    assert warning["field"] == "roles"
    assert "5 of the 12 planned can be made now" in warning["message"]
    assert {key: warning["quota"][key] for key in ("kind", "planned", "left", "fits_now")} == {
        "kind": "role",
        "planned": 12,
        "left": 5,
        "fits_now": 5,
    }
    finish = datetime.fromisoformat(warning["quota"]["expected_finish"])
    assert abs(finish - (made_at + timedelta(hours=48))) < timedelta(seconds=1)
    assert queued.status == 202
    assert [w["quota"]["fits_now"] for w in queued.body["warnings"]] == [5]


def test_a_deploy_within_the_quota_carries_no_quota_warning(invoke, linked):
    planned = invoke("deployToChat", deploy_body(DEMO, CONFIG, dry_run=True), headers=bearer(USER))

    assert [warning for warning in planned.body["warnings"] if warning["rule"] == "quota"] == []


def test_the_worker_remembers_the_quota_bucket_so_the_next_plan_knows_what_is_left(invoke, linked, aws):
    linked.use_quota(DEMO, roles=245, age_seconds=DAY)
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    DeployQueue(aws).drain()

    bucket = QuotaRepository(get_settings().deployments_table).bucket(DEMO, "role", datetime.now(UTC))

    assert bucket is not None
    assert (bucket.limit, bucket.remaining) == (250, 0)
    assert abs(bucket.resets_at - (datetime.now(UTC) + timedelta(seconds=DAY))) < timedelta(seconds=30)
    assert json.loads(json.dumps(info(invoke)["steps"]["roles"]))["created"] == 5
