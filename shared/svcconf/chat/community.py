"""The platform's onboarding, AutoMod rules and welcome screen as the service reads them, and their calls (v4).

The read models are lenient like the others (unknown fields ignored); the calls are a mixin of `ChatClient`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from svcconf.chat.models import ChatModel, Snowflake
from svcconf.chat.transport import ChatTransport, Route


class OptionEmoji(ChatModel):
    id: Snowflake | None = None
    name: str | None = None
    animated: bool = False


class OnboardingOption(ChatModel):
    id: Snowflake
    title: str
    description: str | None = None
    emoji: OptionEmoji | None = None
    role_ids: list[Snowflake] = Field(default_factory=list)
    channel_ids: list[Snowflake] = Field(default_factory=list)


class OnboardingPrompt(ChatModel):
    id: Snowflake
    title: str
    options: list[OnboardingOption] = Field(default_factory=list)
    single_select: bool = False
    required: bool = False
    in_onboarding: bool = True
    type: int = 0


class GuildOnboarding(ChatModel):
    guild_id: Snowflake
    prompts: list[OnboardingPrompt] = Field(default_factory=list)
    default_channel_ids: list[Snowflake] = Field(default_factory=list)
    enabled: bool = False
    mode: int = 0


class AutomodAction(ChatModel):
    type: int
    metadata: dict[str, Any] = Field(default_factory=dict)


class AutomodRule(ChatModel):
    id: Snowflake
    guild_id: Snowflake
    name: str
    creator_id: Snowflake | None = None
    event_type: int = 1
    trigger_type: int
    trigger_metadata: dict[str, Any] = Field(default_factory=dict)
    actions: list[AutomodAction] = Field(default_factory=list)
    enabled: bool = False
    exempt_roles: list[Snowflake] = Field(default_factory=list)
    exempt_channels: list[Snowflake] = Field(default_factory=list)


class WelcomeChannel(ChatModel):
    channel_id: Snowflake
    description: str
    emoji_id: Snowflake | None = None
    emoji_name: str | None = None


class WelcomeScreen(ChatModel):
    description: str | None = None
    welcome_channels: list[WelcomeChannel] = Field(default_factory=list)


class CommunityCalls(ChatTransport):
    """`ChatClient`'s calls for onboarding, AutoMod and the welcome screen (the bot's token)."""

    def get_onboarding(self, guild_id: str) -> GuildOnboarding:
        route = Route("GET", "/guilds/{guild_id}/onboarding", guild_id=guild_id)
        return GuildOnboarding.model_validate(self._json(route, self._bot_auth()))

    def put_onboarding(self, guild_id: str, payload: Mapping[str, Any], reason: str | None = None) -> GuildOnboarding:
        """Replace the fields given (MANAGE_GUILD and MANAGE_ROLES); enabling below the platform's minimum of
        default channels is refused (350000)."""
        route = Route("PUT", "/guilds/{guild_id}/onboarding", guild_id=guild_id)
        data = self._json(route, self._bot_auth(), json_body=dict(payload), reason=reason)
        return GuildOnboarding.model_validate(data)

    def list_automod_rules(self, guild_id: str) -> list[AutomodRule]:
        route = Route("GET", "/guilds/{guild_id}/auto-moderation/rules", guild_id=guild_id)
        return [AutomodRule.model_validate(item) for item in self._json(route, self._bot_auth()) or []]

    def create_automod_rule(self, guild_id: str, payload: Mapping[str, Any], reason: str | None = None) -> AutomodRule:
        route = Route("POST", "/guilds/{guild_id}/auto-moderation/rules", guild_id=guild_id)
        data = self._json(route, self._bot_auth(), json_body=dict(payload), reason=reason)
        return AutomodRule.model_validate(data)

    def modify_automod_rule(
        self, guild_id: str, rule_id: str, payload: Mapping[str, Any], reason: str | None = None
    ) -> AutomodRule:
        """Change a rule (its trigger cannot change: delete and create instead)."""
        route = Route("PATCH", "/guilds/{guild_id}/auto-moderation/rules/{rule_id}", guild_id=guild_id, rule_id=rule_id)
        data = self._json(route, self._bot_auth(), json_body=dict(payload), reason=reason)
        return AutomodRule.model_validate(data)

    def delete_automod_rule(self, guild_id: str, rule_id: str, reason: str | None = None) -> None:
        route = Route(
            "DELETE", "/guilds/{guild_id}/auto-moderation/rules/{rule_id}", guild_id=guild_id, rule_id=rule_id
        )
        self._send(route, self._bot_auth(), reason=reason)

    def get_welcome_screen(self, guild_id: str) -> WelcomeScreen:
        route = Route("GET", "/guilds/{guild_id}/welcome-screen", guild_id=guild_id)
        return WelcomeScreen.model_validate(self._json(route, self._bot_auth()))

    def modify_welcome_screen(
        self, guild_id: str, payload: Mapping[str, Any], reason: str | None = None
    ) -> WelcomeScreen:
        """A Community guild's welcome screen (MANAGE_GUILD); `enabled` shows or hides it."""
        route = Route("PATCH", "/guilds/{guild_id}/welcome-screen", guild_id=guild_id)
        data = self._json(route, self._bot_auth(), json_body=dict(payload), reason=reason)
        return WelcomeScreen.model_validate(data)
