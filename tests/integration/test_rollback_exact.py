"""A rollback undoes exactly its deployment's work: what a person did in the server meanwhile survives, named
where it touched the deployment's own objects. The person acts through the platform's HTTP API (the sandbox's),
not through the service."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from svcconf.chat import get_chat_client
from svcconf.settings import get_settings
from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import (
    DEMO,
    USER,
    DeployQueue,
    WorkerContext,
    deploy_body,
    link,
    live_channels,
    writes,
)
from tests.helpers.handlers import BOT_TOKEN, bearer

CONFIG: dict[str, Any] = {
    "name": "Help",
    "roles": [{"name": "Helper", "permissions": ["SEND_MESSAGES"]}, {"name": "Guest", "permissions": []}],
    "categories": [
        {
            "name": "Help Desk",
            "overwrites": [{"role": "Helper", "allow": ["VIEW_CHANNEL"]}],
            "channels": [
                {"name": "open-tickets", "topic": "One ticket per thread"},
                {"name": "closed-tickets", "topic": "Kept for a month"},
            ],
        }
    ],
    "channels": [{"name": "Voice Lobby", "type": "voice", "user_limit": 5}],
}


class Person:
    """Someone with the rights to change the server, using the platform's API directly (a moderation tool, the
    platform's own client): no deployment of the service, no journal."""

    def __init__(self, platform_server):
        self.api = platform_server.base_url
        self.headers = {"Authorization": f"Bot {BOT_TOKEN}", "X-Audit-Log-Reason": "a moderator"}

    def create_channel(self, name: str, parent_id: str | None = None, **fields: Any) -> dict[str, Any]:
        body = {"name": name, "type": 0, "parent_id": parent_id, **fields}
        answer = requests.post(f"{self.api}/guilds/{DEMO}/channels", json=body, headers=self.headers, timeout=10)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def edit_channel(self, channel_id: str, **fields: Any) -> None:
        answer = requests.patch(f"{self.api}/channels/{channel_id}", json=fields, headers=self.headers, timeout=10)
        assert answer.status_code == 200, answer.text


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


@pytest.fixture
def person(platform_server) -> Person:
    return Person(platform_server)


@dataclass
class TimeRunsOut(WorkerContext):
    """An invocation whose time runs low once `done()` holds: the worker hands the rest over."""

    done: Callable[[], bool] = lambda: False

    def get_remaining_time_in_millis(self) -> int:
        return 1_000 if self.done() else 300_000


def info(invoke) -> dict[str, Any]:
    return invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body


ROLLBACK = {"action": "rollback", "project_id": "proj-1"}


def roll_back_by_project(invoke, aws) -> dict[str, Any]:
    queued = invoke("deployToChat", ROLLBACK, headers=bearer(USER))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    return info(invoke)


def test_a_persons_channel_in_the_deployments_category_and_their_topic_survive_the_rollback_which_names_them(
    invoke, linked, aws, person
):
    before = {channel["name"] for channel in linked.guild(DEMO)["channels"].values()}
    assert invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER)).status == 202
    DeployQueue(aws).drain()
    assert info(invoke)["status"] == "succeeded"
    made = live_channels(linked, DEMO)
    person.create_channel("persons-corner", parent_id=made["Help Desk"]["id"])
    person.edit_channel(made["open-tickets"]["id"], topic="Tickets moved to the forum")
    linked.clear_log()

    planned = invoke("deployToChat", {**ROLLBACK, "dry_run": True}, headers=bearer(USER))

    assert planned.status == 200, planned.body
    assert planned.body["status"] == "planned"
    assert planned.body["plan_id"].startswith("plan_")
    deletes = sorted((item["kind"], item["name"]) for item in planned.body["plan"] if item["action"] == "delete")
    assert deletes == [("channel", "Voice Lobby"), ("channel", "closed-tickets"), ("role", "Guest"), ("role", "Helper")]
    assert [warning["message"] for warning in planned.body["warnings"]] == [
        "channel 'open-tickets': changed since the deployment (topic): left as it is",
        "category 'Help Desk': kept: it holds 2 channels the deployment did not make or that changed since",
    ]
    assert writes(linked) == []
    assert info(invoke)["kind"] == "deploy"  # the dry run queued nothing

    undone = roll_back_by_project(invoke, aws)

    assert (undone["kind"], undone["status"]) == ("rollback", "succeeded"), undone
    channels = live_channels(linked, DEMO)
    assert set(channels) == before | {"Help Desk", "open-tickets", "persons-corner"}
    assert channels["open-tickets"]["topic"] == "Tickets moved to the forum"
    assert channels["persons-corner"]["parent_id"] == channels["Help Desk"]["id"]
    roles = {role["name"] for role in linked.guild(DEMO)["roles"].values()}
    assert not roles & {"Helper", "Guest"}
    assert undone["steps"]["errors"] == [
        {"kind": "channel", "name": "open-tickets", "message": "changed since the deployment (topic): left as it is"},
        {
            "kind": "category",
            "name": "Help Desk",
            "message": "kept: it holds 2 channels the deployment did not make or that changed since",
        },
    ]
    assert (undone["steps"]["channels"]["deleted"], undone["steps"]["roles"]["deleted"]) == (2, 2)


