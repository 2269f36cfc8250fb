"""What a deploy compares and writes, both sides in the platform's form: the configuration's attributes and the live
object's, so the plan, the snapshot and the rollback agree on what "the same" means.

Only what the configuration states is compared (an omitted attribute never resets a live one); the forms are the
ones the platform answers with, so a second deploy of the same configuration finds nothing to change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from svcconf.chat import Channel as LiveChannel
from svcconf.chat import Guild
from svcconf.chat import Role as LiveRole
from svcconf.config import CHANNEL_TYPES, to_bitfield
from svcconf.config import Channel as ConfigChannel
from svcconf.config import Role as ConfigRole
from svcconf.config import Settings as ConfigSettings
from svcconf.config.vocabulary import (
    DEFAULT_NOTIFICATIONS,
    EXPLICIT_CONTENT_FILTERS,
    FORUM_LAYOUTS,
    FORUM_SORT_ORDERS,
    REQUIRE_TAG_FLAG,
    SYSTEM_CHANNEL_FLAGS,
    VERIFICATION_LEVELS,
    VIDEO_QUALITY_MODES,
    flags_from_int,
    flags_to_int,
    name_of,
)

FORUM = CHANNEL_TYPES["forum"]
VOICE_LIKE = frozenset({CHANNEL_TYPES["voice"], CHANNEL_TYPES["stage"]})
AUTO_VIDEO_QUALITY = VIDEO_QUALITY_MODES["auto"]  # what the platform means when it sends none

# ---------------------------------------------------------------- roles

# configuration field -> the platform's
_ROLE_FIELDS = {
    "permissions": "permissions",
    "color": "color",
    "hoist": "hoist",
    "mentionable": "mentionable",
    "emoji": "unicode_emoji",
}


def role_create_attributes(role: ConfigRole) -> dict[str, Any]:
    attributes = {"permissions": to_bitfield(role.permissions), "color": role.color, "hoist": role.hoist}
    attributes["mentionable"] = role.mentionable
    if role.emoji is not None:
        attributes["unicode_emoji"] = role.emoji
    return attributes


def role_stated_attributes(role: ConfigRole) -> dict[str, Any]:
    values: dict[str, Any] = {"permissions": to_bitfield(role.permissions), "unicode_emoji": role.emoji}
    values |= {"color": role.color, "hoist": role.hoist, "mentionable": role.mentionable}
    return {platform: values[platform] for name, platform in _ROLE_FIELDS.items() if name in role.model_fields_set}


def everyone_stated_attributes(permissions: Sequence[str] | None) -> dict[str, Any]:
    return {} if permissions is None else {"permissions": to_bitfield(permissions)}


def live_role_attributes(role: LiveRole) -> dict[str, Any]:
    return {
        "permissions": str(int(role.permissions)),
        "color": role.color,
        "hoist": role.hoist,
        "mentionable": role.mentionable,
        "unicode_emoji": role.unicode_emoji,
        "colors": live_role_colours(role),
    }


def live_role_colours(role: LiveRole) -> dict[str, int | None]:
    """The role's `colors` as the platform takes them back (v4); a role read without them has its plain colour."""
    colours = role.colors
    secondary, tertiary = (colours.secondary_color, colours.tertiary_color) if colours else (None, None)
    return {"primary_color": role.color, "secondary_color": secondary, "tertiary_color": tertiary}


# ---------------------------------------------------------------- channels


def _tags(channel: ConfigChannel) -> list[dict[str, Any]] | None:
    if channel.tags is None:
        return None
    return [{"name": tag.name, "emoji_name": tag.emoji, "moderated": tag.moderated} for tag in channel.tags]


def _reaction(emoji: str | None) -> dict[str, Any] | None:
    return None if emoji is None else {"emoji_id": None, "emoji_name": emoji}


def _named(table: Mapping[str, int], name: str | None) -> int | None:
    return None if name is None else table[name]


# configuration field -> (the platform's field, its value from the configuration's)
_CHANNEL_FIELDS: dict[str, tuple[str, Callable[[ConfigChannel], Any]]] = {
    "topic": ("topic", lambda c: c.topic),
    "nsfw": ("nsfw", lambda c: c.nsfw),
    "slowmode_seconds": ("rate_limit_per_user", lambda c: c.slowmode_seconds),
    "user_limit": ("user_limit", lambda c: c.user_limit),
    "bitrate": ("bitrate", lambda c: c.bitrate),
    "video_quality": ("video_quality_mode", lambda c: _named(VIDEO_QUALITY_MODES, c.video_quality)),
    "tags": ("available_tags", _tags),
    "default_reaction": ("default_reaction_emoji", lambda c: _reaction(c.default_reaction)),
    "default_thread_slowmode_seconds": (
        "default_thread_rate_limit_per_user",
        lambda c: c.default_thread_slowmode_seconds,
    ),
    "default_sort": ("default_sort_order", lambda c: _named(FORUM_SORT_ORDERS, c.default_sort)),
    "default_layout": ("default_forum_layout", lambda c: _named(FORUM_LAYOUTS, c.default_layout)),
}


def channel_create_attributes(channel: ConfigChannel) -> dict[str, Any]:
    values = {platform: read(channel) for platform, read in _CHANNEL_FIELDS.values()}
    return {name: value for name, value in values.items() if value is not None and value is not False and value != ""}


def channel_after_create(channel: ConfigChannel) -> dict[str, Any]:
    """What the create body cannot carry: the platform takes channel flags only on modify."""
    return {"flags": REQUIRE_TAG_FLAG} if channel.require_tag else {}


