"""The deploy plan's guild settings: one item with the changes field by field (the server's name first) and one
PATCH when any differ, planned after the channels so the AFK and system channels it names exist."""

from __future__ import annotations

from typing import Any

from svcconf.config import CHANNEL_TYPES
from svcconf.deploy_engine.attributes import CHANNEL_SETTINGS, SETTING_FIELDS, stated_settings
from svcconf.deploy_engine.live import platform_channel_name
from svcconf.deploy_engine.matching import config_channel_key
from svcconf.deploy_engine.plan_state import PlanState
from svcconf.deploy_engine.steps import SETTINGS_KEY, Action, Change, GuildStep, PlanItem


class SettingsPlanner(PlanState):
    """The planner's settings phase."""

    def _settings(self) -> None:
        """One item, its changes field by field in the configuration's names (the server's name first); one PATCH
        when any differ."""
        stated = stated_settings(self.config.settings)
        live = self.live.settings
        changes: list[Change] = []
        payload: dict[str, Any] = {}
        channels: dict[str, str] = {}
        previous: dict[str, Any] = {}
        if self.config.name != self.live.name:
            changes.append(Change(field="name", old=self.live.name, new=self.config.name))
            payload["name"], previous["name"] = self.config.name, self.live.name
        for name, value in stated.items():
            if name in CHANNEL_SETTINGS:
                platform, kind = CHANNEL_SETTINGS[name]
                channel_key = self._configured_channel_key(value, kind)
                current_id = getattr(live, platform)
                if current_id is not None and self.ids.get(channel_key) == current_id:
                    continue
                current = self.live.channel(current_id)
                changes.append(Change(field=name, old=current.name if current else None, new=value))
                channels[platform], previous[platform] = channel_key, current_id
                continue
            setting = SETTING_FIELDS[name]
            wanted, current_value = setting.to_platform(value), getattr(live, setting.platform)
            if wanted != current_value:
                changes.append(Change(field=name, old=setting.to_config(current_value), new=value))
                payload[setting.platform], previous[setting.platform] = wanted, current_value
        action: Action = "update" if changes else "keep"
        self.items.append(
            PlanItem(
                kind="settings",
                name="server settings",
                action=action,
                changes=changes,
                field="settings",
                key=SETTINGS_KEY,
            )
        )
        if changes:
            field = "name" if [change.field for change in changes] == ["name"] else "settings"
            self.steps.append(GuildStep(field=field, payload=payload, channels=channels, previous=previous))

    def _configured_channel_key(self, name: str, kind: str) -> str:
        """The key of the configuration's channel of that name and type (the schema makes it exactly one)."""
        channel_type = CHANNEL_TYPES[kind]
        wanted = platform_channel_name(name, channel_type)
        places = [(c, ch) for c in self.config.categories for ch in c.channels]
        for category, channel in [*places, *((None, ch) for ch in self.config.channels)]:
            if channel.type == kind and platform_channel_name(channel.name, channel_type) == wanted:
                return config_channel_key(category.name if category else None, channel)
        raise ValueError(f"no {kind} channel named {name!r}")  # the schema refuses such a configuration
