"""The live guild with its settings, for the export's pure tests, once the deploy plan compares settings."""

from __future__ import annotations

from typing import Any

from svcconf.deploy.live import LiveGuild


def with_settings(live: LiveGuild, settings: Any) -> LiveGuild:
    """`live` carrying `settings` (a guild or a template's snapshot): LiveGuild.settings comes with the v2 deploy
    (branch config-v2); before it, the plan does not compare settings and `live` is returned as it is."""
    if "settings" not in LiveGuild.model_fields:
        return live
    from svcconf.deploy.attributes import GuildSettings  # type: ignore[import-not-found,unused-ignore]

    values = {name: getattr(settings, name) for name in GuildSettings.model_fields}
    return live.model_copy(update={"settings": GuildSettings.model_validate(values)})
