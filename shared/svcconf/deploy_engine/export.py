"""A guild read back as a server configuration: what deployToChat `export` answers, svcAiChat starts from, and a
native template becomes (`native_template`).

Pure: the guild's roles and channels (a `LiveGuild`) and its settings in, a `ServerConfig` and warnings out. It
is written so the deploy plan reads it back as the guild it came from: roles top to bottom (the order the deploy
gives them), every attribute stated, categories' overwrites on the category and a channel's own only where they
differ from its category's (the plan rebuilds a channel's as the category's with its own replacing them role by
role; a role the category has an overwrite for and the channel has none gets a neutral one, `allow: [], deny: []`,
so who can do what is exactly the guild's), names that are unique where the deploy matches by name. Deploying it
to the same guild writes nothing.

What a configuration cannot say is left out and named in a warning: member overwrites, managed roles in
overwrites, custom emoji, values past the schema's limits, a second object of a name the deploy would confuse
with the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from svcconf.chat import Channel as LiveChannel
from svcconf.chat import ForumTag as LiveTag
from svcconf.chat import Role as LiveRole
from svcconf.config import (
    CHANNEL_TYPES,
    EVERYONE,
    MAX_OVERWRITES,
    LintWarning,
    ServerConfig,
    from_bitfield,
    lint_config,
    to_bitfield,
)
from svcconf.config.channels import platform_channel_name
from svcconf.config.field_types import Emoji
from svcconf.config.vocabulary import (
    DEFAULT_NOTIFICATIONS,
    EXPLICIT_CONTENT_FILTERS,
    FORUM_LAYOUTS,
    FORUM_SORT_ORDERS,
    MAX_BITRATE_BY_TYPE,
    MAX_GUILD_DESCRIPTION_LENGTH,
    MAX_TAG_NAME_LENGTH,
    MIN_BITRATE,
    REQUIRE_TAG_FLAG,
    SYSTEM_CHANNEL_FLAGS,
    VERIFICATION_LEVELS,
    VIDEO_QUALITY_MODES,
    AfkTimeout,
    Locale,
    flags_from_int,
    name_of,
)
from svcconf.deploy_engine.attributes import VOICE_LIKE
from svcconf.deploy_engine.community import export_community
from svcconf.deploy_engine.live import LiveGuild

TYPE_NAMES = {number: name for name, number in CHANNEL_TYPES.items() if name != "category"}
ROLE_OVERWRITE = 0
NEUTRAL = (0, 0)  # an overwrite that allows and denies nothing
MAX_USER_LIMIT = 99
_EMOJI: TypeAdapter[str] = TypeAdapter(Emoji)


class GuildSettingsSource(Protocol):
    """The guild's settings as the platform gives them (a guild, or a template's snapshot of one)."""

    @property
    def verification_level(self) -> int: ...
    @property
    def default_message_notifications(self) -> int: ...
    @property
    def explicit_content_filter(self) -> int: ...
    @property
    def afk_channel_id(self) -> str | None: ...
    @property
    def afk_timeout(self) -> int: ...
    @property
    def system_channel_id(self) -> str | None: ...
    @property
    def system_channel_flags(self) -> int: ...
    @property
    def preferred_locale(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...


class Exported(BaseModel):
    config: ServerConfig
    warnings: list[LintWarning]


def _emoji(value: str | None) -> str | None:
    """A unicode emoji the schema takes, or None (no emoji, or a custom one the configuration cannot name)."""
    if not value:
        return None
    try:
        return _EMOJI.validate_python(value)
    except ValidationError:
        return None


def _ordered(channels: Iterable[LiveChannel]) -> list[LiveChannel]:
    """As people see them: text-like channels above voice-like ones, each by position, ties by id."""
    return sorted(channels, key=lambda channel: (channel.type in VOICE_LIKE, channel.position, int(channel.id)))


class _Exporter:
    def __init__(self, live: LiveGuild, settings: GuildSettingsSource, *, ids: bool):
        self.live = live
        self.settings = settings
        self.ids = ids
        self.warnings: list[LintWarning] = []
        self.role_names: dict[str, str] = {live.everyone.id: EVERYONE}  # live role id -> configuration name
        self.channel_names: dict[str, tuple[str, str]] = {}  # live channel id -> (type, configuration name)

    def warn(self, field: str, rule: str, message: str) -> None:
        self.warnings.append(LintWarning(field=field, rule=rule, message=message))

    def export(self) -> Exported:
        data: dict[str, Any] = {"name": self.live.name, "roles": self._roles()}
        data["everyone_permissions"] = self._permissions(self.live.everyone.permissions, "everyone_permissions")
        data["categories"] = self._categories()
        data["channels"] = self._channels(None, "channels", {})
        data["settings"] = self._settings()
        data |= export_community(self.live, self.role_names, self.channel_names, self.warn)
        if not self.ids:
            _drop_ids(data)
        config = ServerConfig.model_validate(data)
        return Exported(config=config, warnings=[*self.warnings, *lint_config(config)])

    def _permissions(self, bitfield: str, field: str) -> list[str]:
        names = from_bitfield(bitfield)
        if int(to_bitfield(names)) != int(bitfield):
            self.warn(field, "unrepresentable", "permission bits without a name are left out")
        return names

    # -- roles ------------------------------------------------------------------------------------------------

    def _roles(self) -> list[dict[str, Any]]:
        # Bottom-up as the deploy's reorder reads the guild, then reversed: the configuration lists the highest first.
        bottom_up = sorted((r for r in self.live.roles if not r.is_everyone(self.live.id)), key=lambda r: r.position)
        roles: list[dict[str, Any]] = []
        taken: dict[str, LiveRole] = {}
        for role in reversed(bottom_up):
            if role.managed:
                continue  # the bot's own role and integrations': the platform gives and takes them, a deploy cannot
            field = f"roles[{len(roles)}]"
            key = role.name.casefold()
            if key == EVERYONE:
                self.warn(field, "unrepresentable", "a role named '@everyone' is left out: the name is reserved")
                continue
            if key in taken:
                self.warn(
                    field,
                    "name-collision",
                    f"a second role named '{role.name}' is left out: a deploy matches roles by name",
                )
                continue
            taken[key] = role
            self.role_names[role.id] = role.name
            item: dict[str, Any] = {"id": role.id, "name": role.name, "color": role.color, "hoist": role.hoist}
            colours = role.colors
            if colours is not None and colours.tertiary_color is not None:
                item["colors"] = {"primary": role.color, "holographic": True}
            elif colours is not None and colours.secondary_color is not None:
                item["colors"] = {"primary": role.color, "secondary": colours.secondary_color}
            item |= {"mentionable": role.mentionable, "permissions": self._permissions(role.permissions, field)}
            emoji = _emoji(role.unicode_emoji)
            if emoji:
                item["emoji"] = emoji
            elif role.unicode_emoji or role.icon:
                self.warn(
                    f"{field}.emoji", "unrepresentable", f"role '{role.name}' has an icon that is not a unicode emoji"
                )
            roles.append(item)
        return roles

    # -- categories and channels --------------------------------------------------------------------------------

    def _categories(self) -> list[dict[str, Any]]:
        categories: list[dict[str, Any]] = []
        kept = self._unique(_ordered(self.live.categories), "categories", lambda c: c.name or "", " with its channels")
        for category in kept:
            field = f"categories[{len(categories)}]"
            overwrites = self._overwrites(category, f"{field}.overwrites")
            item: dict[str, Any] = {"id": category.id, "name": category.name}
            item["overwrites"] = self._listed(overwrites, f"{field}.overwrites")
            item["channels"] = self._channels(category.id, f"{field}.channels", overwrites)
            categories.append(item)
        return categories

    def _channels(
        self, parent_id: str | None, field: str, inherited: dict[str, tuple[int, int]]
    ) -> list[dict[str, Any]]:
        children = []
        for channel in _ordered(self.live.children_of(parent_id)):
            if channel.type in TYPE_NAMES:
                children.append(channel)
            else:
                self.warn(
                    field,
                    "unrepresentable",
                    f"channel '{channel.name}' is of a type (#{channel.type}) a configuration has no name for",
                )

        def key(channel: LiveChannel) -> str:
            return f"{channel.type}:{platform_channel_name(channel.name or '', channel.type)}"

        channels: list[dict[str, Any]] = []
        for channel in self._unique(children, field, key):
            path = f"{field}[{len(channels)}]"
            channels.append(self._channel(channel, path, inherited))
        return channels

    def _unique(
        self, channels: list[LiveChannel], field: str, key: Callable[[LiveChannel], str], also: str = ""
    ) -> list[LiveChannel]:
        """One channel per name where the deploy matches by name: the one its plan would match (the highest, then
        the oldest), in place."""
        chosen: dict[str, LiveChannel] = {}
        for channel in sorted(channels, key=lambda c: (-c.position, int(c.id))):
            chosen.setdefault(key(channel).casefold(), channel)
        kept = []
        for channel in channels:
            if chosen[key(channel).casefold()] is channel:
                kept.append(channel)
            else:
                message = (
                    f"'{channel.name}'{also} is left out: another of that name stands here, a deploy matches by name"
                )
                self.warn(field, "name-collision", message)
        return kept

    def _channel(self, channel: LiveChannel, field: str, inherited: dict[str, tuple[int, int]]) -> dict[str, Any]:
        kind = TYPE_NAMES[channel.type]
        self.channel_names[channel.id] = (kind, channel.name or "")
        own = self._overwrites(channel, f"{field}.overwrites")
        # A role its category has an overwrite for and the channel has none: a neutral overwrite says so exactly
        # (it replaces the category's and grants nothing, as no overwrite does). In the order a deploy writes them:
        # the category's roles first.
        merged = {role: own.get(role, NEUTRAL) for role in inherited} | own
        differing = {role: bits for role, bits in merged.items() if inherited.get(role) != bits}
        item: dict[str, Any] = {"id": channel.id, "name": channel.name, "type": kind, "nsfw": channel.nsfw}
        item["slowmode_seconds"] = channel.rate_limit_per_user
        item["overwrites"] = self._listed(differing, f"{field}.overwrites")
        if channel.topic:
            item["topic"] = channel.topic
        if kind in MAX_BITRATE_BY_TYPE:
            item |= self._voice(channel, kind, field)
        if kind == "forum":
            item |= self._forum(channel, field)
        return item

    def _voice(self, channel: LiveChannel, kind: str, field: str) -> dict[str, Any]:
        item: dict[str, Any] = {"video_quality": name_of(VIDEO_QUALITY_MODES, channel.video_quality_mode or 1)}
        if channel.user_limit is not None and channel.user_limit <= MAX_USER_LIMIT:
            item["user_limit"] = channel.user_limit
        elif channel.user_limit is not None:
            self.warn(f"{field}.user_limit", "unrepresentable", f"a user limit of {channel.user_limit} is past 99")
        if channel.bitrate is not None and MIN_BITRATE <= channel.bitrate <= MAX_BITRATE_BY_TYPE[kind]:
            item["bitrate"] = channel.bitrate
        elif channel.bitrate is not None:
            message = f"a bitrate of {channel.bitrate} needs boosts: left out (the channel keeps it)"
            self.warn(f"{field}.bitrate", "unrepresentable", message)
        return item

    def _forum(self, channel: LiveChannel, field: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            "tags": [self._tag(tag, f"{field}.tags[{n}]") for n, tag in enumerate(channel.available_tags)]
        }
        item["require_tag"] = bool(channel.flags & REQUIRE_TAG_FLAG)
        item["default_thread_slowmode_seconds"] = channel.default_thread_rate_limit_per_user or 0
        item["default_sort"] = name_of(FORUM_SORT_ORDERS, channel.default_sort_order)
        item["default_layout"] = name_of(FORUM_LAYOUTS, channel.default_forum_layout)
        reaction = channel.default_reaction_emoji
        if reaction and (reaction.emoji_id or reaction.emoji_name):
            item["default_reaction"] = None if reaction.emoji_id else _emoji(reaction.emoji_name)
            if item["default_reaction"] is None:
                self.warn(f"{field}.default_reaction", "unrepresentable", "a custom emoji cannot be named: left out")
        return item

    def _tag(self, tag: LiveTag, field: str) -> dict[str, Any]:
        item: dict[str, Any] = {"name": tag.name[:MAX_TAG_NAME_LENGTH], "moderated": tag.moderated}
        emoji = None if tag.emoji_id else _emoji(tag.emoji_name)
        if emoji:
            item["emoji"] = emoji
        elif tag.emoji_id or tag.emoji_name:
            self.warn(f"{field}.emoji", "unrepresentable", f"tag '{tag.name}' has a custom emoji: left out")
        return item

    def _listed(self, overwrites: dict[str, tuple[int, int]], field: str) -> list[dict[str, Any]]:
        listed = [_overwrite(role, allow, deny) for role, (allow, deny) in overwrites.items()]
        if len(listed) > MAX_OVERWRITES:  # the platform holds up to 1,000; a create body takes 100
            self.warn(field, "unrepresentable", f"{len(listed) - MAX_OVERWRITES} overwrites past {MAX_OVERWRITES}")
        return listed[:MAX_OVERWRITES]

    def _overwrites(self, channel: LiveChannel, field: str) -> dict[str, tuple[int, int]]:
        """The channel's role overwrites by configuration role name; the rest named in warnings."""
        found: dict[str, tuple[int, int]] = {}
        for overwrite in channel.permission_overwrites:
            if overwrite.type != ROLE_OVERWRITE:
                self.warn(
                    field,
                    "member-overwrite",
                    f"'{channel.name}' has an overwrite for a member: a configuration names roles only",
                )
                continue
            role = self.role_names.get(overwrite.id)
            if role is None:
                self.warn(
                    field,
                    "unrepresentable",
                    f"'{channel.name}' has an overwrite for a role left out (managed or unknown)",
                )
                continue
            allow, deny = self._permissions(overwrite.allow, field), self._permissions(overwrite.deny, field)
            found[role] = (int(to_bitfield(allow)), int(to_bitfield(deny)))
        return found

    # -- settings -----------------------------------------------------------------------------------------------

    def _settings(self) -> dict[str, Any]:
        source = self.settings
        item: dict[str, Any] = {
            "verification_level": name_of(VERIFICATION_LEVELS, source.verification_level),
            "default_notifications": name_of(DEFAULT_NOTIFICATIONS, source.default_message_notifications),
            "explicit_content_filter": name_of(EXPLICIT_CONTENT_FILTERS, source.explicit_content_filter),
            "system_channel_flags": flags_from_int(source.system_channel_flags, SYSTEM_CHANNEL_FLAGS),
            "afk_channel": self._setting_channel(source.afk_channel_id, "voice", "afk_channel"),
            "system_channel": self._setting_channel(source.system_channel_id, "text", "system_channel"),
        }
        if source.afk_timeout in get_args(AfkTimeout):
            item["afk_timeout"] = source.afk_timeout
        if source.preferred_locale in get_args(Locale):
            item["preferred_locale"] = source.preferred_locale
        elif source.preferred_locale:
            self.warn("settings.preferred_locale", "unrepresentable", f"locale '{source.preferred_locale}' is unknown")
        if source.description and len(source.description) <= MAX_GUILD_DESCRIPTION_LENGTH:
            item["description"] = source.description
        return {name: value for name, value in item.items() if value is not None}

    def _setting_channel(self, channel_id: str | None, kind: str, field: str) -> str | None:
        if channel_id is None:
            return None
        found_kind, name = self.channel_names.get(channel_id, ("", ""))
        number = CHANNEL_TYPES[kind]
        same = [
            n
            for k, n in self.channel_names.values()
            if k == kind and platform_channel_name(n, number) == platform_channel_name(name, number)
        ]
        if found_kind == kind and len(same) == 1:
            return name
        self.warn(
            f"settings.{field}",
            "unrepresentable",
            f"the {field.replace('_', ' ')} is not one {kind} channel of a name of its own",
        )
        return None


def _drop_ids(data: dict[str, Any]) -> None:
    for role in data["roles"]:
        role.pop("id")
    for category in data["categories"]:
        category.pop("id")
        for channel in category["channels"]:
            channel.pop("id")
    for channel in data["channels"]:
        channel.pop("id")


def _overwrite(role: str, allow: int, deny: int) -> dict[str, Any]:
    return {"role": role, "allow": from_bitfield(allow), "deny": from_bitfield(deny)}


def export_config(live: LiveGuild, settings: GuildSettingsSource, *, ids: bool = True) -> Exported:
    """The guild as a configuration a deploy reads back as the same guild, and what it had to leave out; `ids`:
    with each object's id (a template's placeholders are no server's ids)."""
    return _Exporter(live, settings, ids=ids).export()
