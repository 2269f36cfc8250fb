"""Ids that stay true for every plan on a guild: the configuration read through the guild's stored map of re-created
objects (`svcconf.store.id_map`, `svcconf.deploy_engine.id_map`)."""

from __future__ import annotations

from svcconf.config import ServerConfig
from svcconf.deploy_engine.id_map import translate
from svcconf.deploy_engine.live import LiveGuild
from svcconf.store.id_map import read_id_map


def translated(config: ServerConfig, live: LiveGuild) -> ServerConfig:
    """The configuration with each id the guild no longer has replaced by the one its object has now."""
    ids = read_id_map(live.id)
    return translate(config, [*(role.id for role in live.roles), *(c.id for c in live.channels)], ids)
