"""manageBackup `diff`: every difference that would turn the live guild into the backup, as plan items.

The backup's configuration is planned against the guild as a pruning deploy would plan it (ids matched first,
through the guild's id map, then names), in `user_id`'s view when given (the channels they cannot view left out),
else the bot's; every item but `keep` is a change, and an object only in the guild is a `delete`.
Members: for each member of the backup still in the guild, the backup's roles they lack (`missing`) and the roles of
the backup's configuration they hold that the backup did not give them (`extra`), by role name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf import caller_rights
from svcconf.backups import archive
from svcconf.backups.formats import read_backup
from svcconf.chat import ChatClient, UnknownGuild, UnknownMember, get_chat_client
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.member_grants import MemberWants, wanted_roles
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import PlanItem, role_key
from svcconf.deployments.ids import translated
from svcconf.errors import BadRequest, Conflict, FieldError


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
    if against != "live":
        raise BadRequest(
            'Only `against: "live"` is compared for now.',
            details=[FieldError(field="against", message='compare with "live"')],
        )
    backup = archive.get_backup(backup_id)
    reading = read_backup(backup.backup_data)
    if reading.config is None:
        raise NotComparable(details=reading.problems)
    client = get_chat_client()
    try:
        live = read_live_guild(client, backup.guild_id)
    except UnknownGuild as missing:
        raise BotNotInBackupGuild() from missing
    if user_id is not None:
        _, seen = caller_rights.as_caller(client, live, user_id)
        live = seen.live
    config = translated(reading.config, live)
    plan = plan_deployment(live, config, prune=True)
    changes = [item for item in plan.items if item.action != "keep"]
    wants = wanted_roles(reading.config, ((m.user_id, m.roles) for m in reading.members))
    names = {plan.ids[role_key(r.name)]: r.name for r in config.roles if role_key(r.name) in plan.ids}
    members = _member_differences(client, live, wants, plan.ids, names)
    counts = DiffCounts(
        create=sum(1 for item in changes if item.action == "create"),
        update=sum(1 for item in changes if item.action == "update"),
        delete=sum(1 for item in changes if item.action == "delete"),
        members=len(members),
    )
    return BackupDiff(changes=changes, members=members, counts=counts)


def _member_differences(
    client: ChatClient, live: LiveGuild, wants: list[MemberWants], ids: dict[str, str], configured: dict[str, str]
) -> list[MemberDifference]:
    """`configured`: the live id -> name of each role of the backup the guild has."""
    found = []
    for want in wants:
        try:
            held = set(client.get_guild_member(live.id, want.user_id).roles)
        except UnknownMember:
            continue
        wanted_ids = {ids.get(role.key) for role in want.roles}
        missing = [role.name for role in want.roles if ids.get(role.key) not in held]
        extra = sorted(name for role_id, name in configured.items() if role_id in held and role_id not in wanted_ids)
        if missing or extra:
            found.append(MemberDifference(user_id=want.user_id, missing=missing, extra=extra))
    return found
