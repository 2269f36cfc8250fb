"""Templates table, the library half: the templates, and the starter set's marker.

- A template: `pk = LIBRARY`, `sk = TEMPLATE#<id>`, where the id is the template's normalised name, so two
  templates whose names differ only in case or punctuation cannot both exist: storing one is a conditional put.
- The starter set's marker: `pk = LIBRARY`, `sk = STARTER#<version>`, written once all its templates are in.

The seeding jobs that fill the library, their chunks and their lock are in the same table: `SeedingJobs`
(svcconf/store/seeding_jobs.py) is the repository's other half. A generated template is stored in one
transaction with the increment of its job's `stored` counter, under the condition `stored < requested`: however
often messages are re-delivered, a job never stores more than it asked.

A template's item carries the `schema_version` of the release that wrote it (none before version 2); its reader
leaves the attributes it does not know, so a release reads the items of the one before and the one after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import ClientError
from pydantic import BaseModel

from svcconf.store import blobs
from svcconf.store.dynamo import is_conditional_check_failure, plain_integers, table
from svcconf.store.seeding_jobs import SeedingJobs, job_key, transact

StoreOutcome = Literal["stored", "already_stored", "duplicate", "quota_full"]
LIBRARY = "LIBRARY"
TEMPLATE_PREFIX = "TEMPLATE#"
SUMMARY_ATTRIBUTES = ("id", "name", "description", "tags")
SCHEMA_VERSION = 2  # of the template items this release writes; 1 is the shape before the version was stored


class StoredTemplate(BaseModel):
    id: str
    name: str
    description: str
    tags: list[str]
    configuration: dict[str, Any]
    source: str  # "starter" or "generated": an open set, so a later release's source does not fail this reader
    job_id: str | None = None
    chunk_id: str | None = None
    position: int | None = None  # the candidate's index in its chunk: who stored it, exactly
    created_at: datetime


def _template_key(template_id: str) -> dict[str, str]:
    return {"pk": LIBRARY, "sk": f"{TEMPLATE_PREFIX}{template_id}"}


def _template_item(template: StoredTemplate) -> dict[str, Any]:
    item = template.model_dump(mode="json", exclude={"configuration"}, exclude_none=True)
    item["configuration"] = blobs.pack(blobs.json_bytes(template.configuration))
    return {**_template_key(template.id), **item, "schema_version": SCHEMA_VERSION}


def _template_from(item: dict[str, Any]) -> StoredTemplate:
    values = {key: value for key, value in item.items() if key not in ("pk", "sk")}
    values["configuration"] = blobs.unpack(values["configuration"])
    return StoredTemplate.model_validate(plain_integers(values))


class TemplateRepository(SeedingJobs):
    """The templates table: the library here, the seeding jobs, chunks and lock from `SeedingJobs`."""

    def __init__(self, table_name: str):
        self._table = table(table_name)

    # -- the library ---------------------------------------------------------------------------------------

    def summaries(self) -> list[dict[str, Any]]:
        """Every template's id, name, description and tags (not its configuration)."""
        names = {f"#a{index}": attribute for index, attribute in enumerate(SUMMARY_ATTRIBUTES)}
        return [
            plain_integers(item)
            for item in self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": LIBRARY, ":prefix": TEMPLATE_PREFIX},
                ProjectionExpression=", ".join(names),
                ExpressionAttributeNames=names,
            )
        ]

    def templates(self, *, job_id: str | None = None) -> list[StoredTemplate]:
        """Whole templates, configurations included (all of them, or those one job stored)."""
        found = (
            _template_from(item)
            for item in self._query(
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": LIBRARY, ":prefix": TEMPLATE_PREFIX},
            )
        )
        return [template for template in found if job_id is None or template.job_id == job_id]

    def get(self, template_id: str) -> StoredTemplate | None:
        item = self._table.get_item(Key=_template_key(template_id), ConsistentRead=True).get("Item")
        return _template_from(item) if item else None

    def _query(self, **arguments: Any) -> Iterator[dict[str, Any]]:
        arguments["ConsistentRead"] = True
        while True:
            response = self._table.query(**arguments)
            yield from response["Items"]
            if "LastEvaluatedKey" not in response:
                return
            arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def has_starter_set(self, version: str) -> bool:
        return "Item" in self._table.get_item(Key={"pk": LIBRARY, "sk": f"STARTER#{version}"})

    def add_starter(self, template: StoredTemplate) -> bool:
        """Stores a starter template unless one of that name is there already; whether it was stored."""
        try:
            self._table.put_item(Item=_template_item(template), ConditionExpression="attribute_not_exists(sk)")
        except ClientError as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True

    def mark_starter_set(self, version: str, count: int, now: datetime) -> None:
        self._table.put_item(
            Item={"pk": LIBRARY, "sk": f"STARTER#{version}", "templates": count, "loaded_at": now.isoformat()}
        )

    def store_generated(self, template: StoredTemplate) -> StoreOutcome:
        """Stores a template of a job and counts it, both or neither, while the job still has room."""
        assert template.job_id is not None
        codes = transact(
            self._table,
            [
                {
                    "Put": {
                        "TableName": self._table.name,
                        "Item": _template_item(template),
                        "ConditionExpression": "attribute_not_exists(sk)",
                    }
                },
                {
                    "Update": {
                        "TableName": self._table.name,
                        "Key": job_key(template.job_id),
                        "UpdateExpression": "SET #stored = #stored + :one, updated_at = :now",
                        "ConditionExpression": "#status = :running AND #stored < #requested",
                        "ExpressionAttributeNames": {
                            "#status": "status",
                            "#stored": "stored",
                            "#requested": "requested",
                        },
                        "ExpressionAttributeValues": {
                            ":one": 1,
                            ":running": "running",
                            ":now": template.created_at.isoformat(),
                        },
                    }
                },
            ],
        )
        if codes is None:
            return "stored"
        if codes[0] == "ConditionalCheckFailed":
            existing = self.get(template.id)
            mine = (template.job_id, template.chunk_id, template.position)
            return (
                "already_stored"
                if existing and (existing.job_id, existing.chunk_id, existing.position) == mine
                else "duplicate"
            )
        return "quota_full"
