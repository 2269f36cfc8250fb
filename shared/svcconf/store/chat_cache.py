"""Chat-cache table: what the chat platform said, shared by every Lambda instance for a short while.

One item so far, the set of guilds the bot is in (`key = bot-guilds`): guild ids as sorted unsigned 64-bit
integers, zlib-compressed (5,000 guilds take about 39 KB; the 400 KB item holds about 50,000; a larger set is
not shared, and each call fetches it). `lease_until`
lets one instance refresh a stale set while the others keep answering from it. DynamoDB's TTL deletes the item
a day after it was fetched; freshness is decided by `fetched_at`, not by the TTL, which can lag by days.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from svcconf.store.backups import is_item_too_large
from svcconf.store.dynamo import is_conditional_check_failure, table

BOT_GUILDS_KEY = "bot-guilds"
ITEM_LIFETIME_SECONDS = 24 * 3600  # TTL: only for cleaning up; the reader decides what is fresh
_ID = struct.Struct(">Q")


@dataclass(frozen=True)
class CachedGuildIds:
    guild_ids: frozenset[str]
    fetched_at: float  # epoch seconds


def pack_ids(guild_ids: Iterable[str]) -> bytes:
    numbers = sorted({int(guild_id) for guild_id in guild_ids})
    return zlib.compress(b"".join(_ID.pack(number) for number in numbers), 6)


def unpack_ids(blob: bytes) -> frozenset[str]:
    raw = zlib.decompress(blob)
    return frozenset(str(number) for (number,) in _ID.iter_unpack(raw))


class ChatCacheRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def bot_guilds(self) -> CachedGuildIds | None:
        # Eventually consistent (half the price): a set a second older than the newest is as good.
        item = self._table.get_item(Key={"key": BOT_GUILDS_KEY}).get("Item")
        if not item or "guild_ids" not in item:
            return None
        return CachedGuildIds(unpack_ids(item["guild_ids"].value), float(item["fetched_at"]))

    def put_bot_guilds(self, guild_ids: Iterable[str], fetched_at: float) -> bool:
        """Store the set (and drop any refresh lease); False when it is too large for one item."""
        blob = pack_ids(guild_ids)
        item: dict[str, Any] = {
            "key": BOT_GUILDS_KEY,
            "guild_ids": blob,
            "fetched_at": Decimal(str(round(fetched_at, 3))),
            "expiration": int(fetched_at) + ITEM_LIFETIME_SECONDS,
        }
        try:
            self._table.put_item(Item=item)
        except ClientError as error:
            if is_item_too_large(error):
                return False
            raise
        return True

    def claim_refresh(self, now: float, lease_seconds: float) -> bool:
        """Take the right to refresh the stored set for `lease_seconds`; False if another instance holds it."""
        try:
            self._table.update_item(
                Key={"key": BOT_GUILDS_KEY},
                UpdateExpression="SET lease_until = :until",
                ConditionExpression=(
                    "attribute_exists(#key) AND (attribute_not_exists(lease_until) OR lease_until < :now)"
                ),
                ExpressionAttributeNames={"#key": "key"},
                ExpressionAttributeValues={
                    ":until": Decimal(str(round(now + lease_seconds, 3))),
                    ":now": Decimal(str(round(now, 3))),
                },
            )
        except ClientError as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True