def test_a_channel_a_person_made_while_the_deployment_was_paused_is_never_taken_for_its_own(
    invoke, linked, aws, person
):
    """The deployment stops halfway (its invocation's time ran out); meanwhile a person makes a channel exactly
    like one it has still to make. The resumed run finds it by name and keeps it, but never journals it as
    created: the rollback leaves it."""
    assert invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER)).status == 202
    queue = DeployQueue(aws)
    [message] = queue.receive()

    # The first invocation makes the roles, the category and its first channel, then hands the rest over.
    def first_channel_made() -> bool:
        return "open-tickets" in live_channels(linked, DEMO)

    queue.handler()({"Records": [queue.record(message)]}, TimeRunsOut(done=first_channel_made))
    queue.sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    made = live_channels(linked, DEMO)
    assert "Help Desk" in made
    assert "closed-tickets" not in made
    mine = person.create_channel("closed-tickets", parent_id=made["Help Desk"]["id"], topic="Kept for a month")
    get_chat_client.cache_clear()

    queue.drain()
    done = info(invoke)
    named = [c["name"] for c in linked.guild(DEMO)["channels"].values()]
    undone = roll_back_by_project(invoke, aws)

    assert done["status"] == "succeeded"
    assert named.count("closed-tickets") == 1  # found by name, not made twice
    assert undone["status"] == "succeeded", undone
    channels = live_channels(linked, DEMO)
    assert channels["closed-tickets"]["id"] == mine["id"]
    assert "open-tickets" not in channels
    assert channels["Help Desk"]["id"] == made["Help Desk"]["id"]  # kept: it holds the person's channel


class Killed(BaseException):
    """What a killed process looks like from inside: nothing after it runs, no except Exception catches it."""


def test_a_delete_cut_off_before_its_checkpoint_is_journaled_on_resume_and_the_rollback_makes_it_again(
    invoke, linked, aws, monkeypatch
):
    monkeypatch.setenv("SVC_DEPLOY_MARGIN_SECONDS", "0.5")
    get_settings.cache_clear()
    assert invoke("deployToChat", deploy_body(BUILD_GUILD, CONFIG), headers=bearer(USER)).status == 202
    DeployQueue(aws).drain()
    pruned = {**CONFIG, "roles": [role for role in CONFIG["roles"] if role["name"] != "Guest"]}
    plan = invoke("deployToChat", deploy_body(BUILD_GUILD, pruned, dry_run=True, prune=True), headers=bearer(USER)).body
    assert [i["name"] for i in plan["plan"] if i["action"] == "delete"] == ["Guest"]
    body = deploy_body(BUILD_GUILD, pruned, prune=True, confirm=plan["plan_id"])
    assert invoke("deployToChat", body, headers=bearer(USER)).status == 202
    queue = DeployQueue(aws)
    (message,) = queue.receive()
    event = {"Records": [queue.record(message)]}

    def killed_after_the_delete(response, *args, **kwargs):
        if response.request.method == "DELETE" and "/roles/" in response.request.url:
            raise Killed

    get_chat_client().session.hooks["response"].append(killed_after_the_delete)
    with pytest.raises(Killed):
        queue.handler()(event, WorkerContext(remaining_ms=1500))
    get_chat_client().session.hooks["response"].clear()
    time.sleep(1.6)  # the killed invocation's idempotency record expires with its time
    queue.handler()(event, WorkerContext())
    queue.sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
    done = info(invoke)

    undone = roll_back_by_project(invoke, aws)

    assert (done["status"], done["steps"]["roles"]["deleted"]) == ("succeeded", 1)
    assert undone["status"] == "succeeded", undone
    guest = [role for role in linked.guild(BUILD_GUILD)["roles"].values() if role["name"] == "Guest"]
    assert len(guest) == 1
    assert undone["steps"]["roles"]["created"] == 1
