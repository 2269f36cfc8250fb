"""Deployments table: each user's deployments per project, with their progress, and one lock per guild.

- A deployment: `pk = USER#<sub>`, `sk = DEPLOYMENT#<project_id>#<deployment_id>` (ids sort by creation
  time, so a project's newest deployment is the first of a descending query). It carries its status, its step
  counts, its configuration (compressed, or in the documents bucket when too big: `svcconf.store.documents`),
  and its journal: the ids it created, the objects it updated with their previous attributes, the
  objects that failed, the intent written before each write and the fingerprint of what each write left
  (`svcconf.deploy_engine.journal`). Every applied step updates it in place (one UpdateItem), so a resumed worker knows
  what was done.
- The guild lock: `pk = GUILD#<guild_id>`, `sk = LOCK`, naming the deployment that holds it. It is taken in
  the same transaction that writes the queued deployment (a conditional write, not a read-then-write) and
  expires by itself (`expiration`) if a worker is ever lost for good.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field

from svcconf.deploy_engine.steps import KIND_GROUPS
from svcconf.store import documents
from svcconf.store.dynamo import is_conditional_check_failure, plain_integers, table

DeploymentKind = Literal["deploy", "rollback"]
DeploymentStatus = Literal["queued", "running", "waiting", "succeeded", "partial", "failed"]
FINISHED: tuple[DeploymentStatus, ...] = ("succeeded", "partial", "failed")
COUNTERS = ("planned", "created", "updated", "existing", "deleted", "failed")


class GuildBusy(Exception):
    """Another deployment or rollback holds the guild."""


class KindCounts(BaseModel):
    planned: int = 0
    created: int = 0
    updated: int = 0
    existing: int = 0
    deleted: int = 0
    failed: int = 0


class StepError(BaseModel):
    kind: str
    name: str
    message: str


class Steps(BaseModel):
    roles: KindCounts = Field(default_factory=KindCounts)
    categories: KindCounts = Field(default_factory=KindCounts)
    channels: KindCounts = Field(default_factory=KindCounts)
    overwrites: KindCounts = Field(default_factory=KindCounts)
    settings: KindCounts = Field(default_factory=KindCounts)  # the guild's own settings: one object
    errors: list[StepError] = Field(default_factory=list)

    def total(self, counter: str) -> int:
        return sum(getattr(getattr(self, group), counter) for group in KIND_GROUPS.values())


class DeploymentRecord(BaseModel):
    deployment_id: str
    kind: DeploymentKind
    user_id: str
    chat_user_id: str
    project_id: str
    project_name: str
    guild_id: str
    guild_name: str
    bot_role_ids: list[str] = Field(default_factory=list)  # the bot's roles when the request checked the guild
    status: DeploymentStatus
    steps: Steps = Field(default_factory=Steps)
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
    journal_deleted: dict[str, str] = Field(default_factory=dict)  # plan key -> the id of the object deleted
    journal_intents: dict[str, int] = Field(default_factory=dict)  # object key -> when its write began (Unix ms)
    journal_after: dict[str, str] = Field(default_factory=dict)  # object key -> its fingerprint
    confirmed_deletes: list[str] | None = None  # a pruning deploy: the ids its confirmed plan deletes, and no other
    confirmed_fingerprints: dict[str, str] | None = None  # their fingerprints then: one changed since is kept
    counted: bool = False  # the first worker run has set the planned and existing counts
    resumes_at: datetime | None = None  # while `waiting`: when the worker runs it again
    wait_reason: str | None = None  # while `waiting`: why, in a sentence
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def _pk(user_id: str) -> str:
    return f"USER#{user_id}"


def _sk(project_id: str, deployment_id: str = "") -> str:
    return f"DEPLOYMENT#{project_id}#{deployment_id}"


def _lock_key(guild_id: str) -> dict[str, str]:
    return {"pk": f"GUILD#{guild_id}", "sk": "LOCK"}


def configuration_key(deployment_id: str) -> str:
    """Where the documents bucket keeps a deployment's configuration when its item cannot."""
    return f"deployments/{deployment_id}/configuration.json.bz2"


def _to_item(record: DeploymentRecord) -> dict[str, Any]:
    item = record.model_dump(mode="json", exclude={"configuration"}, exclude_none=True)
    if record.configuration is not None:
        item["configuration"] = documents.stored(record.configuration, configuration_key(record.deployment_id))
    return {"pk": _pk(record.user_id), "sk": _sk(record.project_id, record.deployment_id), **item}


