"""The live guild with its settings, for the export's pure tests: the plan compares settings."""

from __future__ import annotations

from typing import Any

from svcconf.deploy_engine.attributes import GuildSettings
from svcconf.deploy_engine.live import LiveGuild


def with_settings(live: LiveGuild, settings: Any) -> LiveGuild:
    """`live` carrying `settings` (a guild or a template's snapshot)."""
    values = {name: getattr(settings, name) for name in GuildSettings.model_fields}
    return live.model_copy(update={"settings": GuildSettings.model_validate(values)})
