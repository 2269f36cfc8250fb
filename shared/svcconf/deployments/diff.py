"""manageBackup `diff`: every difference that would turn `against` (the live guild, or another backup of the same
guild) into the backup, as plan items.

The backup's configuration is planned against the other side as a pruning deploy would plan it (ids matched first,
through the guild's id map, then names); every item but `keep` is a change, and an object only in `against` is a
`delete`. With `user_id`, in that user's view (`backup_view.py`), against either side: the channels they could not
view under each backup's own overwrites, or that the guild hides from them now, are left out of both, so the diff
names neither them nor their ids; without it, the bot's. Against another backup, that backup's configuration read
as the guild it describes (`deploy_engine/configured.py`): roles, categories, channels, overwrites and settings are
compared; both backups must be restorable (else 409 with the problems of the one that is not).
Members: for each member of the backup still in the guild (against a backup: each member, when that backup holds
members; one it does not list held none of its roles), the backup's roles they lack (`missing`) and the roles of the
backup's configuration they hold that the backup did not give them (`extra`), by role name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf import caller_rights
from svcconf.backups import archive
from svcconf.backups.formats import BackupReading, read_backup
from svcconf.caller_rights import CallerStanding, CallerView
from svcconf.chat import UnknownGuild, get_chat_client
from svcconf.config import ServerConfig
from svcconf.deploy_engine.configured import configured_guild
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.member_grants import MemberWants, wanted_roles
from svcconf.deploy_engine.member_reads import HeldRoles
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import PlanItem, role_key
from svcconf.deployments.backup_view import in_callers_view
from svcconf.deployments.ids import translated
from svcconf.errors import BackupNotFound, BadRequest, Conflict, FieldError

LIVE = "live"
Viewer = tuple[CallerStanding, CallerView]  # a chat user's standing in the guild now, and the guild as they see it
Holding = Callable[[str], set[str] | None]  # a member's role ids on the other side; None: not there (or unknown)


class NotComparable(Conflict):
    default_message = "This backup cannot be read as a configuration: `details` says why."


class BotNotInBackupGuild(Conflict):
    default_message = "The service's bot is not in the backup's server, so it cannot be compared with it."


class MemberDifference(BaseModel):
    user_id: str
    missing: list[str] = Field(description="Roles the backup gave the member that they lack now (names).")
    extra: list[str] = Field(description="Roles of the backup the member holds now that it did not give them.")


class DiffCounts(BaseModel):
    create: int = 0
    update: int = 0
    delete: int = 0
    members: int = Field(0, description="Members whose roles differ.")


class BackupDiff(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["diff"] = "diff"
    changes: list[PlanItem] = Field(description="What turns the server into the backup, as plan items.")
    members: list[MemberDifference]
    counts: DiffCounts


def diff_backup(backup_id: str, against: str, user_id: str | None) -> BackupDiff:
    backup = archive.get_backup(backup_id)
    reading, config = _comparable(backup, "backup_id")
    viewer = _viewer(backup.guild_id, user_id) if user_id is not None else None
    if against == LIVE:
        before, holding = _live(backup.guild_id, viewer)
    else:
        before, holding = _other_backup(against, backup.guild_id, viewer)
    if viewer is not None:
        config = in_callers_view(config, *viewer)
    # the members' roles are the backup's own ids: its configuration before the id map's translation
    wants = wanted_roles(config, ((m.user_id, m.roles) for m in reading.members))
    config = translated(config, before)
    plan = plan_deployment(before, config, prune=True)
    changes = [item for item in plan.items if item.action != "keep"]
    names = {plan.ids[role_key(r.name)]: r.name for r in config.roles if role_key(r.name) in plan.ids}
    members = _member_differences(holding, wants, plan.ids, names)
    counts = DiffCounts(
        create=sum(1 for item in changes if item.action == "create"),
        update=sum(1 for item in changes if item.action == "update"),
        delete=sum(1 for item in changes if item.action == "delete"),
        members=len(members),
    )
    return BackupDiff(changes=changes, members=members, counts=counts)


def _comparable(backup: archive.Backup, field: str) -> tuple[BackupReading, ServerConfig]:
    reading = read_backup(backup.backup_data)
    if reading.config is None:
        message = f"Backup {backup.backup_id} (`{field}`) cannot be read as a configuration: `details` says why."
        raise NotComparable(message, details=reading.problems)
    return reading, reading.config


def _read_guild(guild_id: str) -> LiveGuild:
    try:
        return read_live_guild(get_chat_client(), guild_id)
    except UnknownGuild as missing:
        raise BotNotInBackupGuild() from missing


def _viewer(guild_id: str, user_id: str) -> Viewer:
    """`user_id`'s standing in the backup's guild now, and the guild as they see it."""
    return caller_rights.as_caller(get_chat_client(), _read_guild(guild_id), user_id)


def _live(guild_id: str, viewer: Viewer | None) -> tuple[LiveGuild, Holding]:
    """The live guild (in the viewer's view when given, else the bot's), and its members' roles as the bot reads them
    now (from the member list, or one by one when the platform refuses the list)."""
    live = viewer[1].live if viewer is not None else _read_guild(guild_id)
    return live, HeldRoles(get_chat_client(), live.id).of  # asked in user-id order: the member list, 1,000 a page


def _other_backup(against: str, guild_id: str, viewer: Viewer | None) -> tuple[LiveGuild, Holding]:
    """Another backup of the same guild (in the viewer's view when given), as the guild it describes, and its members'
    roles (none listed: unknown)."""
    try:
        other = archive.get_backup(against)
    except BackupNotFound as unknown:
        message = "no such backup"
        raise BackupNotFound(
            f"No backup {against} (`against`) exists.", details=[FieldError(field="against", message=message)]
        ) from unknown
    if other.guild_id != guild_id:
        message = f'must be a backup of the same server ({guild_id}), or "live"'
        raise BadRequest(f"against: {message}.", details=[FieldError(field="against", message=message)])
    reading, config = _comparable(other, "against")
    if viewer is not None:
        config = in_callers_view(config, *viewer)
    held = {member.user_id: set(member.roles) for member in reading.members}
    has_members = "members" in other.backup_data  # else made without them: nothing is known of anyone's roles

    def holding(member_id: str) -> set[str] | None:
        return held.get(member_id, set()) if has_members else None

    return configured_guild(config, guild_id), holding


def _member_differences(
    holding: Holding, wants: list[MemberWants], ids: dict[str, str], configured: dict[str, str]
) -> list[MemberDifference]:
    """`configured`: the other side's id -> name of each role of the backup it has."""
    found = []
    for want in wants:
        held = holding(want.user_id)
        if held is None:
            continue
        wanted_ids = {ids.get(role.key) for role in want.roles}
        missing = [role.name for role in want.roles if ids.get(role.key) not in held]
        extra = sorted(name for role_id, name in configured.items() if role_id in held and role_id not in wanted_ids)
        if missing or extra:
            found.append(MemberDifference(user_id=want.user_id, missing=missing, extra=extra))
    return found