def _from_item(item: dict[str, Any]) -> DeploymentRecord:
    values = {key: value for key, value in item.items() if key not in ("pk", "sk")}
    if "configuration" in values:
        values["configuration"] = documents.loaded(values["configuration"])
    return DeploymentRecord.model_validate(plain_integers(values))


class Progress(BaseModel):
    """One applied step, as the worker records it."""

    created: dict[str, str] = Field(default_factory=dict)
    updated: dict[str, dict[str, Any]] = Field(default_factory=dict)
    deleted: dict[str, str] = Field(default_factory=dict)
    failed: dict[str, str] = Field(default_factory=dict)
    after: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    errors: list[StepError] = Field(default_factory=list)


class _Update:
    """An UpdateExpression built piece by piece, with placeholders for every name and value."""

    def __init__(self) -> None:
        self.sets: list[str] = []
        self.removes: list[str] = []
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, text: str) -> str:
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = text
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def set(self, path: list[str], value: Any) -> None:
        self.sets.append(f"{'.'.join(self.name(part) for part in path)} = {self.value(value)}")

    def default(self, path: list[str], value: Any) -> None:
        """Sets the attribute only where it is missing (a record written before it existed)."""
        target = ".".join(self.name(part) for part in path)
        self.sets.append(f"{target} = if_not_exists({target}, {self.value(value)})")

    def add(self, path: list[str], amount: int) -> None:
        target = ".".join(self.name(part) for part in path)
        self.sets.append(f"{target} = {target} + {self.value(amount)}")

    def append(self, path: list[str], items: list[Any]) -> None:
        target = ".".join(self.name(part) for part in path)
        self.sets.append(f"{target} = list_append({target}, {self.value(items)})")

    def remove(self, path: list[str]) -> None:
        self.removes.append(".".join(self.name(part) for part in path))

    def arguments(self) -> dict[str, Any]:
        remove = f" REMOVE {', '.join(self.removes)}" if self.removes else ""
        return {
            "UpdateExpression": "SET " + ", ".join(self.sets) + remove,
            "ExpressionAttributeNames": self.names,
            "ExpressionAttributeValues": self.values,
        }


class DeploymentRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    # -- the request side ----------------------------------------------------------------------------------

    def start(self, record: DeploymentRecord, *, lock_expiration: int, now: int) -> None:
        """Writes the queued deployment and takes its guild's lock, both or neither; `GuildBusy` if held."""
        lock = {
            **_lock_key(record.guild_id),
            "holder_pk": _pk(record.user_id),
            "holder_sk": _sk(record.project_id, record.deployment_id),
            "deployment_id": record.deployment_id,
            "expiration": lock_expiration,
        }
        client = self._table.meta.client
        try:
            client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": lock,
                            "ConditionExpression": "attribute_not_exists(pk) OR expiration < :now",
                            "ExpressionAttributeValues": {":now": now},
                        }
                    },
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": _to_item(record),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                raise GuildBusy from error
            raise

    def lock_holder(self, guild_id: str, now: int) -> DeploymentRecord | None:
        """The deployment that holds the guild's lock, if one does (an expired lock holds nothing)."""
        lock = self._table.get_item(Key=_lock_key(guild_id), ConsistentRead=True).get("Item")
        if not lock or int(lock["expiration"]) < now:
            return None
        item = self._table.get_item(Key={"pk": lock["holder_pk"], "sk": lock["holder_sk"]}).get("Item")
        return _from_item(item) if item else None

    def get(self, user_id: str, project_id: str, deployment_id: str) -> DeploymentRecord | None:
        key = {"pk": _pk(user_id), "sk": _sk(project_id, deployment_id)}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        return _from_item(item) if item else None

    def newest(
        self, user_id: str, project_id: str, *, guild_id: str | None = None, kind: DeploymentKind | None = None
    ) -> DeploymentRecord | None:
        """The user's newest deployment of the project (to the guild, of the kind, when given)."""
        for record in self._history(user_id, project_id):
            if (guild_id is None or record.guild_id == guild_id) and (kind is None or record.kind == kind):
                return record
        return None

    def _history(self, user_id: str, project_id: str) -> Iterator[DeploymentRecord]:
        arguments: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": _pk(user_id), ":prefix": _sk(project_id)},
            "ScanIndexForward": False,
            "ConsistentRead": True,
        }
        while True:
            response = self._table.query(**arguments)
            yield from (_from_item(item) for item in response["Items"])
            if "LastEvaluatedKey" not in response:
                return
            arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # -- the worker side -----------------------------------------------------------------------------------

    def _update(self, record: DeploymentRecord, update: _Update, **conditions: Any) -> None:
        key = {"pk": _pk(record.user_id), "sk": _sk(record.project_id, record.deployment_id)}
        self._table.update_item(Key=key, **update.arguments(), **conditions)

    def mark_running(self, record: DeploymentRecord, *, steps: Steps | None, now: datetime) -> None:
        update = _Update()
        update.set(["status"], "running")
        update.set(["updated_at"], now.isoformat())
        for journal in ("journal_intents", "journal_after"):  # their entries are set one by one
            update.default([journal], {})
        update.remove(["resumes_at"])
        update.remove(["wait_reason"])
        if steps is not None:
            update.set(["steps"], steps.model_dump(mode="json"))
            update.set(["counted"], True)
        self._update(record, update)

    def mark_waiting(self, record: DeploymentRecord, resumes_at: datetime, reason: str, now: datetime) -> None:
        update = _Update()
        update.set(["status"], "waiting")
        update.set(["resumes_at"], resumes_at.isoformat())
        update.set(["wait_reason"], reason)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)

    def set_code(self, record: DeploymentRecord, code: str, now: datetime) -> None:
        update = _Update()
        update.set(["deployment_code"], code)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)

    def set_backup(self, record: DeploymentRecord, backup_id: str, now: datetime) -> None:
        update = _Update()
        update.set(["backup_id"], backup_id)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)

    def record_progress(self, record: DeploymentRecord, progress: Progress, now: datetime) -> None:
        """One step's outcome, in place: journal entries set, counts added, errors appended."""
        update = _Update()
        for key, object_id in progress.created.items():
            update.set(["journal_created", key], object_id)
        for key, updated in progress.updated.items():
            update.set(["journal_updated", key], updated)
        for key, object_id in progress.deleted.items():
            update.set(["journal_deleted", key], object_id)
        for key, reason in progress.failed.items():
            update.set(["journal_failed", key], reason)
        for key, fingerprint in progress.after.items():
            update.set(["journal_after", key], fingerprint)
        for group, counters in progress.counts.items():
            for counter, amount in counters.items():
                update.add(["steps", group, counter], amount)
        if progress.errors:
            update.append(["steps", "errors"], [error.model_dump() for error in progress.errors])
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)

    def record_intent(self, record: DeploymentRecord, key: str, at_ms: int) -> None:
        """Before a write: the object's key and when the write begins (a resumed run tells its object by it)."""
        update = _Update()
        update.set(["journal_intents", key], at_ms)
        self._update(record, update)

    def finish(
        self, record: DeploymentRecord, status: DeploymentStatus, result: str, error: str | None, now: datetime
    ) -> None:
        """The final status, then the guild's lock released if this deployment still holds it."""
        update = _Update()
        update.set(["status"], status)
        update.set(["result"], result)
        update.set(["finished_at"], now.isoformat())
        update.set(["updated_at"], now.isoformat())
        update.remove(["resumes_at"])
        update.remove(["wait_reason"])
        if error:
            update.set(["error"], error)
        self._update(record, update)
        try:
            self._table.delete_item(
                Key=_lock_key(record.guild_id),
                ConditionExpression="deployment_id = :id",
                ExpressionAttributeValues={":id": record.deployment_id},
            )
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise

    def extend_lock(self, record: DeploymentRecord, expiration: int) -> None:
        try:
            self._table.update_item(
                Key=_lock_key(record.guild_id),
                UpdateExpression="SET expiration = :expiration",
                ConditionExpression="deployment_id = :id",
                ExpressionAttributeValues={":expiration": expiration, ":id": record.deployment_id},
            )
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise

    def mark_rolled_back(self, record: DeploymentRecord, rollback_id: str, now: datetime) -> None:
        update = _Update()
        update.set(["rolled_back_by"], rollback_id)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)
