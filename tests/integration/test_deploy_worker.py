"""The deploy worker under what goes wrong: its time running low, a platform outage, objects the platform
refuses. Each time the deployment ends where it should, with nothing created twice."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import boto3
import pytest

from svcconf.chat import get_chat_client
from svcconf.settings import get_settings
from svcconf.store.deployment_records import DeploymentRepository
from tests.helpers.deploy_worker import DEMO, USER, DeployQueue, WorkerContext, deploy_body, link, live_roles
from tests.helpers.handlers import bearer

ROLES = [{"name": f"Crew {index:02d}", "permissions": ["SEND_MESSAGES"]} for index in range(12)]
CONFIG = {
    "name": "Crew",
    "roles": ROLES,
    "categories": [
        {
            "name": "Decks",
            "overwrites": [{"role": "Crew 00", "allow": ["VIEW_CHANNEL"]}],
            "channels": [{"name": f"deck-{index}", "topic": f"Deck {index}"} for index in range(6)],
        }
    ],
}


@dataclass
class Countdown(WorkerContext):
    """An invocation whose time runs out after `calls` looks at the clock: the worker must hand over."""

    calls: int = 8
    seen: list[int] = field(default_factory=list)

    def get_remaining_time_in_millis(self) -> int:
        self.seen.append(1)
        return 300_000 if len(self.seen) <= self.calls else 5_000


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def info(invoke) -> dict:
    return invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body


def creations(platform) -> Counter:
    return Counter(
        (entry["route"], entry["status"])
        for entry in platform.request_log
        if entry["method"] == "POST" and entry["route"] in ("/guilds/{guild_id}/roles", "/guilds/{guild_id}/channels")
    )


def assert_deployed_once(platform) -> None:
    roles = [role["name"] for role in platform.guild(DEMO)["roles"].values()]
    channels = [channel["name"] for channel in platform.guild(DEMO)["channels"].values()]
    assert sorted(name for name in roles if name.startswith("Crew")) == [role["name"] for role in ROLES]
    assert sorted(name for name in channels if name.startswith("deck-")) == [f"deck-{index}" for index in range(6)]
    assert channels.count("Decks") == 1


def test_a_worker_running_out_of_time_hands_the_rest_to_the_next_invocation(invoke, linked, aws):
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))

    answers = DeployQueue(aws).drain(lambda: Countdown(calls=6))

    assert len(answers) > 1, "the deployment took more than one invocation"
    assert_deployed_once(linked)
    done = info(invoke)
    assert done["status"] == "succeeded"
    assert done["steps"]["roles"]["created"] == 12
    assert done["steps"]["channels"]["created"] == 6
    assert done["steps"]["roles"]["planned"] == 12, "the counts planned at the start stay"


def test_a_platform_outage_midway_requeues_the_rest_and_the_deploy_still_completes(invoke, linked, aws):
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    queue = DeployQueue(aws)
    roles_created = Counter()

    def outage_after_five_roles(response, *args, **kwargs):  # the worker's own client, watching its traffic
        if response.request.method == "POST" and response.request.url.endswith("/roles"):
            roles_created["roles"] += 1
            if roles_created["roles"] == 5:
                # From here the platform answers 503 until the outage ends: the 6th role and its 3 retries, and
                # whatever steps run beside it in the other buckets.
                linked.configure(fail_next=1000)

    get_chat_client().session.hooks["response"].append(outage_after_five_roles)
    queue.drain()
    paused = info(invoke)
    linked.configure(fail_next=0)  # the outage ends
    time.sleep(1.2)  # the continuation waits out its delay
    queue.drain()

    assert paused["status"] == "running"
    assert paused["steps"]["roles"]["created"] == 5
    assert_deployed_once(linked)
    assert info(invoke)["status"] == "succeeded"


def test_objects_the_platform_refuses_are_reported_with_their_reason_and_the_rest_is_applied(invoke, linked, aws):
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    # Between the request's preflight and the worker, someone takes VIEW_CHANNEL from the bot's role.
    bot_role = next(role for role in live_roles(linked, DEMO).values() if role.get("managed"))
    guild = linked.guilds[DEMO]
    everyone = guild["roles"][DEMO]
    view_channel = 1 << 10
    with linked.lock:
        guild["roles"][bot_role["id"]]["permissions"] = str(int(bot_role["permissions"]) & ~view_channel)
        everyone["permissions"] = str(int(everyone["permissions"]) & ~view_channel)

    DeployQueue(aws).drain()

    done = info(invoke)
    assert done["status"] == "partial"
    assert done["steps"]["roles"]["created"] == 12
    assert done["steps"]["categories"]["failed"] == 1
    assert done["steps"]["channels"]["failed"] == 6
    reasons = {(error["kind"], error["name"]): error["message"] for error in done["steps"]["errors"]}
    assert "50013" in reasons[("category", "Decks")]
    assert reasons[("channel", "Decks / deck-0")] == "its category could not be created"
    assert done["steps"]["overwrites"]["failed"] == 1 + 6, "the category's overwrite, and each channel's copy of it"
    assert done["generation"]["error"].startswith("14 objects failed")


def test_a_message_delivered_again_after_success_changes_nothing(invoke, linked, aws):
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    queue = DeployQueue(aws)
    (message,) = queue.receive()
    event = {"Records": [queue.record(message)]}
    handler = queue.handler()

    first = handler(event, WorkerContext())
    linked.clear_log()
    again = handler(event, WorkerContext())

    assert first == again == {"batchItemFailures": []}
    assert creations(linked) == Counter()
    assert info(invoke)["status"] == "succeeded"


def test_an_unexpected_failure_on_the_last_delivery_fails_the_deployment_and_frees_the_guild(invoke, linked, aws):
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    queue = DeployQueue(aws)
    boto3.client("dynamodb").delete_table(TableName=aws.refs["BackupsTable"])  # the snapshot cannot be stored
    (message,) = queue.receive()
    record = queue.record(message)

    early = queue.handler()({"Records": [record]}, WorkerContext())
    still_running = info(invoke)["status"]
    record["attributes"]["ApproximateReceiveCount"] = "5"  # the queue's maxReceiveCount in template.yaml
    last = queue.handler()({"Records": [record]}, WorkerContext())

    assert early["batchItemFailures"] == last["batchItemFailures"] == [{"itemIdentifier": message["MessageId"]}]
    assert still_running == "queued"
    done = info(invoke)
    assert done["status"] == "failed"
    assert "failed unexpectedly" in done["generation"]["error"]
    again = invoke("deployToChat", deploy_body(DEMO, CONFIG, dry_run=False), headers=bearer(USER))
    assert again.status == 202, "the guild's lock was released"


class Killed(BaseException):
    """What a killed process looks like from inside: nothing after it runs, no except Exception catches it."""


def test_an_object_created_just_before_a_kill_is_found_in_the_journal_after_the_resume(
    invoke, linked, aws, monkeypatch
):
    # Given a worker killed right after the platform created its 3rd role, before that role's checkpoint
    monkeypatch.setenv("SVC_DEPLOY_MARGIN_SECONDS", "0.5")
    get_settings.cache_clear()
    invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    queue = DeployQueue(aws)
    (message,) = queue.receive()
    event = {"Records": [queue.record(message)]}
    roles = Counter()

    def killed_after_three_roles(response, *args, **kwargs):
        if response.request.method == "POST" and response.request.url.endswith("/roles"):
            roles["created"] += 1
            if roles["created"] == 3:
                raise Killed

    get_chat_client().session.hooks["response"].append(killed_after_three_roles)
    with pytest.raises(Killed):
        queue.handler()(event, WorkerContext(remaining_ms=1500))
    get_chat_client().session.hooks["response"].clear()
    checkpointed = info(invoke)["steps"]["roles"]["created"]

    # When the message comes again, once the killed invocation's time is over
    time.sleep(1.6)
    resumed = queue.handler()(event, WorkerContext())

    # Then the third role was not created twice, and it is counted and journalled as this deployment's
    assert resumed == {"batchItemFailures": []}
    assert checkpointed == 2
    assert_deployed_once(linked)
    done = info(invoke)
    assert done["status"] == "succeeded"
    assert done["steps"]["roles"]["created"] == 12
    record = DeploymentRepository(get_settings().deployments_table).newest(USER, "proj-1")
    assert len([key for key in record.journal_created if key.startswith("role:")]) == 12
