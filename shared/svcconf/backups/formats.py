"""What a backup's data is, and the configuration it holds: the backup formats (docs/03-api.md, manageBackup).

Pure. `read_backup` tells the shape apart, in the contract's order, and converts it:

- `configuration`: this service's own (a deployToChat `export`, or a backup the service made from the live guild:
  the export plus `members`, `owner_id` and `administrator_ids`); validated as it is.
- `discord-backup`: the npm library's `BackupData` (`channels: {categories, others}`, roles carrying `isEveryone`),
  of its discord.js 13 releases (channel types as strings) and of its forks (channel types as numbers).
- `template`: a native template (the `GET /guilds/templates/{code}` answer or its `serialized_source_guild`, ids
  small placeholders), read by `deploy_engine/native_template.py`.
- `platform`: the platform's own GET answers (`roles`, `channels`, optional `guild` and `members`), and a
  deployment's snapshot (`deploy_engine/snapshot.py`: the same objects, with `categories`, `settings`, `features`
  and the v4 objects in keys of their own).
- `unknown`: anything else, never restorable, with `problems` naming what a restore would need.

The last three are read as the guild they describe and exported like a live one (`deploy_engine/export.py`), so
every format becomes a configuration by the deploy's own rules, and what a configuration cannot hold (messages,
bans, emoji, managed roles, member overwrites) is said in `warnings`, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from svcconf.backups.discord_backup import read_discord_backup
from svcconf.backups.reading import (
    SNOWFLAKE,
    UNRESTORABLE_KEYS,
    BackupReading,
    Format,
    MemberRoles,
    Unreadable,
    list_of_objects,
    losses_of,
    problems_of,
)
from svcconf.chat import Channel, Guild, Role
from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen
from svcconf.chat.templates import TemplateSnapshot
from svcconf.config import ALL_PERMISSIONS, EVERYONE, PERMISSION_BITS, ServerConfig
from svcconf.deploy_engine.attributes import GuildSettings
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.native_template import template_config
from svcconf.deploy_engine.uncarried import COMMUNITY_KINDS, not_carried
from svcconf.errors import FieldError

# What a backup made from the live guild adds to the configuration (the shared interface of issue 30).
BACKUP_KEYS = ("members", "owner_id", "administrator_ids")
ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
MAX_PLACEHOLDER = 10**12  # a template's ids are small integers; a snowflake is far above this


def read_backup(data: Mapping[str, Any]) -> BackupReading:
    """The format of a backup's data and, when it can be restored, its configuration and members."""
    data = dict(data) if isinstance(data, Mapping) else {}
    format_ = detect_format(data)
    reader = _READERS.get(format_)
    if reader is None:
        return BackupReading(format="unknown", restorable=False, problems=_unknownproblems_of(data), warnings=[])
    try:
        return reader(data)
    except Unreadable as unreadable:
        return BackupReading(format=format_, restorable=False, problems=unreadable.problems, warnings=[])
    except ValidationError as invalid:
        return BackupReading(format=format_, restorable=False, problems=problems_of(invalid), warnings=[])


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


def _is_configuration(data: Mapping[str, Any]) -> bool:
    categories, roles = list_of_objects(data.get("categories")), list_of_objects(data.get("roles", []))
    if categories is None or roles is None or not isinstance(data.get("name"), str):
        return False
    if not all(isinstance(category.get("name"), str) for category in categories):
        return False
    permissions = [role.get("permissions", []) for role in roles]
    return all(isinstance(names, list) and all(isinstance(n, str) for n in names) for names in permissions)


def _is_discord_backup(data: Mapping[str, Any]) -> bool:
    channels = data.get("channels")
    roles = list_of_objects(data.get("roles"))
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
    roles, channels = list_of_objects(data.get("roles")), list_of_objects(data.get("channels"))
    if roles is None or channels is None or not (roles or channels):
        return False
    ids = [item.get("id") for item in [*roles, *channels] if item.get("id") is not None]
    return bool(ids) and all(_small_id(value) for value in ids)


def _is_platform(data: Mapping[str, Any]) -> bool:
    guild = data.get("guild")
    roles = list_of_objects(data.get("roles")) or (
        list_of_objects(guild.get("roles")) if isinstance(guild, dict) else None
    )
    channels = list_of_objects(data.get("channels"))
    if not roles or channels is None:
        return False
    channels = [*channels, *(_categories(data) or [])]
    snowflakes = all(SNOWFLAKE.match(str(item.get("id", ""))) for item in [*roles, *channels])
    return snowflakes and all("permission_overwrites" in channel for channel in channels)


