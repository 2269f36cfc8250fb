"""Templates table: the template library, the seeding jobs that fill it, and the one lock that serialises them.

- A template: `pk = LIBRARY`, `sk = TEMPLATE#<id>`, where the id is the template's normalised name, so two
  templates whose names differ only in case or punctuation cannot both exist: storing one is a conditional put.
- The starter set's marker: `pk = LIBRARY`, `sk = STARTER#<version>`, written once all its templates are in.
- A job: `pk = JOB#<job_id>`, `sk = JOB`: requested, stored, dropped, status, its rounds of chunks.
- A chunk: `pk = JOB#<job_id>`, `sk = CHUNK#<chunk_id>`: the candidates the model gave (kept, so a re-delivered
  chunk stores the same templates instead of asking again), and once done its counts.
- The lock: `pk = SEED`, `sk = LOCK`, naming the running job; taken in the transaction that writes the job,
  released when it ends, expiring by itself (`expiration`) if a worker is ever lost for good.

A generated template is stored in one transaction with the increment of its job's `stored` counter, under the
condition `stored < requested`: however often messages are re-delivered, a job never stores more than it asked.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field

from svcconf.store import blobs
from svcconf.store.dynamo import is_conditional_check_failure, plain_integers, table

JobStatus = Literal["running", "succeeded", "partial", "failed"]
StoreOutcome = Literal["stored", "already_stored", "duplicate", "quota_full"]
LIBRARY = "LIBRARY"
TEMPLATE_PREFIX = "TEMPLATE#"
SUMMARY_ATTRIBUTES = ("id", "name", "description", "tags")
LOCK_KEY = {"pk": "SEED", "sk": "LOCK"}
TRANSACTION_ATTEMPTS = 6


class SeedingBusy(Exception):
    """Another seeding job holds the lock."""


class StoredTemplate(BaseModel):
    id: str
    name: str
    description: str
    tags: list[str]
    configuration: dict[str, Any]
    source: Literal["starter", "generated"]
    job_id: str | None = None
    chunk_id: str | None = None
    position: int | None = None  # the candidate's index in its chunk: who stored it, exactly
    created_at: datetime


class JobRecord(BaseModel):
    job_id: str
    requested: int
    requested_by: str
    status: JobStatus = "running"
    stored: int = 0
    dropped: int = 0
    surplus: int = 0  # valid templates a full job had no room for
    round: int = 0
    round_chunks: dict[str, int] = Field(default_factory=dict)  # the current round: chunk id -> templates asked
    chunks_planned: int = 0
    chunks_done: int = 0
    error: str | None = None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status != "running"


class ChunkRecord(BaseModel):
    job_id: str
    chunk_id: str
    candidates: list[dict[str, Any]] = Field(default_factory=list)
    done: bool = False
    stored: int = 0
    dropped: int = 0
    surplus: int = 0
    drops: list[str] = Field(default_factory=list)  # why each dropped candidate was dropped
    error: str | None = None


def _job_key(job_id: str) -> dict[str, str]:
    return {"pk": f"JOB#{job_id}", "sk": "JOB"}


def _chunk_key(job_id: str, chunk_id: str) -> dict[str, str]:
    return {"pk": f"JOB#{job_id}", "sk": f"CHUNK#{chunk_id}"}


def _template_key(template_id: str) -> dict[str, str]:
    return {"pk": LIBRARY, "sk": f"{TEMPLATE_PREFIX}{template_id}"}


def _template_item(template: StoredTemplate) -> dict[str, Any]:
    item = template.model_dump(mode="json", exclude={"configuration"}, exclude_none=True)
    item["configuration"] = blobs.pack(blobs.json_bytes(template.configuration))
    return {**_template_key(template.id), **item}


def _template_from(item: dict[str, Any]) -> StoredTemplate:
    values = {key: value for key, value in item.items() if key not in ("pk", "sk")}
    values["configuration"] = blobs.unpack(values["configuration"])
    return StoredTemplate.model_validate(plain_integers(values))


def _cancellation_codes(error: ClientError) -> list[str]:
    return [reason.get("Code") or "None" for reason in error.response.get("CancellationReasons") or []]


def _transact(table_handle: Any, items: list[dict[str, Any]]) -> list[str] | None:
    """Runs a write transaction; None when it succeeded, else why each item was refused.

    Chunks of one job run at once and all count into the job's item, so DynamoDB may cancel a transaction
    for a conflict with another one in flight: that is retried (with jitter), a refused condition is not.
    """
    client = table_handle.meta.client
    for attempt in range(TRANSACTION_ATTEMPTS):
        try:
            client.transact_write_items(TransactItems=items)
        except ClientError as error:
            codes = _cancellation_codes(error)
            conflict = "TransactionConflict" in codes or error.response.get("Error", {}).get("Code") == (
                "TransactionConflictException"
            )
            if conflict and attempt + 1 < TRANSACTION_ATTEMPTS:
                time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))  # noqa: S311 - jitter, not a secret
                continue
            if is_conditional_check_failure(error) and "ConditionalCheckFailed" in codes:
                return codes
            raise
        return None
    raise AssertionError("unreachable")  # the loop returns or raises


class TemplateRepository:
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
        codes = _transact(
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
                        "Key": _job_key(template.job_id),
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

    # -- jobs ------------------------------------------------------------------------------------------------

    def start(self, job: JobRecord, *, lock_expiration: int, now: int) -> None:
        """Writes the new job and takes the lock, both or neither; `SeedingBusy` if another job holds it."""
        client = self._table.meta.client
        try:
            client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": {**LOCK_KEY, "job_id": job.job_id, "expiration": lock_expiration},
                            "ConditionExpression": "attribute_not_exists(pk) OR expiration < :now",
                            "ExpressionAttributeValues": {":now": now},
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": {**_job_key(job.job_id), **job.model_dump(mode="json", exclude_none=True)},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                raise SeedingBusy from error
            raise

    def lock_holder(self) -> str | None:
        item = self._table.get_item(Key=LOCK_KEY, ConsistentRead=True).get("Item")
        return str(item["job_id"]) if item else None

    def get_job(self, job_id: str) -> JobRecord | None:
        item = self._table.get_item(Key=_job_key(job_id), ConsistentRead=True).get("Item")
        if not item:
            return None
        return JobRecord.model_validate(plain_integers({k: v for k, v in item.items() if k not in ("pk", "sk")}))

    def start_round(self, job: JobRecord, round_number: int, chunks: dict[str, int], now: datetime) -> bool:
        """Moves a running job from round `round_number - 1` to `round_number`; False if it already moved."""
        try:
            self._table.update_item(
                Key=_job_key(job.job_id),
                UpdateExpression=(
                    "SET #round = :round, round_chunks = :chunks, chunks_planned = chunks_planned + :count, "
                    "updated_at = :now"
                ),
                ConditionExpression="#status = :running AND #round = :previous",
                ExpressionAttributeNames={"#round": "round", "#status": "status"},
                ExpressionAttributeValues={
                    ":round": round_number,
                    ":previous": round_number - 1,
                    ":chunks": chunks,
                    ":count": len(chunks),
                    ":running": "running",
                    ":now": now.isoformat(),
                },
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True

    def finish(self, job: JobRecord, status: JobStatus, error: str | None, now: datetime) -> bool:
        """Ends a running job and frees the lock if it holds it; False if the job had ended already."""
        values: dict[str, Any] = {":status": status, ":running": "running", ":now": now.isoformat()}
        expression = "SET #status = :status, finished_at = :now, updated_at = :now"
        if error:
            expression += ", #error = :error"
            values[":error"] = error
        try:
            self._table.update_item(
                Key=_job_key(job.job_id),
                UpdateExpression=expression,
                ConditionExpression="#status = :running",
                ExpressionAttributeNames={"#status": "status", **({"#error": "error"} if error else {})},
                ExpressionAttributeValues=values,
            )
        except ClientError as failure:
            if is_conditional_check_failure(failure):
                return False
            raise
        self.release(job.job_id)
        return True

    def release(self, job_id: str) -> None:
        """Frees the lock if this job holds it."""
        try:
            self._table.delete_item(
                Key=LOCK_KEY, ConditionExpression="job_id = :id", ExpressionAttributeValues={":id": job_id}
            )
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise

    # -- chunks ----------------------------------------------------------------------------------------------

    def get_chunk(self, job_id: str, chunk_id: str) -> ChunkRecord | None:
        item = self._table.get_item(Key=_chunk_key(job_id, chunk_id), ConsistentRead=True).get("Item")
        if not item:
            return None
        values = {key: value for key, value in item.items() if key not in ("pk", "sk")}
        values["candidates"] = blobs.unpack(values["candidates"]) if "candidates" in values else []
        return ChunkRecord.model_validate(plain_integers(values))

    def keep_candidates(self, chunk: ChunkRecord) -> ChunkRecord:
        """Records what the model gave for this chunk, unless a concurrent delivery did first: the kept record."""
        item = {
            **_chunk_key(chunk.job_id, chunk.chunk_id),
            **chunk.model_dump(mode="json", exclude={"candidates"}, exclude_none=True),
            "candidates": blobs.pack(blobs.json_bytes(chunk.candidates)),
        }
        try:
            self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(sk)")
        except ClientError as error:
            if not is_conditional_check_failure(error):
                raise
            kept = self.get_chunk(chunk.job_id, chunk.chunk_id)
            assert kept is not None
            return kept
        return chunk

    def finish_chunk(self, chunk: ChunkRecord, now: datetime) -> bool:
        """Marks the chunk done and adds its drops to the job, both once; False if it was done already."""
        chunk_update = {
            "TableName": self._table.name,
            "Key": _chunk_key(chunk.job_id, chunk.chunk_id),
            "UpdateExpression": (
                "SET #done = :true, #stored = :stored, #dropped = :dropped, #surplus = :surplus, #drops = :drops"
                + (", #error = :error" if chunk.error else "")
            ),
            # A chunk whose every delivery failed has no record yet: it is written here, done and empty.
            "ConditionExpression": "attribute_not_exists(#done) OR #done = :false",
            "ExpressionAttributeNames": {
                "#done": "done",
                "#stored": "stored",
                "#dropped": "dropped",
                "#surplus": "surplus",
                "#drops": "drops",
                **({"#error": "error"} if chunk.error else {}),
            },
            "ExpressionAttributeValues": {
                ":true": True,
                ":false": False,
                ":stored": chunk.stored,
                ":dropped": chunk.dropped,
                ":surplus": chunk.surplus,
                ":drops": chunk.drops,
                **({":error": chunk.error} if chunk.error else {}),
            },
        }
        job_update = {
            "TableName": self._table.name,
            "Key": _job_key(chunk.job_id),
            "UpdateExpression": (
                "SET #dropped = #dropped + :dropped, #surplus = #surplus + :surplus, "
                "chunks_done = chunks_done + :one, updated_at = :now"
            ),
            "ExpressionAttributeNames": {"#dropped": "dropped", "#surplus": "surplus"},
            "ExpressionAttributeValues": {
                ":dropped": chunk.dropped,
                ":surplus": chunk.surplus,
                ":one": 1,
                ":now": now.isoformat(),
            },
        }
        return _transact(self._table, [{"Update": chunk_update}, {"Update": job_update}]) is None
