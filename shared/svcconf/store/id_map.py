"""Ids that stay true: when a restore or a rollback re-creates an object, the old id -> the new one, per guild.

One item per guild in the deployments table (`pk = GUILD#<guild_id>`, `sk = IDMAP`, `ids: {old: new}`), written
by the worker under the guild's lock (so read-modify-write is safe). Every later plan on the guild reads it
(`svcconf.deployments.ids.translated`): an id of a configuration that the guild no longer has is followed through
the map (a chain, when an object was re-created more than once) to the id the guild has now; an id the guild still
has is never touched. So the same backup restored again, or a configuration exported before a restore, renames
rather than re-creates.
"""

from __future__ import annotations

from collections.abc import Mapping

from svcconf.settings import get_settings
from svcconf.store.dynamo import table

MAX_ENTRIES = 8000  # about what a DynamoDB item holds: the oldest entries go first


def _key(guild_id: str) -> dict[str, str]:
    return {"pk": f"GUILD#{guild_id}", "sk": "IDMAP"}


def read_id_map(guild_id: str) -> dict[str, str]:
    item = table(get_settings().deployments_table).get_item(Key=_key(guild_id), ConsistentRead=True).get("Item")
    return dict(item.get("ids", {})) if item else {}


def record_recreations(guild_id: str, recreated: Mapping[str, str]) -> None:
    """Adds old id -> new id entries to the guild's map (a re-created object's newest id wins)."""
    entries = {old: new for old, new in recreated.items() if old and new and old != new}
    if not entries:
        return
    ids = read_id_map(guild_id) | entries
    if len(ids) > MAX_ENTRIES:  # snowflakes sort by time: the oldest old ids go
        ids = dict(sorted(ids.items(), key=lambda pair: int(pair[0]) if pair[0].isdigit() else 0)[-MAX_ENTRIES:])
    table(get_settings().deployments_table).put_item(Item={**_key(guild_id), "ids": ids})
