"""`deployment_id` on `info` and `rollback`, and `info`'s history (issue 31, finding 12), through deployToChat's
handler against the sandbox and moto: an older deployment is read and rolled back by its id, not the newest one in
its place; a later deployment that changed its objects is named (409) until it is rolled back itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from svcconf.deployments.common import deployment_repository
from svcconf.store.deployment_items import DeploymentRecord
from tests.helpers.deploy_worker import DEMO, USER, DeployQueue, deploy_body, link, live_roles, writes
from tests.helpers.handlers import bearer


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def config(platform, *roles: dict[str, Any]) -> dict[str, Any]:
    return {"name": platform.guild(DEMO)["name"], "roles": list(roles)}


def call(invoke, body: dict[str, Any], user: str = USER):
    return invoke("deployToChat", body, headers=bearer(user))


def deployed(invoke, aws, cfg: dict[str, Any]) -> str:
    queued = call(invoke, deploy_body(DEMO, cfg))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    return queued.body["deployment_id"]


ALPHA = {"name": "Alpha", "permissions": ["SEND_MESSAGES"]}
BETA = {"name": "Beta", "permissions": ["SEND_MESSAGES"]}


@pytest.fixture
def two_deploys(invoke, linked, aws) -> tuple[str, str]:
    """Deploy A makes the role Alpha; deploy B, later, makes Beta and leaves Alpha as it is."""
    first = deployed(invoke, aws, config(linked, ALPHA))
    second = deployed(invoke, aws, config(linked, ALPHA, BETA))
    return first, second


def test_info_with_a_deployment_id_answers_that_deployment_and_the_projects_history(invoke, two_deploys):
    first, second = two_deploys

    named = call(invoke, {"action": "info", "project_id": "proj-1", "deployment_id": first})
    newest = call(invoke, {"action": "info", "project_id": "proj-1"})

    assert named.status == 200, named.body
    assert named.body["deployment_id"] == first
    assert [role["name"] for role in named.body["config"]["roles"]] == ["Alpha"]
    assert newest.body["deployment_id"] == second
    history = named.body["history"]
    assert [entry["deployment_id"] for entry in history] == [second, first]
    assert set(history[0]) == {"deployment_id", "kind", "status", "created_at", "finished_at", "result"}
    assert [(entry["kind"], entry["status"]) for entry in history] == [("deploy", "succeeded")] * 2
    assert history[1]["result"].startswith("Created 1 role")
    assert newest.body["history"] == history


def test_a_rollback_by_deployment_id_plans_and_undoes_that_deployment_not_the_newest(invoke, linked, aws, two_deploys):
    first, _ = two_deploys

    # as the user asked it: the project and one deployment of it (main ignored the id and planned the newest)
    planned = call(invoke, {"action": "rollback", "project_id": "proj-1", "deployment_id": first, "dry_run": True})
    assert planned.status == 200, planned.body
    assert [(i["kind"], i["name"], i["action"]) for i in planned.body["plan"] if i["action"] != "keep"] == [
        ("role", "Alpha", "delete")
    ]
    queued = call(invoke, {"action": "rollback", "deployment_id": first})
    assert queued.status == 202, queued.body
    assert queued.body["rollback_of"] == first
    DeployQueue(aws).drain()

    assert "Alpha" not in live_roles(linked, DEMO)
    assert "Beta" in live_roles(linked, DEMO)
    history = call(invoke, {"action": "info", "project_id": "proj-1"}).body["history"]
    assert [(entry["kind"], entry["status"]) for entry in history] == [
        ("rollback", "succeeded"),
        ("deploy", "succeeded"),
        ("deploy", "succeeded"),
    ]
    # the newest deploy is still the project's to roll back
    by_project = call(invoke, {"action": "rollback", "project_id": "proj-1", "dry_run": True})
    assert [(i["name"], i["action"]) for i in by_project.body["plan"] if i["action"] != "keep"] == [("Beta", "delete")]


def test_a_later_deployment_that_changed_its_objects_is_named_until_it_is_rolled_back(invoke, linked, aws):
    first = deployed(invoke, aws, config(linked, ALPHA))
    later = deployed(invoke, aws, config(linked, {**ALPHA, "color": "#2ECC71"}))
    linked.clear_log()

    refused = call(invoke, {"action": "rollback", "deployment_id": first})

    assert refused.status == 409, refused.body
    assert refused.body["deployment_id"] == later
    assert later in refused.body["message"]
    assert writes(linked) == []
    assert call(invoke, {"action": "rollback", "deployment_id": later}).status == 202
    DeployQueue(aws).drain()
    assert call(invoke, {"action": "rollback", "deployment_id": first}).status == 202
    DeployQueue(aws).drain()
    assert "Alpha" not in live_roles(linked, DEMO)


def test_deployment_ids_of_others_unknown_or_malformed_are_refused_naming_the_field(invoke, linked, two_deploys):
    first, _ = two_deploys
    link(invoke, linked, user="web-user-2")

    others = call(invoke, {"action": "rollback", "deployment_id": first}, user="web-user-2")
    other_info = call(invoke, {"action": "info", "project_id": "proj-1", "deployment_id": first}, user="web-user-2")
    wrong_project = call(invoke, {"action": "info", "project_id": "proj-2", "deployment_id": first})
    malformed = call(invoke, {"action": "info", "project_id": "proj-1", "deployment_id": "dp_../../x"})
    neither = call(invoke, {"action": "rollback"})

    assert (others.status, other_info.status, wrong_project.status) == (404, 404, 404)
    assert malformed.status == 400
    assert [detail["field"] for detail in malformed.body["details"]] == ["deployment_id"]
    assert neither.status == 400
    assert [detail["field"] for detail in neither.body["details"]] == ["project_id"]


def test_the_history_holds_the_newest_20_deployments_newest_first(invoke, linked):
    repository = deployment_repository()
    start = datetime.now(UTC) - timedelta(hours=1)
    ids = []
    for index in range(23):
        at = start + timedelta(minutes=index)
        record = DeploymentRecord(
            deployment_id=f"dp_{int(at.timestamp() * 1000):012x}{index:08x}",
            kind="deploy",
            user_id=USER,
            chat_user_id="1191000000000000101",
            project_id="proj-1",
            project_name="Test project",
            guild_id=DEMO,
            guild_name="Demo",
            status="queued",
            created_at=at,
            updated_at=at,
        )
        repository.start(record, lock_expiration=0, now=int(at.timestamp()))
        repository.finish(record, "succeeded", f"Deploy {index}.", None, at)
        ids.append(record.deployment_id)

    history = call(invoke, {"action": "info", "project_id": "proj-1"}).body["history"]

    assert [entry["deployment_id"] for entry in history] == ids[::-1][:20]
    assert [entry["result"] for entry in history[:2]] == ["Deploy 22.", "Deploy 21."]
