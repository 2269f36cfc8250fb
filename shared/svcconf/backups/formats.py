"""What a backup's data is, and the configuration it holds: the backup formats (docs/03-api.md, manageBackup).

Pure. `read_backup` tells the shape apart, in the contract's order, and converts it:

- `configuration`: this service's own (a deployToChat `export`, or a backup the service made from the live guild:
  the export plus `members`, `owner_id` and `administrator_ids`); validated as it is.
- `discord-backup`: the npm library's `BackupData` (`channels: {categories, others}`, roles carrying `isEveryone`),
  of its discord.js 13 releases (channel types as strings) and of its forks (channel types as numbers).
- `template`: a native template (the `GET /guilds/templates/{code}` answer or its `serialized_source_guild`, ids
  small placeholders), read by `deploy_engine/native_template.py`.
- `platform`: the platform's own GET answers (`roles`, `channels`, optional `guild` and `members`).
- `unknown`: anything else, never restorable, with `problems` naming what a restore would need.

The last three are read as the guild they describe and exported like a live one (`deploy_engine/export.py`), so
every format becomes a configuration by the deploy's own rules, and what a configuration cannot hold (messages,
bans, emoji, managed roles, member overwrites) is said in `warnings`, never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from svcconf.chat import Channel, Guild, PermissionOverwrite, Role
from svcconf.chat.templates import TemplateSnapshot
from svcconf.config import ALL_PERMISSIONS, CHANNEL_TYPES, EVERYONE, LINT_RULES, PERMISSION_BITS, ServerConfig
from svcconf.deploy_engine.attributes import GuildSettings
from svcconf.deploy_engine.export import Exported, export_config
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.native_template import template_config
from svcconf.errors import FieldError, field_path

Format = Literal["configuration", "discord-backup", "template", "platform", "unknown"]
# What a backup made from the live guild adds to the configuration (the shared interface of issue 30).
BACKUP_KEYS = ("members", "owner_id", "administrator_ids")
ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
SNOWFLAKE = re.compile(r"^[0-9]{17,20}$")
LINT_RULE_IDS = frozenset(rule.id for rule in LINT_RULES)
MAX_PLACEHOLDER = 10**12  # a template's ids are small integers; a snowflake is far above this
CATEGORY = CHANNEL_TYPES["category"]
FAKE_GUILD_ID = "0"  # @everyone's id in a guild read from a format that carries no ids


class MemberRoles(BaseModel):
    user_id: str
    roles: list[str] = Field(description="Role ids as the backup's configuration holds them.")


class BackupReading(BaseModel):
    format: Format
    restorable: bool
    problems: list[FieldError] = Field(description="Why it cannot be restored: field paths into backup_data.")
    warnings: list[FieldError] = Field(description="What the format holds that a configuration cannot.")
    config: ServerConfig | None = Field(None, description="The configuration once converted (None: not restorable).")
    members: list[MemberRoles] = Field(default_factory=list)
    owner_id: str | None = None
    administrator_ids: list[str] = Field(default_factory=list)


class _Unreadable(Exception):
    def __init__(self, problems: list[FieldError]):
        super().__init__(problems[0].message if problems else "unreadable")
        self.problems = problems


def read_backup(data: Mapping[str, Any]) -> BackupReading:
    """The format of a backup's data and, when it can be restored, its configuration and members."""
    data = dict(data) if isinstance(data, Mapping) else {}
    format_ = detect_format(data)
    reader = _READERS.get(format_)
    if reader is None:
        return BackupReading(format="unknown", restorable=False, problems=_unknown_problems(data), warnings=[])
    try:
        return reader(data)
    except _Unreadable as unreadable:
        return BackupReading(format=format_, restorable=False, problems=unreadable.problems, warnings=[])
    except ValidationError as invalid:
        return BackupReading(format=format_, restorable=False, problems=_problems(invalid), warnings=[])


# -- telling formats apart --------------------------------------------------------------------------------------


def detect_format(data: Mapping[str, Any]) -> Format:
    """The contract's tests, in its order: configuration, discord-backup, template, platform; else unknown."""
    if _is_configuration(data):
        return "configuration"
    if _is_discord_backup(data):
        return "discord-backup"
    if _is_template(data):
        return "template"
    if _is_platform(data):
        return "platform"
    return "unknown"


