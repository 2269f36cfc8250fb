"""A configuration read as the guild it describes: the "before" a plan compares with when that side is not a live
guild but another configuration (manageBackup `diff` against another backup).

Pure; the reverse of `export.py`. Each object keeps the id the configuration gives it (a backup made from the live
guild has them all), so the other side's ids match it as a deploy's would, then its names; an object without one
gets a placeholder id no server has. Roles stand in the configuration's order (the first the highest) above
@everyone, under a stand-in for the bot's role (so nothing stands above the bot, and a prune may delete any role);
categories and channels in theirs. A channel's overwrites are its category's with its own replacing them per role,
as a deploy writes them; a neutral one (nothing allowed or denied) is no overwrite, as on the platform. Settings
name their channels by id. What the configuration leaves out is the platform's default (@everyone's permissions
none, settings as a new server has them); AutoMod, onboarding and the welcome screen are left unread (None), so a
plan against this guild compares the roles, channels, overwrites and settings.
"""

from __future__ import annotations

from typing import Any

from svcconf.chat import Channel, PermissionOverwrite, Role
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
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.matching import placed_channels
from svcconf.deploy_engine.plan_community import ENHANCED_ROLE_COLORS
from svcconf.deploy_engine.steps import ROLE_OVERWRITE

PLACEHOLDER_BASE = 1_000  # placeholder ids: far below any snowflake, so no server's id is one
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
    for _, placed_in, channel in placed_channels(config):
        parent = placed_in.name if placed_in is not None else None
        inherited = category_bits.get(parent, {}) if parent is not None else {}
        bits = inherited | _bits(channel.overwrites)
        position = positions[parent] = positions.get(parent, -1) + 1
        parent_id = category_ids[parent] if parent is not None else None
        placed = _channel(channel, ids.of(channel.id), position, parent_id, _overwrites(bits, role_ids))
        channels.append(placed)
        by_name.setdefault((channel.type, channel.name.casefold()), placed.id)
    return LiveGuild(
        id=guild_id,
        name=config.name,
        features=[ENHANCED_ROLE_COLORS],
        settings=_settings(config, by_name),
        roles=roles,
        channels=channels,
        bot_role_ids=[bot.id],
    )


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
