"""Deployments table: each user's deployments per project, with their progress, and one lock per guild.

- A deployment: `pk = USER#<sub>`, `sk = DEPLOYMENT#<project_id>#<deployment_id>` (ids sort by creation
  time, so a project's newest deployment is the first of a descending query). It carries its status, its step
  counts, its configuration (compressed, or in the documents bucket when too big: `svcconf.store.documents`),
  and its journal: the ids it created, the objects it updated with their previous attributes, the
  objects that failed, the intent of each write journaled and the fingerprint of what each write left
  (`svcconf.deploy_engine.journal`). Applied steps update it in place (one UpdateItem for those journaled together:
  `svcconf.deployments.run_journal`), so a resumed worker knows what was done.
- The guild lock: `pk = GUILD#<guild_id>`, `sk = LOCK`, naming the deployment that holds it, and the writes it has
  begun (`svcconf.store.write_intents`). It is taken in the same transaction that writes the queued deployment (a
  conditional write, not a read-then-write) and expires by itself (`expiration`) if a worker is ever lost for good.
- A deployment's reference: `pk = DEPLOYMENT#<deployment_id>`, `sk = REF`, naming its item, written in the same
  transaction, so a deployment is found by its id alone (`cancel`, `rollback` with `deployment_id`).
- Cancelling is a conditional update (only a deployment not yet ended); the worker's writes that follow one check
  it: the intent before each write refuses a cancelled deployment (on the lock, which the cancel marks), the checkpoint
  after each step answers its status.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from svcconf.store.deployment_items import (
    ACTIVE,
    DeploymentKind,
    DeploymentRecord,
    DeploymentStatus,
    Progress,
    Steps,
    item_attributes,
    progress_update,
    record_from,
)
from svcconf.store.dynamo import UpdateExpression, is_conditional_check_failure, table

HISTORY_LENGTH = 20  # `info` answers the newest 20 deployments of a project
CANCEL_GRACE_SECONDS = 120  # a cancelled running deployment's guild is free at the latest after this


class GuildBusy(Exception):
    """Another deployment or rollback holds the guild."""


class DeploymentCancelled(Exception):
    """The deployment was cancelled: the worker writes nothing more."""


class AlreadyEnded(Exception):
    """The deployment to cancel had already ended."""


def _pk(user_id: str) -> str:
    return f"USER#{user_id}"


def _sk(project_id: str, deployment_id: str = "") -> str:
    return f"DEPLOYMENT#{project_id}#{deployment_id}"


def lock_key(guild_id: str) -> dict[str, str]:
    return {"pk": f"GUILD#{guild_id}", "sk": "LOCK"}


def lock_holder_key(record: DeploymentRecord) -> dict[str, str]:
    return {"holder_pk": _pk(record.user_id), "holder_sk": _sk(record.project_id, record.deployment_id)}


def _active_condition(update: UpdateExpression) -> str:
    """The deployment has not ended (queued, running or waiting)."""
    values = ", ".join(update.value(status) for status in ACTIVE)
    return f"{update.name('status')} IN ({values})"


def _reference_key(deployment_id: str) -> dict[str, str]:
    return {"pk": f"DEPLOYMENT#{deployment_id}", "sk": "REF"}


def record_key(record: DeploymentRecord) -> dict[str, str]:
    """The table key of a deployment's item."""
    return {"pk": _pk(record.user_id), "sk": _sk(record.project_id, record.deployment_id)}


def _to_item(record: DeploymentRecord) -> dict[str, Any]:
    return {**record_key(record), **item_attributes(record)}


class DeploymentRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    # -- the request side ----------------------------------------------------------------------------------

    def start(self, record: DeploymentRecord, *, lock_expiration: int, now: int) -> None:
        """Writes the queued deployment and takes its guild's lock, both or neither; `GuildBusy` if held."""
        lock = {
            **lock_key(record.guild_id),
            **lock_holder_key(record),
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
                    {
                        "Put": {
                            "TableName": self._table.name,
                            "Item": {**_reference_key(record.deployment_id), **lock_holder_key(record)},
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
        lock = self._table.get_item(Key=lock_key(guild_id), ConsistentRead=True).get("Item")
        if not lock or int(lock["expiration"]) < now:
            return None
        item = self._table.get_item(Key={"pk": lock["holder_pk"], "sk": lock["holder_sk"]}).get("Item")
        return record_from(item) if item else None

    def find(self, deployment_id: str, user_id: str | None = None) -> DeploymentRecord | None:
        """A deployment by its id alone (of `user_id`, when given); one written before references existed is
        found among that user's deployments."""
        reference = self._table.get_item(Key=_reference_key(deployment_id), ConsistentRead=True).get("Item")
        if reference is not None:
            item = self._table.get_item(
                Key={"pk": reference["holder_pk"], "sk": reference["holder_sk"]}, ConsistentRead=True
            ).get("Item")
            found = record_from(item) if item else None
            return found if found is not None and user_id in (None, found.user_id) else None
        if user_id is None:
            return None
        arguments: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "FilterExpression": "deployment_id = :id",
            "ExpressionAttributeValues": {":pk": _pk(user_id), ":prefix": "DEPLOYMENT#", ":id": deployment_id},
            "ConsistentRead": True,
        }
        while True:
            response = self._table.query(**arguments)
            if response["Items"]:
                return record_from(response["Items"][0])
            if "LastEvaluatedKey" not in response:
                return None
            arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def history(
        self, user_id: str, project_id: str, *, guild_id: str | None = None, limit: int = HISTORY_LENGTH
    ) -> list[DeploymentRecord]:
        """The user's deployments of the project (to the guild, when given), newest first, at most `limit`."""
        found: list[DeploymentRecord] = []
        for record in self._history(user_id, project_id):
            if guild_id is None or record.guild_id == guild_id:
                found.append(record)
                if len(found) == limit:
                    break
        return found

    def later(self, record: DeploymentRecord) -> list[DeploymentRecord]:
        """The user's deployments of the same project to the same guild made after `record`, newest first."""
        return [
            other
            for other in self._history(record.user_id, record.project_id)
            if other.guild_id == record.guild_id and other.deployment_id > record.deployment_id
        ]

    def cancel(self, record: DeploymentRecord, *, by: str, result: str, now: datetime) -> DeploymentStatus:
        """Ends a queued, waiting or running deployment `cancelled`; `AlreadyEnded` if it had ended. A queued or
        waiting one frees its guild at once; a running one keeps it until its worker stops at its next step (it
        releases it then), or `CANCEL_GRACE_SECONDS` at most. Answers the status it had."""
        update = UpdateExpression()
        update.set(["status"], "cancelled")
        update.set(["cancelled_by"], by)
        update.set(["result"], result)
        update.set(["finished_at"], now.isoformat())
        update.set(["updated_at"], now.isoformat())
        update.remove(["resumes_at"])
        update.remove(["wait_reason"])
        condition = _active_condition(update)
        try:
            answer = self._table.update_item(
                Key={"pk": _pk(record.user_id), "sk": _sk(record.project_id, record.deployment_id)},
                **update.arguments(),
                ConditionExpression=condition,
                ReturnValues="UPDATED_OLD",
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                raise AlreadyEnded from error
            raise
        was: DeploymentStatus = answer["Attributes"]["status"]
        if was == "running":
            self._hand_over_lock(record, int(now.timestamp()) + CANCEL_GRACE_SECONDS)
        else:
            self.release(record)
        return was

    def _hand_over_lock(self, record: DeploymentRecord, expiration: int) -> None:
        """The cancelled running deployment's lock: marked so its worker can no longer extend it, and short."""
        try:
            self._table.update_item(
                Key=lock_key(record.guild_id),
                UpdateExpression="SET expiration = :expiration, cancelled = :yes",
                ConditionExpression="deployment_id = :id",
                ExpressionAttributeValues={":expiration": expiration, ":id": record.deployment_id, ":yes": True},
            )
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise

    def release(self, record: DeploymentRecord) -> None:
        """Frees the guild if this deployment still holds it."""
        try:
            self._table.delete_item(
                Key=lock_key(record.guild_id),
                ConditionExpression="deployment_id = :id",
                ExpressionAttributeValues={":id": record.deployment_id},
            )
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise

    def get(self, user_id: str, project_id: str, deployment_id: str) -> DeploymentRecord | None:
        key = {"pk": _pk(user_id), "sk": _sk(project_id, deployment_id)}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        return record_from(item) if item else None

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
            yield from (record_from(item) for item in response["Items"])
            if "LastEvaluatedKey" not in response:
                return
            arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # -- the worker side -----------------------------------------------------------------------------------

    def _update(self, record: DeploymentRecord, update: UpdateExpression, **conditions: Any) -> dict[str, Any]:
        key = {"pk": _pk(record.user_id), "sk": _sk(record.project_id, record.deployment_id)}
        answer: dict[str, Any] = self._table.update_item(Key=key, **update.arguments(), **conditions)
        return answer

    def _update_active(self, record: DeploymentRecord, update: UpdateExpression) -> None:
        """An update of a deployment that has not ended; `DeploymentCancelled` if it has (a cancel came first)."""
        try:
            self._update(record, update, ConditionExpression=_active_condition(update))
        except ClientError as error:
            if is_conditional_check_failure(error):
                raise DeploymentCancelled(record.deployment_id) from error
            raise

    def mark_running(self, record: DeploymentRecord, *, steps: Steps | None, now: datetime) -> None:
        """`DeploymentCancelled` if it was cancelled meanwhile: nothing is written to the guild then."""
        update = UpdateExpression()
        update.set(["status"], "running")
        update.set(["updated_at"], now.isoformat())
        for journal in ("journal_intents", "journal_after"):  # their entries are set one by one
            update.default([journal], {})
        update.remove(["resumes_at"])
        update.remove(["wait_reason"])
        if steps is not None:
            update.set(["steps"], steps.model_dump(mode="json"))
            update.set(["counted"], True)
        self._update_active(record, update)

    def mark_waiting(self, record: DeploymentRecord, resumes_at: datetime, reason: str, now: datetime) -> None:
        update = UpdateExpression()
        update.set(["status"], "waiting")
        update.set(["resumes_at"], resumes_at.isoformat())
        update.set(["wait_reason"], reason)
        update.set(["updated_at"], now.isoformat())
        self._update_active(record, update)

    def set_code(self, record: DeploymentRecord, code: str, now: datetime) -> None:
        update = UpdateExpression()
        update.set(["deployment_code"], code)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)

    def set_backup(self, record: DeploymentRecord, backup_id: str, now: datetime) -> None:
        update = UpdateExpression()
        update.set(["backup_id"], backup_id)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)

    def record_progress(
        self, record: DeploymentRecord, progress: Progress, now: datetime, intents: dict[str, int] | None = None
    ) -> DeploymentStatus:
        """Steps' outcomes, in place, with the `intents` of their writes: journal entries set, counts added, errors
        appended, whatever the status (a step written is journaled, cancelled or not). Answers "cancelled" if it
        was cancelled since, else "running"."""
        try:
            self._update_active(record, progress_update(progress, now, intents))
        except DeploymentCancelled:
            self._update(record, progress_update(progress, now, intents))
            return "cancelled"
        return "running"

    def finish(
        self, record: DeploymentRecord, status: DeploymentStatus, result: str, error: str | None, now: datetime
    ) -> bool:
        """The final status, then the guild's lock released if this deployment still holds it. False (and the
        status left as it is) when it was cancelled meanwhile."""
        update = UpdateExpression()
        update.set(["status"], status)
        update.set(["result"], result)
        update.set(["finished_at"], now.isoformat())
        update.set(["updated_at"], now.isoformat())
        update.remove(["resumes_at"])
        update.remove(["wait_reason"])
        if error:
            update.set(["error"], error)
        try:
            self._update_active(record, update)
        except DeploymentCancelled:
            return False
        finally:
            self.release(record)
        return True

    def settle_cancelled(self, record: DeploymentRecord, result: str, now: datetime) -> None:
        """A cancelled deployment's worker stopped: its result says all it wrote, and its guild is free."""
        update = UpdateExpression()
        update.set(["result"], result)
        update.set(["updated_at"], now.isoformat())
        condition = f"{update.name('status')} = {update.value('cancelled')}"
        try:
            self._update(record, update, ConditionExpression=condition)
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise
        self.release(record)

    def extend_lock(self, record: DeploymentRecord, expiration: int) -> None:
        """Only while the deployment holds the lock and was not cancelled; its writes' intents go there
        (`svcconf.store.write_intents`)."""
        try:
            self._table.update_item(
                Key=lock_key(record.guild_id),
                UpdateExpression="SET expiration = :expiration, intents = if_not_exists(intents, :none)",
                ConditionExpression="deployment_id = :id AND attribute_not_exists(cancelled)",
                ExpressionAttributeValues={":expiration": expiration, ":id": record.deployment_id, ":none": {}},
            )
        except ClientError as failure:
            if not is_conditional_check_failure(failure):
                raise

    def mark_rolled_back(self, record: DeploymentRecord, rollback_id: str, now: datetime) -> None:
        update = UpdateExpression()
        update.set(["rolled_back_by"], rollback_id)
        update.set(["updated_at"], now.isoformat())
        self._update(record, update)
