"""svcAiChat on a live guild through `make run` (the local model, the sandbox, the deploy worker): a conversation that
renames and removes plans updates and deletes of the same objects, and the plan it shows is the one a deploy confirms.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.e2e_deployer import DEPLOY_TIMEOUT_SECONDS, Deployer
from tests.helpers.local_service import ai_chat, local_ai_runner

pytestmark = pytest.mark.e2e

DEMO = "1191000000000001001"  # alice owns it; the bot may deploy there
GENERAL, ANNOUNCEMENTS = "1191000000000003014", "1191000000000003013"
MODERATOR, MEMBER = "1191000000000002012", "1191000000000002013"


@pytest.fixture(scope="module")
def deployer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployer]:
    with local_ai_runner(tmp_path_factory.mktemp("ai-live-guild")) as service:
        web = Deployer(service)
        web.link()
        yield web


def finished(deployer: Deployer, project_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + DEPLOY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        info = deployer.call("deployToChat", {"action": "info", "project_id": project_id, "guild_id": DEMO}).json()
        if info.get("status") in ("succeeded", "partial", "failed"):
            return info
        time.sleep(0.5)
    raise AssertionError(f"not finished within {DEPLOY_TIMEOUT_SECONDS} s: {info}")


def test_a_conversation_that_renames_and_removes_deploys_its_confirmed_plan_in_place(deployer: Deployer) -> None:
    asked = (
        "Rename the channel general to lobby and rename the role Moderator to Mods. "
        "Remove the channel announcements and remove the role Member."
    )

    answer = ai_chat(deployer.service, {"messages": [{"role": "user", "content": asked}], "guild_id": DEMO})

    assert answer.status_code == 200, answer.text
    body = answer.json()
    planned = {(item["kind"], item["action"], item["id"]) for item in body["plan"] if item["action"] != "keep"}
    assert planned == {
        ("channel", "update", GENERAL),
        ("role", "update", MODERATOR),
        ("channel", "delete", ANNOUNCEMENTS),
        ("role", "delete", MEMBER),
    }
    assert body["problems"] == []
    # The plan the user saw is the one the deploy confirms
    deploy = {
        "action": "deploy",
        "guild_id": DEMO,
        "project_id": "ai-live",
        "project_name": "AI on a live guild",
        "config": body["config"],
        "prune": True,
        "confirm": body["plan_id"],
    }
    start = deployer.log_size()
    queued = deployer.call("deployToChat", deploy)
    assert queued.status_code == 202, queued.text
    assert finished(deployer, "ai-live")["status"] == "succeeded"
    written = deployer.writes_since(start)
    assert [method for method, _ in written if method == "POST"] == []  # nothing created
    assert len([method for method, _ in written if method == "DELETE"]) == 2
    # The renamed objects are the same objects; the removed ones are gone
    exported = deployer.call("deployToChat", {"action": "export", "guild_id": DEMO}).json()["config"]
    channels = {channel["name"]: channel.get("id") for channel in exported.get("channels", [])}
    roles = {role["name"]: role.get("id") for role in exported["roles"]}
    assert channels["lobby"] == GENERAL
    assert roles == {"Mods": MODERATOR}
    assert "announcements" not in [c["name"] for category in exported["categories"] for c in category["channels"]]
