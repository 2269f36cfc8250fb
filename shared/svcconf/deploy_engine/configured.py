"""A configuration read as the guild it describes: the "before" a plan compares with when that side is not a live
guild but another configuration (manageBackup `diff` against another backup).

Pure; the reverse of `export.py`. Each object keeps the id the configuration gives it (a backup made from the live
guild has them all), so the other side's ids match it as a deploy's would, then its names; an object without one
gets a placeholder id no server has. Roles stand in the configuration's order (the first the highest) above
@everyone, under a stand-in for the bot's role (so nothing stands above the bot, and a prune may delete any role);
categories and channels in theirs. A channel's overwrites are its category's with its own replacing them per role,
as a deploy writes them; a neutral one (nothing allowed or denied) is no overwrite, as on the platform. Settings
name their channels by id; AutoMod rules, onboarding and the welcome screen are the platform's objects their
request bodies make (placeholder ids for rules, prompts and options), the welcome screen enabled by the guild's
feature. What the configuration leaves out is the platform's default (@everyone's permissions none, settings as a
new server has them), or unread where a deploy leaves it alone (AutoMod, onboarding, the welcome screen: None).
"""

from __future__ import annotations

from typing import Any

from svcconf.chat import Channel, PermissionOverwrite, Role
from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen
from svcconf.config import CHANNEL_TYPES, EVERYONE, ServerConfig, to_bitfield
from svcconf.config import Channel as ConfigChannel
from svcconf.config.channels import Overwrite, platform_channel_name
from svcconf.deploy_engine.attributes import (
    CHANNEL_SETTINGS,
    SETTING_FIELDS,
    GuildSettings,
    channel_after_create,
    channel_create_attributes,
    role_create_attributes,
    stated_settings,
)
from svcconf.deploy_engine.community import onboarding_body, rule_body, welcome_body
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.matching import config_channel_key, placed_channels
from svcconf.deploy_engine.plan_community import ENHANCED_ROLE_COLORS
from svcconf.deploy_engine.steps import ROLE_OVERWRITE

PLACEHOLDER_BASE = 1_000  # placeholder ids: far below any snowflake, so no server's id is one
WELCOME_SCREEN_ENABLED = "WELCOME_SCREEN_ENABLED"
BOT_ROLE_NAME = "\u200b"  # the bot's stand-in: a name no configuration's role has (names are not blank)

Bits = tuple[int, int]


class _Ids:
    """The configuration's ids, and a placeholder for each object without one."""

    def __init__(self) -> None:
        self.next = PLACEHOLDER_BASE

    def of(self, object_id: str | None) -> str:
        if object_id:
            return object_id
        self.next += 1
        return str(self.next)


def _bits(overwrites: list[Overwrite]) -> dict[str, Bits]:
    return {o.role: (int(to_bitfield(o.allow)), int(to_bitfield(o.deny))) for o in overwrites}


def _overwrites(bits: dict[str, Bits], role_ids: dict[str, str]) -> list[PermissionOverwrite]:
    return [
        PermissionOverwrite(id=role_ids[role.casefold()], type=ROLE_OVERWRITE, allow=str(allow), deny=str(deny))
        for role, (allow, deny) in bits.items()
        if (allow or deny) and role.casefold() in role_ids
    ]


def _channel(
    channel: ConfigChannel, channel_id: str, position: int, parent_id: str | None, overwrites: list[PermissionOverwrite]
) -> Channel:
    channel_type = CHANNEL_TYPES[channel.type]
    attributes: dict[str, Any] = {**channel_create_attributes(channel), **channel_after_create(channel)}
    return Channel.model_validate(
        {
            "id": channel_id,
            "type": channel_type,
            "name": platform_channel_name(channel.name, channel_type),
            "position": position,
            "parent_id": parent_id,
            "permission_overwrites": [o.model_dump() for o in overwrites],
            **attributes,
        }
    )


