"""A deployment's snapshot: the guild as the platform returned it just before the deployment's first write, which
its rollback returns to, and the state of one role or channel that the deploy worker fingerprints.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from svcconf.chat import Channel, Role
from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen
from svcconf.deploy_engine.attributes import GuildSettings, attributes_of_type, live_role_attributes
from svcconf.deploy_engine.live import LiveGuild


class GuildSnapshot(BaseModel):
    """The guild's settings, roles, categories, channels and overwrites at one moment, as the platform returned them."""

    guild_id: str
    guild_name: str
    taken_at: datetime
    settings: GuildSettings | None = None  # None: a snapshot from before settings were recorded
    roles: list[Role]
    channels: list[Channel]
    # v4 (None: not read, or a snapshot from before them): what a rollback puts back
    features: list[str] = Field(default_factory=list)
    automod_rules: list[AutomodRule] | None = None
    onboarding: GuildOnboarding | None = None
    welcome_screen: WelcomeScreen | None = None

    @classmethod
    def of(cls, live: LiveGuild, taken_at: datetime) -> GuildSnapshot:
        return cls(
            guild_id=live.id,
            guild_name=live.name,
            taken_at=taken_at,
            settings=live.settings,
            roles=live.roles,
            channels=live.channels,
            features=live.features,
            automod_rules=live.automod_rules,
            onboarding=live.onboarding,
            welcome_screen=live.welcome_screen,
        )

    def backup_data(self, deployment_id: str) -> dict[str, Any]:
        """The manageBackup store's form: roles, categories and channels in lists of their own."""
        channels = [c.model_dump(mode="json") for c in self.channels if not c.is_category]
        return {
            "kind": "deployment-snapshot",
            "deployment_id": deployment_id,
            "guild": {"id": self.guild_id, "name": self.guild_name},
            "taken_at": self.taken_at.isoformat(),
            "settings": self.settings.model_dump() if self.settings else None,
            "roles": [role.model_dump(mode="json") for role in self.roles],
            "categories": [c.model_dump(mode="json") for c in self.channels if c.is_category],
            "channels": channels,
            **self.model_dump(mode="json", include={"features", "automod_rules", "onboarding", "welcome_screen"}),
        }

    @classmethod
    def from_backup_data(cls, data: dict[str, Any]) -> GuildSnapshot:
        return cls(
            guild_id=data["guild"]["id"],
            guild_name=data["guild"]["name"],
            taken_at=data["taken_at"],
            settings=data.get("settings"),
            roles=data["roles"],
            channels=[*data["categories"], *data["channels"]],
            features=data.get("features") or [],
            automod_rules=data.get("automod_rules"),
            onboarding=data.get("onboarding"),
            welcome_screen=data.get("welcome_screen"),
        )


def role_state(role: Role) -> dict[str, Any]:
    return live_role_attributes(role)


def _overwrites(channel: Channel) -> list[dict[str, Any]]:
    return sorted((o.model_dump() for o in channel.permission_overwrites), key=lambda o: (o["type"], o["id"]))


def channel_state(channel: Channel) -> dict[str, Any]:
    state: dict[str, Any] = {"permission_overwrites": _overwrites(channel)}
    if not channel.is_category:
        state |= attributes_of_type(channel)
    return state
