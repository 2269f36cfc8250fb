"""Ids that stay true, the pure part: an id of a configuration the guild no longer has, followed through the guild's
map of re-created objects (old id -> new id, `svcconf.store.id_map`) to the id that object has now; an id the guild
still has is never touched."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from svcconf.config import ServerConfig
from svcconf.deploy_engine.matching import config_channel_key
from svcconf.deploy_engine.steps import category_key, role_key

MAX_HOPS = 16  # a chain longer than this is a loop: stop following it


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


def configured_ids(config: ServerConfig) -> dict[str, str]:
    """Configuration key -> the id the configuration gives it (the reverse of `matching.with_ids`), where it has one."""
    ids = {role_key(role.name): role.id for role in config.roles if role.id}
    for category in config.categories:
        if category.id:
            ids[category_key(category.name)] = category.id
        ids |= {config_channel_key(category.name, c): c.id for c in category.channels if c.id}
    ids |= {config_channel_key(None, c): c.id for c in config.channels if c.id}
    return ids
