"""Templates table, the seeding half: the jobs that fill the library, their chunks, and the one lock that
serialises them.

- A job: `pk = JOB#<job_id>`, `sk = JOB`: requested, stored, dropped, status, its rounds of chunks.
- A chunk: `pk = JOB#<job_id>`, `sk = CHUNK#<chunk_id>`: the candidates the model gave (kept, so a re-delivered
  chunk stores the same templates instead of asking again), and once done its counts.
- The lock: `pk = SEED`, `sk = LOCK`, naming the running job; taken in the transaction that writes the job,
  released when it ends, expiring by itself (`expiration`) if a worker is ever lost for good.

`SeedingJobs` is a part of `svcconf.store.templates.TemplateRepository`, not a repository of its own: a generated
template is stored in one transaction with its job's counter, so both halves write to one table.
"""

from __future__ import annotations

import random
import time
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field

from svcconf.store import blobs
from svcconf.store.dynamo import is_conditional_check_failure, plain_integers

JobStatus = Literal["running", "succeeded", "partial", "failed"]
LOCK_KEY = {"pk": "SEED", "sk": "LOCK"}
TRANSACTION_ATTEMPTS = 6


class SeedingBusy(Exception):
    """Another seeding job holds the lock."""


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


def job_key(job_id: str) -> dict[str, str]:
    return {"pk": f"JOB#{job_id}", "sk": "JOB"}


def _chunk_key(job_id: str, chunk_id: str) -> dict[str, str]:
    return {"pk": f"JOB#{job_id}", "sk": f"CHUNK#{chunk_id}"}


def _cancellation_codes(error: ClientError) -> list[str]:
    return [reason.get("Code") or "None" for reason in error.response.get("CancellationReasons") or []]


def transact(table_handle: Any, items: list[dict[str, Any]]) -> list[str] | None:
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


class SeedingJobs:
    """The jobs, chunks and lock of the table a `TemplateRepository` opens."""

    _table: Any

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
                            "Item": {**job_key(job.job_id), **job.model_dump(mode="json", exclude_none=True)},
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
        item = self._table.get_item(Key=job_key(job_id), ConsistentRead=True).get("Item")
        if not item:
            return None
        return JobRecord.model_validate(plain_integers({k: v for k, v in item.items() if k not in ("pk", "sk")}))

    def start_round(self, job: JobRecord, round_number: int, chunks: dict[str, int], now: datetime) -> bool:
        """Moves a running job from round `round_number - 1` to `round_number`; False if it already moved."""
        try:
            self._table.update_item(
                Key=job_key(job.job_id),
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
                Key=job_key(job.job_id),
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
            "Key": job_key(chunk.job_id),
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
        return transact(self._table, [{"Update": chunk_update}, {"Update": job_update}]) is None
