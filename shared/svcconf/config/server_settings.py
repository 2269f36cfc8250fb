"""The server's own settings (verification, notifications, AFK and system channels, locale, description)."""

from __future__ import annotations

from pydantic import Field

from svcconf.config.field_types import ConfigModel, Name
from svcconf.config.vocabulary import (
    MAX_GUILD_DESCRIPTION_LENGTH,
    AfkTimeout,
    DefaultNotifications,
    ExplicitContentFilter,
    Locale,
    SystemChannelFlag,
    VerificationLevel,
)


class Settings(ConfigModel):
    """The server's own settings. A setting left out (or null) stays as the server has it."""

    verification_level: VerificationLevel | None = None
    default_notifications: DefaultNotifications | None = None
    explicit_content_filter: ExplicitContentFilter | None = None
    afk_channel: Name | None = Field(None, description="A voice channel of this configuration, by name.")
    afk_timeout: AfkTimeout | None = Field(None, description="Seconds: 60, 300, 900, 1800 or 3600.")
    system_channel: Name | None = Field(None, description="A text channel of this configuration, by name.")
    system_channel_flags: list[SystemChannelFlag] | None = Field(
        None, description="What the system channel does not post."
    )
    preferred_locale: Locale | None = None
    description: str | None = Field(None, max_length=MAX_GUILD_DESCRIPTION_LENGTH)