def _categories(data: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The categories a deployment's snapshot keeps in a list of their own (`GuildSnapshot.backup_data`); the
    platform's own answer has them among `channels`."""
    return list_of_objects(data.get("categories"))


def _unknownproblems_of(data: Mapping[str, Any]) -> list[FieldError]:
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
            problems += problems_of(invalid, f"members[{index}]")
            continue
        members.append(MemberRoles(user_id=member.user_id, roles=[r for r in member.roles if r in role_ids]))
    return members, problems


def _read_template(data: dict[str, Any]) -> BackupReading:
    source = data.get("serialized_source_guild")
    prefix = "serialized_source_guild" if isinstance(source, dict) else ""
    try:
        snapshot = TemplateSnapshot.model_validate(source if isinstance(source, dict) else data)
    except ValidationError as invalid:
        raise Unreadable(problems_of(invalid, prefix)) from None
    exported = template_config(snapshot)
    return BackupReading(
        format="template", restorable=True, problems=[], warnings=losses_of(exported), config=exported.config
    )


def _read_platform(data: dict[str, Any]) -> BackupReading:
    raw_guild = data.get("guild") if isinstance(data.get("guild"), dict) else None
    try:
        roles = [Role.model_validate(role) for role in (data.get("roles") or (raw_guild or {}).get("roles") or [])]
        channels = [Channel.model_validate(channel) for channel in [*(_categories(data) or []), *data["channels"]]]
        guild = Guild.model_validate({**raw_guild, "roles": roles}) if raw_guild else None
        snapshot = _snapshot_parts(data)
    except ValidationError as invalid:
        raise Unreadable(problems_of(invalid)) from None
    everyone = next((role for role in roles if role.name == EVERYONE), None)
    guild_id = guild.id if guild else (everyone.id if everyone else None)
    if guild_id is None or not any(role.id == guild_id for role in roles):
        message = (
            "the @everyone role (its id is the server's) is missing: a restore would not know the base permissions"
        )
        raise Unreadable([FieldError(field="roles", message=message)])
    settings_source = guild or Guild(id=guild_id, name=str(data.get("name") or "server"), roles=roles)
    # a snapshot's guild is its id and name: its settings, features and v4 objects are keys of their own
    settings = snapshot.pop("settings", None) or GuildSettings.of(settings_source)
    live = LiveGuild(
        id=guild_id,
        name=settings_source.name,
        owner_id=settings_source.owner_id,
        features=snapshot.pop("features", None) or settings_source.features,
        settings=settings,
        roles=roles,
        channels=channels,
        bot_role_ids=[],
        **snapshot,
    )
    exported = export_config(live, live.settings, ids=True)
    # the GET answers of the guild, its roles and channels hold none of v4's kinds; a snapshot holds those it read
    missing = [kind for kind in COMMUNITY_KINDS if SNAPSHOT_KEYS[kind] not in snapshot]
    exported.warnings[:0] = not_carried("the platform format (roles, channels, guild, members)", missing)
    config = exported.config
    if guild is None and not isinstance(data.get("settings"), dict):  # none read: a restore leaves the server's
        config = config.model_copy(update={"settings": None})
    warnings = losses_of(exported)
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


SNAPSHOT_KEYS = {"automod": "automod_rules", "onboarding": "onboarding", "welcome_screen": "welcome_screen"}


def _snapshot_parts(data: Mapping[str, Any]) -> dict[str, Any]:
    """What a deployment's snapshot (or a bot's dump of the same GET answers) holds beside the roles and channels:
    the settings, the features and the v4 objects (absent: not read, as in a live guild the bot could not read)."""
    parts: dict[str, Any] = {}
    if isinstance(data.get("settings"), dict):
        parts["settings"] = GuildSettings.model_validate(data["settings"])
    if isinstance(data.get("features"), list):
        parts["features"] = [str(feature) for feature in data["features"]]
    if isinstance(data.get("automod_rules"), list):
        parts["automod_rules"] = [AutomodRule.model_validate(rule) for rule in data["automod_rules"]]
    if isinstance(data.get("onboarding"), dict):
        parts["onboarding"] = GuildOnboarding.model_validate(data["onboarding"])
    if isinstance(data.get("welcome_screen"), dict):
        parts["welcome_screen"] = WelcomeScreen.model_validate(data["welcome_screen"])
    return parts


def _platform_members(
    value: Any, roles: list[Role], guild_id: str, config: ServerConfig
) -> tuple[list[MemberRoles], list[str]]:
    """Members' roles (those the configuration holds) and who held ADMINISTRATOR, from the platform's members."""
    kept = {role.id for role in config.roles if role.id}
    by_id = {role.id: role for role in roles}
    everyone = int(by_id[guild_id].permissions) if guild_id in by_id else 0
    members, administrators = [], []
    for item in list_of_objects(value) or []:
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
    "discord-backup": read_discord_backup,
    "template": _read_template,
    "platform": _read_platform,
}

__all__ = ["BackupReading", "Format", "MemberRoles", "detect_format", "read_backup"]
