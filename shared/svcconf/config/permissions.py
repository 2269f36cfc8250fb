"""The chat platform's permission flags, channel types and limits (API v10), as data.

`PERMISSION_BITS` is the single source: the `Permission` enum, `ALL_PERMISSIONS` and the
bitfield helpers are derived from it. Bitfields travel as decimal strings because they
exceed the 53 bits a JSON number can carry exactly in some clients.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

# name -> bit index. Bit 47 is undocumented by the platform, so it has no name here.
PERMISSION_BITS: dict[str, int] = {
    "CREATE_INSTANT_INVITE": 0,
    "KICK_MEMBERS": 1,
    "BAN_MEMBERS": 2,
    "ADMINISTRATOR": 3,
    "MANAGE_CHANNELS": 4,
    "MANAGE_GUILD": 5,
    "ADD_REACTIONS": 6,
    "VIEW_AUDIT_LOG": 7,
    "PRIORITY_SPEAKER": 8,
    "STREAM": 9,
    "VIEW_CHANNEL": 10,
    "SEND_MESSAGES": 11,
    "SEND_TTS_MESSAGES": 12,
    "MANAGE_MESSAGES": 13,
    "EMBED_LINKS": 14,
    "ATTACH_FILES": 15,
    "READ_MESSAGE_HISTORY": 16,
    "MENTION_EVERYONE": 17,
    "USE_EXTERNAL_EMOJIS": 18,
    "VIEW_GUILD_INSIGHTS": 19,
    "CONNECT": 20,
    "SPEAK": 21,
    "MUTE_MEMBERS": 22,
    "DEAFEN_MEMBERS": 23,
    "MOVE_MEMBERS": 24,
    "USE_VAD": 25,
    "CHANGE_NICKNAME": 26,
    "MANAGE_NICKNAMES": 27,
    "MANAGE_ROLES": 28,
    "MANAGE_WEBHOOKS": 29,
    "MANAGE_GUILD_EXPRESSIONS": 30,
    "USE_APPLICATION_COMMANDS": 31,
    "REQUEST_TO_SPEAK": 32,
    "MANAGE_EVENTS": 33,
    "MANAGE_THREADS": 34,
    "CREATE_PUBLIC_THREADS": 35,
    "CREATE_PRIVATE_THREADS": 36,
    "USE_EXTERNAL_STICKERS": 37,
    "SEND_MESSAGES_IN_THREADS": 38,
    "USE_EMBEDDED_ACTIVITIES": 39,
    "MODERATE_MEMBERS": 40,
    "VIEW_CREATOR_MONETIZATION_ANALYTICS": 41,
    "USE_SOUNDBOARD": 42,
    "CREATE_GUILD_EXPRESSIONS": 43,
    "CREATE_EVENTS": 44,
    "USE_EXTERNAL_SOUNDS": 45,
    "SEND_VOICE_MESSAGES": 46,
    "SET_VOICE_CHANNEL_STATUS": 48,
    "SEND_POLLS": 49,
    "USE_EXTERNAL_APPS": 50,
    "PIN_MESSAGES": 51,
    "BYPASS_SLOWMODE": 52,
}

# A permission flag name; members are plain strings, so `Permission.VIEW_CHANNEL == "VIEW_CHANNEL"`.
# mypy reads the members of an enum only from literal values; these are PERMISSION_BITS's keys.
Permission = StrEnum("Permission", [(name, name) for name in PERMISSION_BITS], module=__name__)  # type: ignore[misc]

ALL_PERMISSIONS: int = sum(1 << bit for bit in PERMISSION_BITS.values())
ADMINISTRATOR = "ADMINISTRATOR"

# Channel types as the platform numbers them. "category" is a channel type on the platform,
# but a configuration writes categories separately, so it is not a valid `Channel.type`.
CHANNEL_TYPES: dict[str, int] = {
    "text": 0,
    "voice": 2,
    "category": 4,
    "announcement": 5,
    "stage": 13,
    "forum": 15,
}

# Platform limits the configuration schema enforces.
MAX_NAME_LENGTH = 100
MAX_ROLES = 250
MAX_CHANNELS = 500  # per server, categories included
MAX_CHANNELS_PER_CATEGORY = 50
MAX_OVERWRITES = 100  # per channel (or category) at creation
MAX_TOPIC_LENGTH = 1024
MAX_FORUM_TOPIC_LENGTH = 4096
MAX_SLOWMODE_SECONDS = 21600
MAX_VOICE_USER_LIMIT = 99
MAX_COLOR = 0xFFFFFF


def to_bitfield(names: Iterable[str]) -> str:
    """The decimal-string bitfield of these permission names; an unknown name is a ValueError."""
    value = 0
    for name in names:
        try:
            value |= 1 << PERMISSION_BITS[name]
        except KeyError:
            raise ValueError(f"unknown permission {name!r}") from None
    return str(value)


def _as_int(bitfield: str | int) -> int:
    value = int(bitfield)
    if value < 0:
        raise ValueError(f"a permission bitfield cannot be negative: {bitfield!r}")
    return value


def from_bitfield(value: str | int) -> list[str]:
    """The permission names set in a bitfield, in bit order. Bits without a name are ignored
    (the platform adds flags over time; an old name list must not make a new bitfield fail)."""
    bits = _as_int(value)
    return [name for name, bit in PERMISSION_BITS.items() if bits >> bit & 1]


def has_permission(bitfield: str | int, name: str) -> bool:
    """Whether the bitfield grants `name`; ADMINISTRATOR grants every permission."""
    if name not in PERMISSION_BITS:
        raise ValueError(f"unknown permission {name!r}")
    bits = _as_int(bitfield)
    return bool(bits >> PERMISSION_BITS[ADMINISTRATOR] & 1 or bits >> PERMISSION_BITS[name] & 1)
