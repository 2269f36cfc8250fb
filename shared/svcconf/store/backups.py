"""Backups table: per guild, a small summary item (listed) and a compressed data item (fetched on demand)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError
from pydantic import BaseModel

from svcconf.store.dynamo import table

SUMMARY_PREFIX = "BACKUP#"
DATA_PREFIX = "DATA#"
BACKUP_ID_INDEX = "ByBackupId"
MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item limit, attribute names and keys included


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


class ItemTooLarge(Exception):
    """DynamoDB refused the item for its size."""


def _summary_from(item: dict[str, Any]) -> BackupSummary:
    return BackupSummary.model_validate({key: value for key, value in item.items() if key not in ("sk",)})


class BackupRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def insert(self, summary: BackupSummary, blob: bytes) -> None:
        """Writes summary and data together: a backup is either whole or absent."""
        summary_item = {
            "sk": SUMMARY_PREFIX + summary.backup_id,
            **summary.model_dump(mode="json", exclude_none=True),
        }
        data_item = {"guild_id": summary.guild_id, "sk": DATA_PREFIX + summary.backup_id, "data": blob}
        try:
            # The resource's client serialises Python values itself, as the Table methods do.
            self._table.meta.client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": self._table.name, "Item": item}} for item in (data_item, summary_item)
                ]
            )
        except ClientError as error:
            if "size" in str(error.response.get("Error", {}).get("Message", "")).lower():
                raise ItemTooLarge from error
            raise

    def summaries(self, guild_id: str, limit: int) -> list[BackupSummary]:
        """Newest first (backup ids sort by creation time)."""
        response = self._table.query(
            KeyConditionExpression="guild_id = :g AND begins_with(sk, :p)",
            ExpressionAttributeValues={":g": guild_id, ":p": SUMMARY_PREFIX},
            ScanIndexForward=False,
            Limit=limit,
        )
        return [_summary_from(item) for item in response["Items"]]

    def backup_ids_beyond(self, guild_id: str, keep: int) -> list[str]:
        """Ids of this guild's backups older than its `keep` newest."""
        ids: list[str] = []
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "guild_id = :g AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {":g": guild_id, ":p": SUMMARY_PREFIX},
            "ProjectionExpression": "sk",
            "ScanIndexForward": False,
        }
        while True:
            response = self._table.query(**kwargs)
            ids += [item["sk"].removeprefix(SUMMARY_PREFIX) for item in response["Items"]]
            if "LastEvaluatedKey" not in response:
                return ids[keep:]
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def guild_of(self, backup_id: str) -> str | None:
        response = self._table.query(
            IndexName=BACKUP_ID_INDEX,
            KeyConditionExpression="backup_id = :b",
            ExpressionAttributeValues={":b": backup_id},
            Limit=1,
        )
        items = response["Items"]
        return items[0]["guild_id"] if items else None

    def get(self, guild_id: str, backup_id: str) -> tuple[BackupSummary, bytes] | None:
        summary = self._table.get_item(Key={"guild_id": guild_id, "sk": SUMMARY_PREFIX + backup_id}).get("Item")
        data = self._table.get_item(Key={"guild_id": guild_id, "sk": DATA_PREFIX + backup_id}).get("Item")
        if not summary or not data:
            return None
        return _summary_from(summary), data["data"].value

    def delete(self, guild_id: str, backup_ids: list[str]) -> None:
        with self._table.batch_writer() as batch:
            for backup_id in backup_ids:
                for prefix in (SUMMARY_PREFIX, DATA_PREFIX):
                    batch.delete_item(Key={"guild_id": guild_id, "sk": prefix + backup_id})
