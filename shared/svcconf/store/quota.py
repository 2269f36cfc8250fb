"""The service's own creations per guild, and what the platform's creation buckets said, in the deployments table.

- A creation: `pk = GUILD#<guild_id>`, `sk = CREATED#<kind>#<ISO time>#<object id>`, gone by itself (TTL
  `expiration`) once it no longer counts against the platform's 48-hour creation quota.
- A bucket: `pk = GUILD#<guild_id>`, `sk = BUCKET#<kind>`: the limit, remaining and reset the route's
  `X-RateLimit-*` headers gave last, kept until that reset.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from svcconf.deploy_engine.quota import WINDOW, Observed, QuotaKind
from svcconf.store.dynamo import plain_integers, table


def _pk(guild_id: str) -> str:
    return f"GUILD#{guild_id}"


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")  # one width, so the sort keys order by time


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


class QuotaRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def record_creations(self, guild_id: str, kind: QuotaKind, ids: Iterable[str], at: datetime) -> None:
        expiration = _epoch(at + WINDOW) + 1
        with self._table.batch_writer() as batch:
            for object_id in ids:
                sk = f"CREATED#{kind}#{_stamp(at)}#{object_id}"
                batch.put_item(Item={"pk": _pk(guild_id), "sk": sk, "at": at.isoformat(), "expiration": expiration})

    def creations_since(self, guild_id: str, kind: QuotaKind, since: datetime) -> list[datetime]:
        """When the service created each object of this kind in the guild after `since`, oldest first."""
        arguments: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {
                ":pk": _pk(guild_id),
                ":low": f"CREATED#{kind}#{_stamp(since)}",
                ":high": f"CREATED#{kind}#~",
            },
            "ProjectionExpression": "#at",
            "ExpressionAttributeNames": {"#at": "at"},
        }
        moments: list[datetime] = []
        while True:
            response = self._table.query(**arguments)
            moments.extend(datetime.fromisoformat(item["at"]) for item in response["Items"])
            if "LastEvaluatedKey" not in response:
                return moments
            arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def remember_bucket(self, guild_id: str, kind: QuotaKind, observed: Observed) -> None:
        item = {
            "pk": _pk(guild_id),
            "sk": f"BUCKET#{kind}",
            "remaining": observed.remaining,
            "resets_at": observed.resets_at.isoformat(),
            "observed_at": observed.observed_at.isoformat(),
            "expiration": _epoch(observed.resets_at) + 1,
        }
        if observed.limit is not None:
            item["limit"] = observed.limit
        self._table.put_item(Item=item)

    def bucket(self, guild_id: str, kind: QuotaKind, now: datetime) -> Observed | None:
        """The bucket's last word, unless it has reset since (TTL deletes lag: the time is checked here)."""
        item = self._table.get_item(Key={"pk": _pk(guild_id), "sk": f"BUCKET#{kind}"}).get("Item")
        if not item or _epoch(now) >= int(item["expiration"]):
            return None
        values = plain_integers(item)
        return Observed(
            limit=values.get("limit"),
            remaining=values["remaining"],
            resets_at=datetime.fromisoformat(values["resets_at"]),
            observed_at=datetime.fromisoformat(values["observed_at"]),
        )

    def counted(self, guild_id: str, kind: QuotaKind, now: datetime) -> list[datetime]:
        """The service's creations that still count against the quota now."""
        return self.creations_since(guild_id, kind, now - WINDOW - timedelta(seconds=1))
