"""Stored deployments across releases (docs/11-production.md, "Stored items across releases"): during a canary, or
after a rollback, a deployment queued by one release is run by the release before or after it.

- A deployment queued with the previous release's item shape (no `schema_version`; the fixture
  tests/data/stored_items/deployment-release-1.json, written by hand from that release's code) runs on this one.
- A deployment queued with a field this release does not know (the next release's, in the item and in its
  configuration) runs on this one, and keeps that field; the previous release's reader, shown here as it was,
  refused such a configuration (its schema forbids unknown fields), and the deployment went to the dead-letter
  queue.
- What this release adds to the item (`schema_version`) is an attribute the previous release's reader ignores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from pydantic import ValidationError

from svcconf.config import ServerConfig
from svcconf.settings import get_settings
from svcconf.store import documents
from svcconf.store.deployment_items import SCHEMA_VERSION, DeploymentRecord
from svcconf.store.deployment_records import DeploymentRepository
from svcconf.store.dynamo import plain_integers
from tests.helpers.deploy_worker import DEMO, USER, DeployQueue, deploy_body, link, live_roles
from tests.helpers.handlers import bearer

ROOT = Path(__file__).resolve().parents[2]
RELEASE_1 = json.loads((ROOT / "tests" / "data" / "stored_items" / "deployment-release-1.json").read_text())
CONFIG = {"name": "Versions", "roles": [{"name": "Keeper", "permissions": ["SEND_MESSAGES"]}]}


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    return platform


def _table() -> Any:
    return boto3.resource("dynamodb", region_name="us-east-1").Table(get_settings().deployments_table)


def _queued_item(invoke) -> dict[str, Any]:
    """Queues a deployment of CONFIG to DEMO through deployToChat; its item as this release stored it."""
    response = invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER))
    assert response.status == 202, response.body
    items = _table().query(
        KeyConditionExpression="pk = :pk AND begins_with(sk, :sk)",
        ExpressionAttributeValues={":pk": f"USER#{USER}", ":sk": "DEPLOYMENT#proj-1#"},
    )["Items"]
    (item,) = items
    return item


def _release_1_item(queued: dict[str, Any]) -> dict[str, Any]:
    """The fixture's item with the queued deployment's own values; its configuration attribute as stored."""
    item: dict[str, Any] = {}
    for name, value in RELEASE_1["item"].items():
        if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in queued:
            item[name] = queued[value[1:-1]]
        elif isinstance(value, str) and "{" in value:
            item[name] = value.format(**queued)
        else:
            item[name] = value
    return {**item, "configuration": queued["configuration"]}


def release_1_reads(item: dict[str, Any]) -> tuple[DeploymentRecord, ServerConfig]:
    """What the previous release's worker did with a stored deployment: its record model ignored attributes it
    did not know (pydantic's default; it had no `extra` setting and no `schema_version`), then it validated the
    configuration with the schema as is, which forbids unknown fields (deployments/worker.py at 9685e9e)."""
    values = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    values["configuration"] = documents.loaded(values["configuration"])
    record = DeploymentRecord.model_validate(plain_integers(values), extra="ignore")
    return record, ServerConfig.model_validate(record.configuration or {})


def _run_and_read(aws: Any, item: dict[str, Any]) -> DeploymentRecord:
    DeployQueue(aws).drain()
    record = DeploymentRepository(get_settings().deployments_table).get(USER, "proj-1", item["deployment_id"])
    assert record is not None
    return record


def test_this_release_stores_its_schema_version_and_the_previous_reader_ignores_it(invoke, linked) -> None:
    queued = _queued_item(invoke)

    assert queued["schema_version"] == SCHEMA_VERSION == 2
    record, config = release_1_reads(queued)  # the previous release, reading this release's item
    assert record.deployment_id == queued["deployment_id"]
    assert config.model_dump(mode="json", exclude_defaults=True) == CONFIG


def test_a_deployment_queued_with_the_previous_releases_item_runs_on_this_one(invoke, linked, aws) -> None:
    # Given a queued deployment whose item is the previous release's shape, without schema_version
    queued = _queued_item(invoke)
    previous = _release_1_item(queued)
    assert "schema_version" not in previous
    assert set(previous) == set(queued) - {"schema_version"}, "the fixture is a whole item of that release"
    _table().put_item(Item=previous)

    # When this release's worker takes its message
    record = _run_and_read(aws, previous)

    # Then it reads as version 1 and runs to the end
    assert record.schema_version == 1
    assert record.status == "succeeded", record.error
    assert "Keeper" in live_roles(linked, DEMO)


def test_a_deployment_queued_with_a_field_this_release_does_not_know_runs_and_keeps_it(invoke, linked, aws) -> None:
    # Given a queued deployment as the next release would store it: a new attribute, a new configuration field
    queued = _queued_item(invoke)
    ahead = {
        **queued,
        "schema_version": SCHEMA_VERSION + 1,
        "requested_from": "web-app",
        "configuration": documents.stored(
            {**CONFIG, "roles": [{**CONFIG["roles"][0], "icon_emoji": "🛡️"}], "banner_style": "wide"},
            f"deployments/{queued['deployment_id']}/configuration.json.bz2",
        ),
    }
    _table().put_item(Item=ahead)

    # Then the previous release's reader refused its configuration (the deployment failed into the DLQ) ...
    with pytest.raises(ValidationError) as refused:
        release_1_reads(ahead)
    assert {error["type"] for error in refused.value.errors()} == {"extra_forbidden"}

    # ... and this release's worker runs it, leaving out what it does not know and keeping it in the item
    record = _run_and_read(aws, ahead)
    assert record.status == "succeeded", record.error
    assert "Keeper" in live_roles(linked, DEMO)
    assert record.schema_version == SCHEMA_VERSION + 1
    assert record.model_extra == {"requested_from": "web-app"}
    stored = _table().get_item(Key={"pk": queued["pk"], "sk": queued["sk"]})["Item"]
    assert stored["requested_from"] == "web-app"
    assert documents.loaded(stored["configuration"])["banner_style"] == "wide"