def _dicts(value: Any) -> list[dict[str, Any]] | None:
    """The list's items when it is a list of objects, else None."""
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return value
    return None


def _is_configuration(data: Mapping[str, Any]) -> bool:
    categories, roles = _dicts(data.get("categories")), _dicts(data.get("roles", []))
    if categories is None or roles is None or not isinstance(data.get("name"), str):
        return False
    if not all(isinstance(category.get("name"), str) for category in categories):
        return False
    permissions = [role.get("permissions", []) for role in roles]
    return all(isinstance(names, list) and all(isinstance(n, str) for n in names) for names in permissions)


def _is_discord_backup(data: Mapping[str, Any]) -> bool:
    channels = data.get("channels")
    roles = _dicts(data.get("roles"))
    return (
        isinstance(channels, dict)
        and "categories" in channels
        and "others" in channels
        and roles is not None
        and any("isEveryone" in role for role in roles)
    )


def _small_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0 <= value < MAX_PLACEHOLDER
    return isinstance(value, str) and value.isdigit() and int(value) < MAX_PLACEHOLDER


def _is_template(data: Mapping[str, Any]) -> bool:
    if isinstance(data.get("serialized_source_guild"), dict):
        return True
    roles, channels = _dicts(data.get("roles")), _dicts(data.get("channels"))
    if roles is None or channels is None or not (roles or channels):
        return False
    ids = [item.get("id") for item in [*roles, *channels] if item.get("id") is not None]
    return bool(ids) and all(_small_id(value) for value in ids)


def _is_platform(data: Mapping[str, Any]) -> bool:
    guild = data.get("guild")
    roles = _dicts(data.get("roles")) or (_dicts(guild.get("roles")) if isinstance(guild, dict) else None)
    channels = _dicts(data.get("channels"))
    if not roles or channels is None:
        return False
    snowflakes = all(SNOWFLAKE.match(str(item.get("id", ""))) for item in [*roles, *channels])
    return snowflakes and all("permission_overwrites" in channel for channel in channels)


def _unknown_problems(data: Mapping[str, Any]) -> list[FieldError]:
    """What a restore would need that the shape lacks, named by field."""
    needs = "every backup format names the server's roles"
    problems = []
    if not isinstance(data.get("roles"), list):
        problems.append(FieldError(field="roles", message=f"missing or not a list: {needs}"))
    channels = data.get("channels")
    if not isinstance(data.get("categories"), list) and not isinstance(channels, list | dict):
        message = "missing: a configuration has `categories` (objects with `name`), the platform's objects `channels`"
        problems.append(FieldError(field="categories", message=message))
    if not isinstance(data.get("name"), str) and not isinstance(data.get("guild"), dict):
        problems.append(FieldError(field="name", message="missing: the server's name"))
    if not problems:  # every key is there, but in no format's shape
        message = (
            "matches no backup format: a configuration (roles' permissions as names, categories with names), "
            "discord-backup's BackupData, a native template's snapshot or the platform's GET answers"
        )
        problems.append(FieldError(field="backup_data", message=message))
    return problems


# -- the readers ---------------------------------------------------------------------------------------------


def _problems(invalid: ValidationError, prefix: str = "") -> list[FieldError]:
    found = []
    for error in invalid.errors():
        path = field_path(error["loc"])
        if prefix:
            path = f"{prefix}.{path}" if path != "body" else prefix
        found.append(FieldError(field=path, message=error["msg"]))
    return found


def _warnings(exported: Exported) -> list[FieldError]:
    """What the export left out (the permission-safety lint's advice is not the format's loss: left out)."""
    return [
        FieldError(field=w.field, message=w.message, rule=w.rule)
        for w in exported.warnings
        if w.rule not in LINT_RULE_IDS
    ]


