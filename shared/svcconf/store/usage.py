"""Usage table: counters in fixed windows, shared by every instance (svcconf.limits says what each one counts).

One item per counter and window, `key = "<counter>#<owner>#<window start>"`. A request takes its share with one
conditional update, which DynamoDB applies atomically however many instances ask at once; a refused update
changes nothing. DynamoDB's TTL deletes an item a while after its window ends (`expiration`); a reader never
relies on the TTL, since the window is in the key.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from svcconf.store.dynamo import is_conditional_check_failure, table


class UsageCounters:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def take(self, key: str, amount: int, limit: int, expires_at: int) -> int | None:
        """Adds `amount` to the counter unless it would pass `limit`: the new count, or None when refused.

        `amount` 0 only asks whether the counter is still below `limit` (and refuses at the limit itself)."""
        room = limit - amount if amount else limit - 1
        try:
            answer = self._table.update_item(
                Key={"key": key},
                UpdateExpression="ADD used :amount SET expiration = :expiration",
                ConditionExpression="attribute_not_exists(used) OR used <= :room",
                ExpressionAttributeValues={":amount": amount, ":room": room, ":expiration": expires_at},
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                return None
            raise
        return _count(answer)

    def add(self, key: str, amount: int, expires_at: int) -> int:
        """Adds `amount` whatever the count (what was spent is counted even past the limit): the new count."""
        answer = self._table.update_item(
            Key={"key": key},
            UpdateExpression="ADD used :amount SET expiration = :expiration",
            ExpressionAttributeValues={":amount": amount, ":expiration": expires_at},
            ReturnValues="UPDATED_NEW",
        )
        return _count(answer)

    def count(self, key: str) -> int:
        item = self._table.get_item(Key={"key": key}, ConsistentRead=True).get("Item")
        return int(item["used"]) if item and "used" in item else 0


def _count(answer: dict[str, Any]) -> int:
    return int(answer.get("Attributes", {}).get("used", 0))