def channel_stated_attributes(channel: ConfigChannel, live_flags: int) -> dict[str, Any]:
    """The attributes the configuration states: an omitted (or null) one never resets a live one."""
    stated = {}
    for name, (platform, read) in _CHANNEL_FIELDS.items():
        value = read(channel)
        if name in channel.model_fields_set and value is not None:
            stated[platform] = value
    if "topic" in stated:
        stated["topic"] = stated["topic"] or None  # the platform does not tell an empty topic from none
    if channel.require_tag is not None:
        stated["flags"] = live_flags & ~REQUIRE_TAG_FLAG | (REQUIRE_TAG_FLAG if channel.require_tag else 0)
    return stated


def live_channel_attributes(channel: LiveChannel) -> dict[str, Any]:
    reaction = channel.default_reaction_emoji
    return {
        "topic": channel.topic or None,
        "nsfw": channel.nsfw,
        "rate_limit_per_user": channel.rate_limit_per_user,
        "user_limit": channel.user_limit,
        "bitrate": channel.bitrate,
        "video_quality_mode": channel.video_quality_mode or AUTO_VIDEO_QUALITY,
        "available_tags": [
            {"name": tag.name, "emoji_name": tag.emoji_name, "moderated": tag.moderated}
            for tag in channel.available_tags
        ],
        "default_reaction_emoji": reaction.model_dump()
        if reaction and (reaction.emoji_id or reaction.emoji_name)
        else None,
        "default_thread_rate_limit_per_user": channel.default_thread_rate_limit_per_user or 0,
        "default_sort_order": channel.default_sort_order,
        "default_forum_layout": channel.default_forum_layout or None,  # 0 is "not set"
        "flags": channel.flags,
    }


def attributes_of_type(channel: LiveChannel) -> dict[str, Any]:
    """The attributes a channel of its type has, as a snapshot records them and a rollback restores them."""
    attributes = live_channel_attributes(channel)
    kept = ["topic", "nsfw", "rate_limit_per_user"]
    if channel.user_limit is not None:
        kept.append("user_limit")
    if channel.type in VOICE_LIKE:
        kept += ["bitrate", "video_quality_mode"]
    if channel.type == FORUM:
        kept += [
            "available_tags",
            "default_reaction_emoji",
            "default_thread_rate_limit_per_user",
            "default_sort_order",
            "default_forum_layout",
            "flags",
        ]
    return {name: attributes[name] for name in kept}


def with_tag_ids(payload: dict[str, Any], live: LiveChannel) -> dict[str, Any]:
    """Tags the forum has keep their ids, so its posts keep them."""
    if "available_tags" not in payload:
        return payload
    ids = {tag.name: tag.id for tag in live.available_tags if tag.id}
    tags = [{**tag, "id": ids[tag["name"]]} if tag["name"] in ids else tag for tag in payload["available_tags"]]
    return {**payload, "available_tags": tags}


# ---------------------------------------------------------------- the guild's settings


class GuildSettings(BaseModel):
    """The guild's settings a configuration can state, in the platform's form (a snapshot records them)."""

    verification_level: int = 0
    default_message_notifications: int = 0
    explicit_content_filter: int = 0
    afk_channel_id: str | None = None
    afk_timeout: int = 300
    system_channel_id: str | None = None
    system_channel_flags: int = 0
    preferred_locale: str | None = None
    description: str | None = None

    @classmethod
    def of(cls, guild: Guild) -> GuildSettings:
        values = guild.model_dump(include=set(cls.model_fields))
        return cls.model_validate(values | {"description": guild.description or None})


@dataclass(frozen=True, slots=True)
class SettingField:
    """One setting: its platform field, and its value from the configuration's name and back."""

    platform: str
    to_platform: Callable[[Any], Any]
    to_config: Callable[[Any], Any]


def _table(table: Mapping[str, int]) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    return (lambda name: table[name]), (lambda value: name_of(table, value))


def _same(value: Any) -> Any:
    return value


SETTING_FIELDS: dict[str, SettingField] = {
    "verification_level": SettingField("verification_level", *_table(VERIFICATION_LEVELS)),
    "default_notifications": SettingField("default_message_notifications", *_table(DEFAULT_NOTIFICATIONS)),
    "explicit_content_filter": SettingField("explicit_content_filter", *_table(EXPLICIT_CONTENT_FILTERS)),
    "afk_timeout": SettingField("afk_timeout", _same, _same),
    "system_channel_flags": SettingField(
        "system_channel_flags",
        lambda names: flags_to_int(names, SYSTEM_CHANNEL_FLAGS),
        lambda value: flags_from_int(value, SYSTEM_CHANNEL_FLAGS),
    ),
    "preferred_locale": SettingField("preferred_locale", _same, _same),
    "description": SettingField("description", lambda text: text or None, _same),
}
# Settings that name a channel of the configuration: resolved to its id once the channel exists.
CHANNEL_SETTINGS: dict[str, tuple[str, str]] = {
    "afk_channel": ("afk_channel_id", "voice"),
    "system_channel": ("system_channel_id", "text"),
}


def stated_settings(settings: ConfigSettings | None) -> dict[str, Any]:
    """The settings the configuration states, in the schema's order (null means "as the server has it")."""
    if settings is None:
        return {}
    return {
        name: getattr(settings, name)
        for name in type(settings).model_fields
        if name in settings.model_fields_set and getattr(settings, name) is not None
    }