def _read_configuration(data: dict[str, Any]) -> BackupReading:
    config = ServerConfig.model_validate({key: value for key, value in data.items() if key not in BACKUP_KEYS})
    role_ids = {role.id for role in config.roles if role.id}
    members, problems = _members(data.get("members"), role_ids)
    owner_id = data.get("owner_id")
    if owner_id is not None and not SNOWFLAKE.match(str(owner_id)):
        problems.append(FieldError(field="owner_id", message="must be a snowflake"))
    administrators = data.get("administrator_ids", [])
    if not isinstance(administrators, list) or not all(SNOWFLAKE.match(str(a)) for a in administrators):
        problems.append(FieldError(field="administrator_ids", message="must be a list of snowflakes"))
        administrators = []
    return BackupReading(
        format="configuration",
        restorable=not problems,
        problems=problems,
        warnings=[],
        config=None if problems else config,
        members=members,
        owner_id=str(owner_id) if owner_id is not None and not problems else None,
        administrator_ids=[str(a) for a in administrators],
    )


def _members(value: Any, role_ids: set[str]) -> tuple[list[MemberRoles], list[FieldError]]:
    """A live backup's members; each one's roles kept to those the configuration holds (by id)."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], [FieldError(field="members", message="must be a list of {user_id, roles}")]
    members, problems = [], []
    for index, item in enumerate(value):
        try:
            member = MemberRoles.model_validate(item)
        except ValidationError as invalid:
            problems += _problems(invalid, f"members[{index}]")
            continue
        members.append(MemberRoles(user_id=member.user_id, roles=[r for r in member.roles if r in role_ids]))
    return members, problems


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
UNRESTORABLE_KEYS = {  # what discord-backup keeps that a configuration cannot hold
    "bans": "bans are not part of a server's configuration: they are not restored",
    "emojis": "custom emoji are not part of a server's configuration: they are not restored",
    "iconURL": "the server's icon is not restored",
    "iconBase64": "the server's icon is not restored",
    "splashURL": "the server's splash image is not restored",
    "bannerURL": "the server's banner is not restored",
    "widget": "the widget settings are not restored",
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
        categories, others = _dicts(channels.get("categories")), _dicts(channels.get("others"))
        if categories is None or others is None:
            problem = "must be lists of objects"
            raise _Unreadable([FieldError(field="channels.categories", message=problem)])
        for index, category in enumerate(categories):
            field = f"channels.categories[{index}]"
            category_id = self._channel({**category, "type": CATEGORY}, field, None, index)
            for child_index, child in enumerate(_dicts(category.get("children")) or []):
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
        return BackupReading(
            format="discord-backup",
            restorable=True,
            problems=[],
            warnings=[*self.warnings, *_warnings(exported)],
            config=exported.config,
        )

    def _roles(self) -> None:
        roles = _dicts(self.data["roles"]) or []
        everyone = next((role for role in roles if role.get("isEveryone")), None)
        permissions = _bitfield(everyone.get("permissions")) if everyone else "0"
        self.roles.append(Role(id=FAKE_GUILD_ID, name=EVERYONE, permissions=permissions, position=0))
        self.role_ids[EVERYONE] = FAKE_GUILD_ID
        others = [(index, role) for index, role in enumerate(roles) if not role.get("isEveryone")]
        # `position` counts from the bottom; the library's list order (highest first) breaks ties.
        ranked = sorted(others, key=lambda pair: (_int(pair[1].get("position")), -pair[0]))
        for position, (index, role) in enumerate(ranked, start=1):
            if not isinstance(role.get("name"), str):
                raise _Unreadable([FieldError(field=f"roles[{index}].name", message="must be a string")])
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
            raise _Unreadable([FieldError(field=f"{field}.name", message="must be a string")])
        if channel.get("messages"):
            message = f"{len(channel['messages'])} message(s) of '{channel['name']}' are not restored"
            self.warnings.append(FieldError(field=f"{field}.messages", message=message, rule="unrestorable"))
        if channel.get("threads"):
            message = f"the threads of '{channel['name']}' are not restored"
            self.warnings.append(FieldError(field=f"{field}.threads", message=message, rule="unrestorable"))
        overwrites = []
        for o_index, overwrite in enumerate(_dicts(channel.get("permissions")) or []):
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


def _read_discord_backup(data: dict[str, Any]) -> BackupReading:
    return _DiscordBackup(data).read()


def _read_template(data: dict[str, Any]) -> BackupReading:
    source = data.get("serialized_source_guild")
    prefix = "serialized_source_guild" if isinstance(source, dict) else ""
    try:
        snapshot = TemplateSnapshot.model_validate(source if isinstance(source, dict) else data)
    except ValidationError as invalid:
        raise _Unreadable(_problems(invalid, prefix)) from None
    exported = template_config(snapshot)
    return BackupReading(
        format="template", restorable=True, problems=[], warnings=_warnings(exported), config=exported.config
    )


def _read_platform(data: dict[str, Any]) -> BackupReading:
    raw_guild = data.get("guild") if isinstance(data.get("guild"), dict) else None
    try:
        roles = [Role.model_validate(role) for role in (data.get("roles") or (raw_guild or {}).get("roles") or [])]
        channels = [Channel.model_validate(channel) for channel in data["channels"]]
        guild = Guild.model_validate({**raw_guild, "roles": roles}) if raw_guild else None
    except ValidationError as invalid:
        raise _Unreadable(_problems(invalid)) from None
    everyone = next((role for role in roles if role.name == EVERYONE), None)
    guild_id = guild.id if guild else (everyone.id if everyone else None)
    if guild_id is None or not any(role.id == guild_id for role in roles):
        message = (
            "the @everyone role (its id is the server's) is missing: a restore would not know the base permissions"
        )
        raise _Unreadable([FieldError(field="roles", message=message)])
    settings_source = guild or Guild(id=guild_id, name=str(data.get("name") or "server"), roles=roles)
    live = LiveGuild(
        id=guild_id,
        name=settings_source.name,
        owner_id=settings_source.owner_id,
        features=settings_source.features,
        settings=GuildSettings.of(settings_source),
        roles=roles,
        channels=channels,
        bot_role_ids=[],
    )
    exported = export_config(live, settings_source, ids=True)
    config = exported.config
    if guild is None:  # no settings were read: a restore leaves the server's as they are
        config = config.model_copy(update={"settings": None})
    warnings = _warnings(exported)
    warnings += [
        FieldError(field=f"roles[{index}]", message=f"managed role '{role.name}' is not restored", rule="unrestorable")
        for index, role in enumerate(roles)
        if role.managed
    ]
    if raw_guild and raw_guild.get("emojis"):
        warnings.append(FieldError(field="guild.emojis", message=UNRESTORABLE_KEYS["emojis"], rule="unrestorable"))
    members, administrators = _platform_members(data.get("members"), roles, guild_id, config)
    return BackupReading(
        format="platform",
        restorable=True,
        problems=[],
        warnings=warnings,
        config=config,
        members=members,
        owner_id=settings_source.owner_id,
        administrator_ids=administrators,
    )


def _platform_members(
    value: Any, roles: list[Role], guild_id: str, config: ServerConfig
) -> tuple[list[MemberRoles], list[str]]:
    """Members' roles (those the configuration holds) and who held ADMINISTRATOR, from the platform's members."""
    kept = {role.id for role in config.roles if role.id}
    by_id = {role.id: role for role in roles}
    everyone = int(by_id[guild_id].permissions) if guild_id in by_id else 0
    members, administrators = [], []
    for item in _dicts(value) or []:
        user = item["user"] if isinstance(item.get("user"), dict) else {}
        user_id = str(user.get("id") or item.get("user_id") or "")
        if not SNOWFLAKE.match(user_id):
            continue
        held = [str(role_id) for role_id in item.get("roles") or []]
        permissions = everyone
        for role_id in held:
            permissions |= int(by_id[role_id].permissions) if role_id in by_id else 0
        if permissions & ADMINISTRATOR & ALL_PERMISSIONS:
            administrators.append(user_id)
        members.append(MemberRoles(user_id=user_id, roles=[role_id for role_id in held if role_id in kept]))
    return members, administrators


_READERS = {
    "configuration": _read_configuration,
    "discord-backup": _read_discord_backup,
    "template": _read_template,
    "platform": _read_platform,
}

__all__ = ["BackupReading", "Format", "MemberRoles", "detect_format", "read_backup"]
