"""Stored deployments across releases (docs/11-production.md, "Stored items across releases"): during a canary, or
after a rollback, a deployment queued by one release is run by the release before or after it.

- A deployment queued with the previous release's item shape (no `schema_version`; the fixture
  tests/data/stored_items/deployment-release-1.json, written by hand from that release's code) runs on this one.
- A deployment queued with a field this release does not know (the next release's, in the item and in its
  configuration) runs on this one, and keeps that field; the previous release's reader, shown here as it was,
  refused such a configuration (its schema forbids unknown fields), and the deployment went to the dead-letter
  queue.
- What release 2 added to the item (`schema_version`) is an attribute release 1's reader ignores.
- The release before this one (release 2, main at 5e63805, before the features of issues 30-32) keeps working with
  this release's items: its reader, shown here as it was, keeps what it does not know (`members_cursor`) on the
  record and in what it writes, and plans the configuration. What this release added since (`members_cursor`, a
  restore's progress) has a default, so an item written before it (release 1's fixture) reads and runs.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import boto3
import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
# What this release writes on a queued deployment that release 2 did not: each has a default (read below).
ADDED_SINCE_RELEASE_2 = {"members_cursor"}  # a restore's progress through the backup's members (issue 30)


class _Release2Counts(BaseModel):
    planned: int = 0
    created: int = 0
    updated: int = 0
    existing: int = 0
    deleted: int = 0
    failed: int = 0


class _Release2StepError(BaseModel):
    kind: str
    name: str
    message: str


class _Release2Steps(BaseModel):
    roles: _Release2Counts = Field(default_factory=_Release2Counts)
    categories: _Release2Counts = Field(default_factory=_Release2Counts)
    channels: _Release2Counts = Field(default_factory=_Release2Counts)
    overwrites: _Release2Counts = Field(default_factory=_Release2Counts)
    settings: _Release2Counts = Field(default_factory=_Release2Counts)
    errors: list[_Release2StepError] = Field(default_factory=list)


class Release2Record(BaseModel):
    """Release 2's deployment record as it was (store/deployment_records.py at 5e63805), its comments left out."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = 2
    deployment_id: str
    kind: Literal["deploy", "rollback"]
    user_id: str
    chat_user_id: str
    project_id: str
    project_name: str
    guild_id: str
    guild_name: str
    bot_role_ids: list[str] = Field(default_factory=list)
    status: Literal["queued", "running", "waiting", "succeeded", "partial", "failed"]
    steps: _Release2Steps = Field(default_factory=_Release2Steps)
    result: str | None = None
    error: str | None = None
    backup_id: str | None = None
    deployment_code: str | None = None
    rollback_of: str | None = None
    rolled_back_by: str | None = None
    configuration: dict[str, Any] | None = None
    journal_created: dict[str, str] = Field(default_factory=dict)
    journal_updated: dict[str, dict[str, Any]] = Field(default_factory=dict)
    journal_failed: dict[str, str] = Field(default_factory=dict)
    journal_deleted: dict[str, str] = Field(default_factory=dict)
    journal_intents: dict[str, int] = Field(default_factory=dict)
    journal_after: dict[str, str] = Field(default_factory=dict)
    confirmed_deletes: list[str] | None = None
    counted: bool = False
    resumes_at: datetime | None = None
    wait_reason: str | None = None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None


def release_2_reads(item: dict[str, Any]) -> tuple[Release2Record, ServerConfig]:
    """What release 2's worker did with a stored deployment: its `_from_item` (an item without `schema_version` is
    version 1), then the configuration validated leaving out fields it did not know (deployments/worker.py)."""
    values = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    values.setdefault("schema_version", 1)
    values["configuration"] = documents.loaded(values["configuration"])
    record = Release2Record.model_validate(plain_integers(values))
    return record, ServerConfig.model_validate(record.configuration or {}, extra="ignore")


def release_2_writes(record: Release2Record) -> dict[str, Any]:
    """Release 2's `_to_item` of a record (its configuration left out: stored as it was read)."""
    item = record.model_dump(mode="json", exclude={"configuration"}, exclude_none=True)
    item["schema_version"] = 2
    return {"pk": f"USER#{record.user_id}", "sk": f"DEPLOYMENT#{record.project_id}#{record.deployment_id}", **item}


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
    # The fixture is a whole item of release 1: every attribute release 2 writes for this deployment (release 1's
    # and schema_version), read with release 2's own model, so what this release added since is not asked of it
    release_2, _ = release_2_reads(queued)
    written_by_release_2 = set(release_2_writes(release_2)) - set(release_2.model_extra or {})
    fixture_fields, release_2_fields = set(previous) | {"schema_version"}, written_by_release_2 | {"configuration"}
    assert fixture_fields == release_2_fields, "the fixture is a whole item of that release"
    assert set(queued) - written_by_release_2 - {"configuration"} == ADDED_SINCE_RELEASE_2
    assert not any(DeploymentRecord.model_fields[name].is_required() for name in ADDED_SINCE_RELEASE_2)
    _table().put_item(Item=previous)

    # When this release's worker takes its message
    record = _run_and_read(aws, previous)

    # Then it reads as version 1, without what was added since (their defaults), and runs to the end
    assert record.schema_version == 1
    assert record.members_cursor == 0
    assert record.status == "succeeded", record.error
    assert "Keeper" in live_roles(linked, DEMO)


def test_the_release_before_this_one_reads_this_releases_item_and_keeps_what_it_does_not_know(invoke, linked) -> None:
    # Given a deployment queued by this release (a v4 configuration: its steps count AutoMod, onboarding and the
    # welcome screen; the item carries members_cursor)
    queued = _queued_item(invoke)
    assert set(queued) >= ADDED_SINCE_RELEASE_2
    assert {"automod", "onboarding", "welcome_screen"} <= set(queued["steps"])

    # When release 2's worker reads it
    record, config = release_2_reads(queued)

    # Then it reads the deployment and its configuration, keeps what it does not know on the record and writes it
    # back with it (the worker updates attributes one by one; a whole write keeps them too)
    assert (record.deployment_id, record.kind, record.status, record.schema_version) == (
        queued["deployment_id"],
        "deploy",
        "queued",
        SCHEMA_VERSION,
    )
    assert config.model_dump(mode="json", exclude_defaults=True) == CONFIG
    assert record.model_extra == {name: queued[name] for name in ADDED_SINCE_RELEASE_2}
    rewritten = release_2_writes(record)
    assert {name: rewritten[name] for name in ADDED_SINCE_RELEASE_2} == {n: queued[n] for n in ADDED_SINCE_RELEASE_2}


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