def configured_guild(config: ServerConfig, guild_id: str) -> LiveGuild:
    """The guild `config` describes, its @everyone's id (the guild's) `guild_id`."""
    ids = _Ids()
    everyone = Role(id=guild_id, name=EVERYONE, permissions=to_bitfield(config.everyone_permissions or []))
    roles = [everyone]
    role_ids = {EVERYONE: guild_id}
    for index, role in enumerate(config.roles):
        colours = role.colors.platform() if role.colors is not None else None
        attributes = {**role_create_attributes(role), "colors": colours}
        made = Role.model_validate(
            {"id": ids.of(role.id), "name": role.name, "position": len(config.roles) - index, **attributes}
        )
        roles.append(made)
        role_ids.setdefault(role.name.casefold(), made.id)
    bot = Role(id=ids.of(None), name=BOT_ROLE_NAME, managed=True, position=len(config.roles) + 1)
    roles.append(bot)
    channels: list[Channel] = []
    category_ids: dict[str, str] = {}
    category_bits: dict[str, dict[str, Bits]] = {}
    for position, category in enumerate(config.categories):
        category_id = ids.of(category.id)
        category_ids[category.name] = category_id
        category_bits[category.name] = _bits(category.overwrites)
        overwrites = _overwrites(category_bits[category.name], role_ids)
        channels.append(
            Channel(
                id=category_id,
                type=CHANNEL_TYPES["category"],
                name=category.name,
                position=position,
                permission_overwrites=overwrites,
            )
        )
    positions: dict[str | None, int] = {}
    by_name: dict[tuple[str, str], str] = {}  # (type, name) -> id, for the settings that name a channel
    by_key: dict[str, str] = {}  # the plan's channel key -> id, for the v4 objects that name a channel
    for _, placed_in, channel in placed_channels(config):
        parent = placed_in.name if placed_in is not None else None
        inherited = category_bits.get(parent, {}) if parent is not None else {}
        bits = inherited | _bits(channel.overwrites)
        position = positions[parent] = positions.get(parent, -1) + 1
        parent_id = category_ids[parent] if parent is not None else None
        placed = _channel(channel, ids.of(channel.id), position, parent_id, _overwrites(bits, role_ids))
        channels.append(placed)
        by_name.setdefault((channel.type, channel.name.casefold()), placed.id)
        by_key[config_channel_key(parent, channel)] = placed.id
    guild = LiveGuild(
        id=guild_id,
        name=config.name,
        features=[ENHANCED_ROLE_COLORS],
        settings=_settings(config, by_name),
        roles=roles,
        channels=channels,
        bot_role_ids=[bot.id],
    )
    return _community(guild, config, role_ids, by_key, ids)


def _community(
    guild: LiveGuild, config: ServerConfig, role_ids: dict[str, str], channel_ids: dict[str, str], ids: _Ids
) -> LiveGuild:
    """AutoMod rules, onboarding and the welcome screen as the platform holds what their request bodies say, named
    as the planner names them (`plan_community.py`: a channel by the configuration's first of that name)."""

    def role(name: str) -> str:
        return role_ids.get(name.casefold()) or ids.of(None)

    def channel(name: str) -> str:
        found = config.find_channels(name)
        for _, placed_in, candidate in placed_channels(config):
            if found and candidate is found[0]:
                return channel_ids[config_channel_key(placed_in.name if placed_in else None, candidate)]
        return ids.of(None)

    update: dict[str, Any] = {}
    if config.automod is not None:
        update["automod_rules"] = [
            AutomodRule.model_validate({"id": ids.of(None), "guild_id": guild.id, **rule_body(rule, role, channel)})
            for rule in config.automod
        ]
    if config.onboarding is not None:
        body = onboarding_body(config.onboarding, None, role, channel)
        for prompt in body["prompts"]:
            prompt["id"] = ids.of(None)
            for option in prompt["options"]:
                emoji = option.pop("emoji_name")
                option |= {"id": ids.of(None), "emoji": {"name": emoji} if emoji else None}
        update["onboarding"] = GuildOnboarding.model_validate({"guild_id": guild.id, **body})
    if config.welcome_screen is not None:
        screen = welcome_body(config.welcome_screen, channel)
        update["welcome_screen"] = WelcomeScreen.model_validate(screen)
        if screen["enabled"]:
            update["features"] = [*guild.features, WELCOME_SCREEN_ENABLED]
    return guild.model_copy(update=update)


def _settings(config: ServerConfig, channels: dict[tuple[str, str], str]) -> GuildSettings:
    values: dict[str, Any] = {}
    for name, value in stated_settings(config.settings).items():
        if name in CHANNEL_SETTINGS:
            platform, kind = CHANNEL_SETTINGS[name]
            values[platform] = channels.get((kind, str(value).casefold()))
        elif name in SETTING_FIELDS:
            setting = SETTING_FIELDS[name]
            values[setting.platform] = setting.to_platform(value)
    return GuildSettings.model_validate(values)
