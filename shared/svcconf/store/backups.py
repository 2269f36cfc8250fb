"""Backups table: per guild, a small summary item (listed) and a compressed data item (fetched on demand).

Two retentions share the table: the bot's backups (manageBackup) and the snapshots deployments take before their
first write, which a rollback needs; each summary's `retention` says which, and each is pruned on its own count.
A snapshot too big for its item keeps its data in the documents bucket (`svcconf.store.documents`).

Every read is a strongly consistent read of the base table, so a backup is found the moment its write returns:
the bot fetches by `backup_id` alone through a locator item (partition `BACKUP_ID#<id>`, written in the same
transaction) rather than through a global secondary index, which is only eventually consistent.

A summary and its data item carry the `schema_version` of the release that wrote them (none before version 2); the
reader leaves the attributes it does not know, so a release reads the backups of the one before and the one after
it (a backup is read again long after it was written: the format of its data is `svcconf.backups.formats`'s).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field

from svcconf.store.dynamo import table

SUMMARY_PREFIX = "BACKUP#"
DATA_PREFIX = "DATA#"
LOCATOR_PREFIX = "BACKUP_ID#"  # a partition of its own per backup id: the table's hash key holds it
LOCATOR_SK = "LOCATOR"
SCHEMA_VERSION = 2  # of the items this release writes; 1 is the shape before the version was stored
MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item limit, attribute names and keys included
# DynamoDB's words for an item over that limit (PutItem, TransactWriteItems; UpdateItem says "Item size to
# update has exceeded ..."). Other ValidationExceptions (a key too long, an empty key) are bugs, not a 413.
ITEM_SIZE_MESSAGES = ("Item size has exceeded the maximum allowed size", "Item size to update has exceeded")
Retention = Literal["backup", "deployment", "scheduled"]  # manual and uploaded; deployments' snapshots; schedules'
BackupKind = Literal["manual", "uploaded", "scheduled", "deployment"]


class BackupSummary(BaseModel):
    backup_id: str
    guild_id: str
    guild_name: str | None = None
    label: str | None = None
    channels_count: int
    roles_count: int
    created_at: datetime
    size_bytes: int
    stored_bytes: int
    # v4: what a backup is (items of earlier releases have none of these: `kind_of` reads them)
    kind: str | None = Field(None, description="manual, uploaded, scheduled or deployment (an open set).")
    format: str | None = Field(None, description="configuration, discord-backup, template, platform or unknown.")
    restorable: bool | None = None
    made_by: str | None = Field(None, description="The chat user it was made for, when they could manage the guild.")
    digest: str | None = Field(None, description="sha256 of its content, ids and members included.")
    members_count: int | None = Field(None, description="Members whose roles it holds; null: not read.")


class ItemTooLarge(Exception):
    """DynamoDB refused the item for its size."""


def is_item_too_large(error: ClientError) -> bool:
    """DynamoDB refused a write because an item is over 400 KB, and for no other reason."""
    response = error.response
    code = response.get("Error", {}).get("Code")
    if code == "ValidationException":
        return any(words in response["Error"].get("Message", "") for words in ITEM_SIZE_MESSAGES)
    if code == "TransactionCanceledException":  # the reasons come one per item of the transaction
        reasons = response.get("CancellationReasons") or []
        refused = [reason for reason in reasons if reason.get("Code") not in (None, "None")]
        return bool(refused) and all(
            reason.get("Code") == "ValidationError"
            and any(words in reason.get("Message", "") for words in ITEM_SIZE_MESSAGES)
            for reason in refused
        )
    return False


def _locator_key(backup_id: str) -> dict[str, str]:
    return {"guild_id": LOCATOR_PREFIX + backup_id, "sk": LOCATOR_SK}


def _summary_from(item: dict[str, Any]) -> BackupSummary:
    summary = BackupSummary.model_validate({key: value for key, value in item.items() if key not in ("sk",)})
    if summary.kind is None:  # an item of an earlier release: a deployment's snapshot, or the bot's upload
        summary.kind = "deployment" if item.get("retention") == "deployment" else "uploaded"
    return summary


class BackupRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def insert(self, summary: BackupSummary, data: Any, retention: Retention = "backup") -> None:
        """Writes summary and data (compressed bytes, or a documents-bucket reference) together: a backup is
        either whole or absent."""
        summary_item = {
            "sk": SUMMARY_PREFIX + summary.backup_id,
            **summary.model_dump(mode="json", exclude_none=True),
            "retention": retention,
            "schema_version": SCHEMA_VERSION,
        }
        data_item = {
            "guild_id": summary.guild_id,
            "sk": DATA_PREFIX + summary.backup_id,
            "data": data,
            "schema_version": SCHEMA_VERSION,
        }
        locator_item = {**_locator_key(summary.backup_id), "backup_guild_id": summary.guild_id}
        try:
            # The resource's client serialises Python values itself, as the Table methods do.
            self._table.meta.client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": self._table.name, "Item": item}}
                    for item in (data_item, summary_item, locator_item)
                ]
            )
        except ClientError as error:
            if is_item_too_large(error):
                raise ItemTooLarge from error
            raise

    def summaries(self, guild_id: str, limit: int) -> list[BackupSummary]:
        """Newest first (backup ids sort by creation time)."""
        response = self._table.query(
            KeyConditionExpression="guild_id = :g AND begins_with(sk, :p)",
            ExpressionAttributeValues={":g": guild_id, ":p": SUMMARY_PREFIX},
            ScanIndexForward=False,
            Limit=limit,
            ConsistentRead=True,
        )
        return [_summary_from(item) for item in response["Items"]]

    def backup_ids_beyond(self, guild_id: str, keep: int, retention: Retention = "backup") -> list[str]:
        """Ids of this guild's backups of one retention older than its `keep` newest (a summary without
        `retention` is the bot's: it predates deployments' own)."""
        ids: list[str] = []
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "guild_id = :g AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {":g": guild_id, ":p": SUMMARY_PREFIX},
            "ProjectionExpression": "sk, #retention",
            "ExpressionAttributeNames": {"#retention": "retention"},
            "ScanIndexForward": False,
            "ConsistentRead": True,  # the backup just created counts
        }
        while True:
            response = self._table.query(**kwargs)
            ids += [
                item["sk"].removeprefix(SUMMARY_PREFIX)
                for item in response["Items"]
                if item.get("retention", "backup") == retention
            ]
            if "LastEvaluatedKey" not in response:
                return ids[keep:]
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def guild_of(self, backup_id: str) -> str | None:
        item = self._table.get_item(Key=_locator_key(backup_id), ConsistentRead=True).get("Item")
        return item["backup_guild_id"] if item else None

    def exists(self, guild_id: str, backup_id: str) -> bool:
        key = {"guild_id": guild_id, "sk": DATA_PREFIX + backup_id}
        return "Item" in self._table.get_item(Key=key, ConsistentRead=True, ProjectionExpression="sk")

    def get(self, guild_id: str, backup_id: str) -> tuple[BackupSummary, Any] | None:
        """The summary and the stored data attribute (compressed bytes, or a documents-bucket reference)."""
        summary_key = {"guild_id": guild_id, "sk": SUMMARY_PREFIX + backup_id}
        summary = self._table.get_item(Key=summary_key, ConsistentRead=True).get("Item")
        if not summary:
            return None
        data_key = {"guild_id": guild_id, "sk": DATA_PREFIX + backup_id}
        data = self._table.get_item(Key=data_key, ConsistentRead=True).get("Item")
        if not summary or not data:
            return None
        return _summary_from(summary), data["data"]

    def data_of(self, guild_id: str, backup_ids: list[str]) -> list[Any]:
        """The stored data attributes of these backups (to forget what they keep in the documents bucket)."""
        found = []
        for backup_id in backup_ids:
            key = {"guild_id": guild_id, "sk": DATA_PREFIX + backup_id}
            item = self._table.get_item(Key=key, ProjectionExpression="#d", ExpressionAttributeNames={"#d": "data"})
            found += [item["Item"]["data"]] if "Item" in item else []
        return found

    def delete(self, guild_id: str, backup_ids: list[str]) -> None:
        with self._table.batch_writer() as batch:
            for backup_id in backup_ids:
                for prefix in (SUMMARY_PREFIX, DATA_PREFIX):
                    batch.delete_item(Key={"guild_id": guild_id, "sk": prefix + backup_id})
                batch.delete_item(Key=_locator_key(backup_id))
