"""Deployment codes table: one item per code, consumed at most once, expired by TTL.

An item carries the `schema_version` of the release that wrote it (none before version 2); the reader takes the
attributes it knows and leaves the others, so a release reads the items of the one before and the one after it.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError
from pydantic import BaseModel

from svcconf.store import documents
from svcconf.store.dynamo import is_conditional_check_failure, table

SCHEMA_VERSION = 2  # of the items this release writes; 1 is the shape before the version was stored


class CodeRecord(BaseModel):
    code: str
    project_id: str
    project_name: str
    configuration: dict[str, Any]
    chat_user_id: str | None = None
    created_at: datetime
    expires_at: datetime
    consumed_at: datetime | None = None

    def is_usable(self, now: datetime) -> bool:
        # TTL deletion lags by up to two days, so expiry is checked here too.
        return self.consumed_at is None and self.expires_at > now


def _to_record(item: dict[str, Any]) -> CodeRecord:
    return CodeRecord(
        code=item["code"],
        project_id=item["project_id"],
        project_name=item["project_name"],
        configuration=documents.loaded(item["configuration"]),
        chat_user_id=item.get("chat_user_id"),
        created_at=item["created_at"],
        expires_at=item["expires_at"],
        consumed_at=item.get("consumed_at"),
    )


class CodeRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def insert(self, record: CodeRecord) -> bool:
        """Stores a new code; False when the code already exists (the caller mints another)."""
        item: dict[str, Any] = {
            "code": record.code,
            "project_id": record.project_id,
            "project_name": record.project_name,
            # A key of its own per attempt: a code that collides must not overwrite the other code's document.
            "configuration": documents.stored(
                record.configuration, f"codes/{record.code}/{secrets.token_hex(8)}.json.bz2"
            ),
            "created_at": record.created_at.isoformat(),
            "expires_at": record.expires_at.isoformat(),
            "expiration": int(record.expires_at.timestamp()),
            "schema_version": SCHEMA_VERSION,
        }
        if record.chat_user_id:
            item["chat_user_id"] = record.chat_user_id
        try:
            self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(code)")
        except ClientError as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True

    def get(self, code: str) -> CodeRecord | None:
        item = self._table.get_item(Key={"code": code}, ConsistentRead=True).get("Item")
        return _to_record(item) if item else None

    def consume(self, code: str, now: datetime) -> CodeRecord | None:
        """Marks the code used if it still is usable; of concurrent callers exactly one gets the record."""
        try:
            result = self._table.update_item(
                Key={"code": code},
                UpdateExpression="SET consumed_at = :now",
                ConditionExpression=(
                    "attribute_exists(code) AND attribute_not_exists(consumed_at) AND expiration > :epoch"
                ),
                ExpressionAttributeValues={":now": now.isoformat(), ":epoch": int(now.timestamp())},
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                return None
            raise
        return _to_record(result["Attributes"])
