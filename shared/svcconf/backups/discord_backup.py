"""The discord-backup npm library's `BackupData` as a configuration: the guild it describes, with made-up ids,
exported like a live one (`deploy_engine/export.py`); what it keeps that a configuration cannot hold is a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from svcconf.backups.reading import (
    FAKE_GUILD_ID,
    UNRESTORABLE_KEYS,
    BackupReading,
    Unreadable,
    list_of_objects,
    losses_of,
)
from svcconf.chat import Channel, Guild, PermissionOverwrite, Role
from svcconf.config import CHANNEL_TYPES, EVERYONE
from svcconf.deploy_engine.attributes import GuildSettings
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.uncarried import COMMUNITY_KINDS, not_carried
from svcconf.errors import FieldError

CATEGORY = CHANNEL_TYPES["category"]

# discord-backup: channel types as discord.js 13 named them, or as numbers (its forks on discord.js 14).
DISCORD_JS_TYPES = {
    "GUILD_TEXT": 0,
    "text": 0,
    "GUILD_VOICE": 2,
    "voice": 2,
    "GUILD_CATEGORY": 4,
    "category": 4,
    "GUILD_NEWS": 5,
    "news": 5,
    "GUILD_STAGE_VOICE": 13,
    "stage": 13,
    "GUILD_FORUM": 15,
    "forum": 15,
}
DISCORD_JS_LEVELS = {
    "verificationLevel": {"NONE": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3, "VERY_HIGH": 4},
    "explicitContentFilter": {"DISABLED": 0, "MEMBERS_WITHOUT_ROLES": 1, "ALL_MEMBERS": 2},
    "defaultMessageNotifications": {"ALL_MESSAGES": 0, "ONLY_MENTIONS": 1},
}


def _level(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return DISCORD_JS_LEVELS[key].get(str(value), 0)


def _bitfield(value: Any) -> str:
    text = str(value if value is not None else 0)
    return text if text.isdigit() else "0"


def _color(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"#?[0-9A-Fa-f]{6}", value):
        return int(value.removeprefix("#"), 16)
    return 0


class _DiscordBackup:
    """discord-backup's BackupData as the guild it describes: ids made up (placeholders), then exported."""

    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.warnings: list[FieldError] = []
        self.roles: list[Role] = []
        self.role_ids: dict[str, str] = {}  # role name -> made-up id
        self.channels: list[Channel] = []
        self.next_id = 1

    def made_up_id(self) -> str:
        self.next_id += 1
        return str(self.next_id)

    def read(self) -> BackupReading:
        for key, message in UNRESTORABLE_KEYS.items():
            if self.data.get(key):
                self.warnings.append(FieldError(field=key, message=message, rule="unrestorable"))
        self._roles()
        channels = self.data["channels"]
        categories, others = list_of_objects(channels.get("categories")), list_of_objects(channels.get("others"))
        if categories is None or others is None:
            problem = "must be lists of objects"
            raise Unreadable([FieldError(field="channels.categories", message=problem)])
        for index, category in enumerate(categories):
            field = f"channels.categories[{index}]"
            category_id = self._channel({**category, "type": CATEGORY}, field, None, index)
            for child_index, child in enumerate(list_of_objects(category.get("children")) or []):
                self._channel(child, f"{field}.children[{child_index}]", category_id, child_index)
        for index, channel in enumerate(others):
            self._channel(channel, f"channels.others[{index}]", None, index)
        guild = Guild(
            id=FAKE_GUILD_ID,
            name=str(self.data.get("name") or "server"),
            verification_level=_level(self.data, "verificationLevel"),
            explicit_content_filter=_level(self.data, "explicitContentFilter"),
            default_message_notifications=_level(self.data, "defaultMessageNotifications"),
            afk_channel_id=self._afk_channel(),
            afk_timeout=self._afk_timeout(),
            roles=self.roles,
        )
        live = LiveGuild(
            id=FAKE_GUILD_ID,
            name=guild.name,
            features=[],
            settings=GuildSettings.of(guild),
            roles=self.roles,
            channels=self.channels,
            bot_role_ids=[],
        )
        exported = export_config(live, guild, ids=False)
        exported.warnings[:0] = not_carried("discord-backup", (*COMMUNITY_KINDS, "colors"))
        return BackupReading(
            format="discord-backup",
            restorable=True,
            problems=[],
            warnings=[*self.warnings, *losses_of(exported)],
            config=exported.config,
        )

    def _roles(self) -> None:
        roles = list_of_objects(self.data["roles"]) or []
        everyone = next((role for role in roles if role.get("isEveryone")), None)
        permissions = _bitfield(everyone.get("permissions")) if everyone else "0"
        self.roles.append(Role(id=FAKE_GUILD_ID, name=EVERYONE, permissions=permissions, position=0))
        self.role_ids[EVERYONE] = FAKE_GUILD_ID
        others = [(index, role) for index, role in enumerate(roles) if not role.get("isEveryone")]
        # `position` counts from the bottom; the library's list order (highest first) breaks ties.
        ranked = sorted(others, key=lambda pair: (_int(pair[1].get("position")), -pair[0]))
        for position, (index, role) in enumerate(ranked, start=1):
            if not isinstance(role.get("name"), str):
                raise Unreadable([FieldError(field=f"roles[{index}].name", message="must be a string")])
            role_id = self.made_up_id()
            self.role_ids.setdefault(role["name"], role_id)
            self.roles.append(
                Role(
                    id=role_id,
                    name=role["name"],
                    permissions=_bitfield(role.get("permissions")),
                    position=position,
                    color=_color(role.get("color")),
                    hoist=bool(role.get("hoist")),
                    mentionable=bool(role.get("mentionable")),
                )
            )

    def _channel(self, channel: dict[str, Any], field: str, parent_id: str | None, index: int) -> str:
        kind = channel.get("type", 0)
        kind = DISCORD_JS_TYPES.get(kind, -1) if isinstance(kind, str) else kind
        if channel.get("isNews"):
            kind = CHANNEL_TYPES["announcement"]
        if not isinstance(kind, int) or kind not in CHANNEL_TYPES.values():
            self.warnings.append(
                FieldError(
                    field=f"{field}.type",
                    message="a channel of a type a configuration has no name for is left out",
                    rule="unrestorable",
                )
            )
            return ""
        if not isinstance(channel.get("name"), str):
            raise Unreadable([FieldError(field=f"{field}.name", message="must be a string")])
        if channel.get("messages"):
            message = f"{len(channel['messages'])} message(s) of '{channel['name']}' are not restored"
            self.warnings.append(FieldError(field=f"{field}.messages", message=message, rule="unrestorable"))
        if channel.get("threads"):
            message = f"the threads of '{channel['name']}' are not restored"
            self.warnings.append(FieldError(field=f"{field}.threads", message=message, rule="unrestorable"))
        overwrites = []
        for o_index, overwrite in enumerate(list_of_objects(channel.get("permissions")) or []):
            role_id = self.role_ids.get(str(overwrite.get("roleName")))
            if role_id is None:
                message = (
                    f"an overwrite for '{overwrite.get('roleName')}', a role the backup does not hold, is left out"
                )
                self.warnings.append(
                    FieldError(field=f"{field}.permissions[{o_index}]", message=message, rule="unrestorable")
                )
                continue
            allow, deny = _bitfield(overwrite.get("allow")), _bitfield(overwrite.get("deny"))
            overwrites.append(PermissionOverwrite(id=role_id, type=0, allow=allow, deny=deny))
        channel_id = self.made_up_id()
        self.channels.append(
            Channel(
                id=channel_id,
                type=kind,
                name=channel["name"],
                position=index,
                parent_id=parent_id,
                topic=channel.get("topic"),
                nsfw=bool(channel.get("nsfw")),
                permission_overwrites=overwrites,
                rate_limit_per_user=_int(channel.get("rateLimitPerUser")),
                bitrate=channel.get("bitrate") if kind in (2, 13) else None,
                user_limit=channel.get("userLimit") if kind in (2, 13) else None,
            )
        )
        return channel_id

    def _afk_channel(self) -> str | None:
        afk = self.data.get("afk")
        if not isinstance(afk, dict):
            return None
        return next((c.id for c in self.channels if c.type == 2 and c.name == afk.get("name")), None)

    def _afk_timeout(self) -> int:
        afk = self.data.get("afk")
        return _int(afk.get("timeout"), 300) if isinstance(afk, dict) else 300


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def read_discord_backup(data: dict[str, Any]) -> BackupReading:
    return _DiscordBackup(data).read()
