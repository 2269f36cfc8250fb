"""The chat platform's named values beyond permissions (API v10), as data: a configuration writes the names,
the platform takes the numbers.

Each table maps the configuration's name to the platform's value; `name_of` reads a platform value back (an
export, a template), and flag sets go through `flags_to_int` / `flags_from_int` like permission bitfields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

VerificationLevel = Literal["none", "low", "medium", "high", "very_high"]
DefaultNotifications = Literal["all_messages", "only_mentions"]
ExplicitContentFilter = Literal["disabled", "members_without_roles", "all_members"]
AfkTimeout = Literal[60, 300, 900, 1800, 3600]
VideoQuality = Literal["auto", "full"]
ForumSort = Literal["latest_activity", "creation_date"]
ForumLayout = Literal["list", "gallery"]
Locale = Literal[
    "ar", "bg", "cs", "da", "de", "el", "en-GB", "en-US", "es-419", "es-ES", "fi", "fr", "he", "hi", "hr", "hu",
    "id", "it", "ja", "ko", "lt", "nl", "no", "pl", "pt-BR", "ro", "ru", "sv-SE", "th", "tr", "uk", "vi", "zh-CN",
    "zh-TW",
]  # fmt: skip

VERIFICATION_LEVELS: dict[str, int] = {"none": 0, "low": 1, "medium": 2, "high": 3, "very_high": 4}
DEFAULT_NOTIFICATIONS: dict[str, int] = {"all_messages": 0, "only_mentions": 1}
EXPLICIT_CONTENT_FILTERS: dict[str, int] = {"disabled": 0, "members_without_roles": 1, "all_members": 2}
VIDEO_QUALITY_MODES: dict[str, int] = {"auto": 1, "full": 2}
FORUM_SORT_ORDERS: dict[str, int] = {"latest_activity": 0, "creation_date": 1}
FORUM_LAYOUTS: dict[str, int] = {"list": 1, "gallery": 2}  # 0 is "not set": the configuration leaves it out

# The guild's system_channel_flags: what the system channel does not post.
SYSTEM_CHANNEL_FLAGS: dict[str, int] = {
    "SUPPRESS_JOIN_NOTIFICATIONS": 0,
    "SUPPRESS_PREMIUM_SUBSCRIPTIONS": 1,
    "SUPPRESS_GUILD_REMINDER_NOTIFICATIONS": 2,
    "SUPPRESS_JOIN_NOTIFICATION_REPLIES": 3,
    "SUPPRESS_ROLE_SUBSCRIPTION_PURCHASE_NOTIFICATIONS": 4,
    "SUPPRESS_ROLE_SUBSCRIPTION_PURCHASE_NOTIFICATION_REPLIES": 5,
}
SystemChannelFlag = Literal[
    "SUPPRESS_JOIN_NOTIFICATIONS",
    "SUPPRESS_PREMIUM_SUBSCRIPTIONS",
    "SUPPRESS_GUILD_REMINDER_NOTIFICATIONS",
    "SUPPRESS_JOIN_NOTIFICATION_REPLIES",
    "SUPPRESS_ROLE_SUBSCRIPTION_PURCHASE_NOTIFICATIONS",
    "SUPPRESS_ROLE_SUBSCRIPTION_PURCHASE_NOTIFICATION_REPLIES",
]

REQUIRE_TAG_FLAG = 1 << 4  # a channel flag: a forum post must carry a tag

# Features a guild needs for some of what a configuration may ask.
ROLE_ICONS = "ROLE_ICONS"  # role emoji
COMMUNITY = "COMMUNITY"  # stage channels, the guild description
NEWS = "NEWS"  # announcement channels

# Without boosts (the platform's channel docs: voice 96000, stage 64000; a boosted guild allows more).
MIN_BITRATE = 8000
MAX_BITRATE_BY_TYPE: dict[str, int] = {"voice": 96000, "stage": 64000}
MAX_FORUM_TAGS = 20
MAX_TAG_NAME_LENGTH = 20
MAX_GUILD_DESCRIPTION_LENGTH = 120
MAX_EMOJI_LENGTH = 32  # a unicode emoji, with its modifiers and joiners


def name_of(table: Mapping[str, int], value: int | None) -> str | None:
    """The configuration's name of a platform value, or None for a value the table does not name."""
    return next((name for name, number in table.items() if number == value), None)


def flags_to_int(names: Iterable[str], bits: Mapping[str, int]) -> int:
    value = 0
    for name in names:
        value |= 1 << bits[name]
    return value


def flags_from_int(value: int, bits: Mapping[str, int]) -> list[str]:
    """The flag names set in `value`, in bit order; unnamed bits are ignored (the platform adds flags over time)."""
    return [name for name, bit in bits.items() if value >> bit & 1]
