"""Ids that stay true: when a restore or a rollback re-creates an object, the old id -> the new one, per guild.

One item per guild in the deployments table (`pk = GUILD#<guild_id>`, `sk = IDMAP`, `ids: {old: new}`), written
by the worker under the guild's lock (so read-modify-write is safe). Every later plan on the guild reads it
(`translated`): an id of a configuration that the guild no longer has is followed through the map (a chain,
when an object was re-created more than once) to the id the guild has now; an id the guild still has is never
touched. So the same backup restored again, or a configuration exported before a restore, renames rather than
re-creates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from svcconf.config import ServerConfig
from svcconf.deploy_engine.live import LiveGuild
from svcconf.settings import get_settings
from svcconf.store.dynamo import table

MAX_HOPS = 16  # a chain longer than this is a loop: stop following it
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


def resolve(object_id: str | None, present: set[str], ids: Mapping[str, str]) -> str | None:
    """The id the guild has now for `object_id`: itself when present, else followed through the map."""
    if object_id is None or object_id in present or object_id not in ids:
        return object_id
    current = object_id
    for _ in range(MAX_HOPS):
        current = ids.get(current, "")
        if not current or current in present:
            return current or object_id
    return object_id


def translate(config: ServerConfig, present: Iterable[str], ids: Mapping[str, str]) -> ServerConfig:
    """The configuration with each id the guild no longer has replaced by the one that object has now (pure)."""
    if not ids:
        return config
    here = set(present)

    def moved(model: Any) -> Any:
        new_id = resolve(model.id, here, ids)
        return model if new_id == model.id else model.model_copy(update={"id": new_id})

    return config.model_copy(
        update={
            "roles": [moved(role) for role in config.roles],
            "categories": [
                moved(category).model_copy(update={"channels": [moved(c) for c in category.channels]})
                for category in config.categories
            ],
            "channels": [moved(channel) for channel in config.channels],
        }
    )


def translated(config: ServerConfig, live: LiveGuild) -> ServerConfig:
    """`translate` with the guild's stored map and its objects now."""
    ids = read_id_map(live.id)
    return translate(config, [*(role.id for role in live.roles), *(c.id for c in live.channels)], ids)
