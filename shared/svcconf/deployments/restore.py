"""A restore: a backup's configuration deployed back to a guild as a deployment of `kind: "restore"`, by two doors
(deployToChat `restore` for a signed-in user, manageBackup `restore` for the chat user the bot names) and one engine.

Exactly a deploy's path (the plan through the guild's id map, the preflight, the caller's rights per object,
confirmed deletions, acknowledgements, the quota's warning, the worker's snapshot first and its `rollback`
after), with two differences: `only` keeps the plan to the parts asked for (roles; channels with categories and
overwrites; settings with the server's name and @everyone's permissions; members), and members get the backup's
roles back (`deploy_engine.member_grants`), one more step kind the worker runs after the plan's.

Who may: into the backup's own guild, anyone who may deploy there; into another guild (a copy), only someone who
may manage the source guild now, or, when the bot can no longer read it, its owner or an administrator as the
backup recorded them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf import caller_rights
from svcconf.backups import archive
from svcconf.backups.formats import BackupReading, read_backup
from svcconf.caller_rights import CallerMayNot, CallerView
from svcconf.caller_rights.checks import MANAGE_GUILD, MANAGE_ROLES, plan_refusals
from svcconf.caller_rights.standing import CallerStanding, NotAMember
from svcconf.chat import UnknownGuild, get_chat_client
from svcconf.clock import utc_now
from svcconf.config import ServerConfig
from svcconf.config.lint import lint_config
from svcconf.deploy_engine.id_map import configured_ids
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.matching import with_ids
from svcconf.deploy_engine.member_grants import (
    MEMBER_DANGEROUS_RULE,
    MemberWants,
    Reach,
    dangerous_refusals,
    grant_refusals,
    plan_members,
    wanted_roles,
)
from svcconf.deploy_engine.preflight import preflight_problems
from svcconf.deploy_engine.steps import (
    DeploymentPlan,
)
from svcconf.deployments import quota as creation_quota
from svcconf.deployments.answers import DeploymentView, DryRun, view
from svcconf.deployments.backup_view import in_callers_view
from svcconf.deployments.common import planned_steps
from svcconf.deployments.ids import translated
from svcconf.deployments.queueing import new_deployment_id, queue_deployment
from svcconf.deployments.requests import (
    BotNotInGuild,
    PlanNotConfirmed,
    PreflightFailed,
    install_url,
    plan_warnings,
)
from svcconf.deployments.restore_members import lacking_dangerous
from svcconf.deployments.restore_parts import PARTS, Part, restore_plan
from svcconf.errors import Conflict, Forbidden, NotFound
from svcconf.observability import metrics
from svcconf.store import id_map
from svcconf.store.deployment_items import DeploymentRecord, RestoreSource


class NotRestorable(Conflict):
    default_message = "This backup cannot be restored: `details` says why."


class MayNotRestoreHere(Forbidden):
    default_message = (
        "Restoring a backup into another server needs someone who may manage the backup's own server now, or, when "
        "the bot can no longer read it, its owner or an administrator as the backup recorded them."
    )


class MayNotDeployHere(Forbidden):
    default_message = "You must own this server or hold ADMINISTRATOR or MANAGE_GUILD in it."


class DangerousMemberRoles(Conflict):
    default_message = (
        f'Members would get back roles with dangerous permissions: send acknowledge ["{MEMBER_DANGEROUS_RULE}"].'
    )


class NoSuchRestore(NotFound):
    default_message = "No restore of that id was made through the bot."


class RestoreOptions(BaseModel):
    """A restore's fields, the same through both doors (each adds who it is for)."""

    backup_id: str = Field(min_length=1, max_length=64, description="The backup to restore.")
    only: list[Part] = Field(
        default_factory=lambda: list(PARTS),
        min_length=1,
        max_length=4,
        description="The parts to restore: roles; channels (categories, channels, their overwrites); settings (the "
        "server's name and settings, @everyone's permissions); members (their roles back). Default: all.",
    )
    members: bool = Field(True, strict=True, description="Members get the backup's roles they lack back.")
    prune: bool = Field(
        False, strict=True, description="Delete what the backup does not hold (with `confirm`), as a deploy's."
    )
    confirm: str | None = Field(
        None, max_length=64, description="The `plan_id` of the dry run seen: needed when the plan deletes anything."
    )
    acknowledge: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=16,
        description='Dangerous grants meant: the lint\'s rule ids, and "member-dangerous-role" for members getting '
        "back a role with a dangerous permission.",
    )
    dry_run: bool = Field(False, strict=True, description="Plan only: the plan and the members', nothing written.")


class RestoreAsked(RestoreOptions):
    """What a restore was asked for, whichever door it came through."""

    guild_id: str
    project_id: str | None = None


class RestorePlanned(DryRun):
    """manageBackup's restore dry run: deployToChat's plan, told apart from manageBackup's other answers by
    `action`."""

    action: Literal["restore"] = "restore"


class RestoreInfo(DeploymentView):
    """manageBackup `info`: a restore made through the bot, as deployToChat `info` answers it."""

    action: Literal["info"] = "info"


# ---------------------------------------------------------------- who may restore what where


def _standing(live: LiveGuild, chat_user_id: str) -> tuple[CallerStanding, CallerView]:
    standing, seen = caller_rights.as_caller(get_chat_client(), live, chat_user_id)
    if not standing.holds(MANAGE_GUILD):
        raise MayNotDeployHere()
    return standing, seen


def _may_copy(chat_user_id: str, source_guild_id: str, reading: BackupReading) -> None:
    """Into another guild: the source guild's manager now, or its recorded owner or administrators."""
    try:
        source = read_live_guild(get_chat_client(), source_guild_id)
    except UnknownGuild:
        if chat_user_id == reading.owner_id or chat_user_id in reading.administrator_ids:
            return
        raise MayNotRestoreHere() from None
    try:
        standing, _ = caller_rights.as_caller(get_chat_client(), source, chat_user_id)
    except NotAMember:
        raise MayNotRestoreHere() from None
    if not standing.holds(MANAGE_GUILD):
        raise MayNotRestoreHere()


def _backup_config(asked: RestoreAsked) -> tuple[archive.Backup, BackupReading, ServerConfig]:
    backup = archive.get_backup(asked.backup_id)
    reading = read_backup(backup.backup_data)
    if not reading.restorable or reading.config is None:
        raise NotRestorable(details=reading.problems)
    return backup, reading, reading.config


class _Checked(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    backup: archive.Backup
    config: ServerConfig
    seen: CallerView
    plan: DeploymentPlan
    wants: list[MemberWants]
    source: RestoreSource


def _checked(chat_user_id: str, asked: RestoreAsked) -> _Checked:
    backup, reading, config = _backup_config(asked)
    try:
        live = read_live_guild(get_chat_client(), asked.guild_id)
    except UnknownGuild as missing:
        raise BotNotInGuild(install_url=install_url(asked.guild_id, config)) from missing
    standing, seen = _standing(live, chat_user_id)
    if backup.guild_id != asked.guild_id:
        _may_copy(chat_user_id, backup.guild_id, reading)
    config = in_callers_view(config, standing, seen)  # what they could not view is not theirs to restore
    source = RestoreSource(
        backup_id=backup.backup_id,
        only=list(dict.fromkeys(asked.only)),
        members=asked.members and "members" in asked.only,
        acknowledged_dangerous_members=MEMBER_DANGEROUS_RULE in asked.acknowledge,
    )
    plan = caller_rights.within_reach(standing, seen, restore_plan(seen.live, config, source, prune=asked.prune))
    problems = preflight_problems(seen.live, plan)  # a hidden channel named is ignored, never refused (docs/05)
    if problems:
        raise PreflightFailed(
            f"The restore cannot work in this server as it is: {len(problems)} problem(s).", details=problems
        )
    wants = wanted_roles(config, ((m.user_id, m.roles) for m in reading.members)) if source.members else []
    reach = Reach(
        top_position=float("inf") if standing.owner else standing.top_position,
        manages_roles=standing.holds(MANAGE_ROLES),
    )
    refusals = [*plan_refusals(standing, seen.live, plan), *grant_refusals(wants, seen.live, plan.ids, reach)]
    if refusals:
        raise CallerMayNot(
            f"You may not restore this here: {len(refusals)} object(s) the chat platform would refuse you in its own "
            "client.",
            details=refusals,
        )
    return _Checked(backup=backup, config=config, seen=seen, plan=plan, wants=wants, source=source)


# ---------------------------------------------------------------- the request


def restore(record_user_id: str, chat_user_id: str, asked: RestoreAsked) -> DryRun | DeploymentView:
    """A dry run (the plan and the members') or the restore queued; `record_user_id` owns the deployment record
    (the signed-in user's `sub`, or `bot:<chat user id>` through the bot)."""
    checked = _checked(chat_user_id, asked)
    plan, seen, config = checked.plan, checked.seen, checked.config
    config_now = translated(config, seen.live)
    if asked.dry_run:
        members, read_alone = plan_members(get_chat_client(), seen.live, checked.wants, plan.ids)
        quota = creation_quota.quota_warnings(asked.guild_id, plan, utc_now())
        return RestorePlanned(
            steps=planned_steps(plan),
            plan=plan.items,
            plan_id=plan.plan_id,
            warnings=[*quota, *plan_warnings(plan), *lint_config(config_now), *seen.hidden_warnings(), *read_alone],
            members=members,
        )
    caller_rights.require_acknowledged(config_now, asked.acknowledge, seen.live, plan.ids)
    if not checked.source.acknowledged_dangerous_members:  # acknowledged: no need to read who lacks what
        dangerous = dangerous_refusals(lacking_dangerous(get_chat_client(), seen.live.id, checked.wants, plan.ids))
        if dangerous:
            raise DangerousMemberRoles(details=dangerous)
    if plan.deletes() and asked.confirm != plan.plan_id:
        message = None if asked.confirm is None else "The server changed since that plan: confirm the current plan_id."
        raise PlanNotConfirmed(
            message, plan=[item.model_dump(mode="json") for item in plan.items], plan_id=plan.plan_id
        )
    now = utc_now()
    record = DeploymentRecord(
        deployment_id=new_deployment_id(),
        kind="restore",
        user_id=record_user_id,
        chat_user_id=chat_user_id,
        project_id=asked.project_id or f"restore-{checked.backup.backup_id}",
        project_name=f"Restore of {checked.backup.label or checked.backup.backup_id}"[:100],
        guild_id=seen.live.id,
        guild_name=seen.live.name,
        bot_role_ids=seen.live.bot_role_ids,
        status="queued",
        created_at=now,
        updated_at=now,
        steps=planned_steps(plan),
        # The backup's configuration with the ids the plan matched: the worker plans it again through the id map.
        configuration=with_ids(config, plan.ids).model_dump(mode="json", exclude_unset=True),
        confirmed_deletes=[item.id for item in plan.deletes() if item.id] if asked.prune else None,
        restore=checked.source,
    )
    quota = creation_quota.quota_warnings(asked.guild_id, plan, now)
    queue_deployment(record)
    metrics.add_metric(name="RestoreQueued", unit="Count", value=1)
    return view(record).model_copy(update={"warnings": [*quota, *lint_config(config_now), *seen.hidden_warnings()]})


def restored_keys(record: DeploymentRecord) -> dict[str, str]:
    """A finished restore's re-creations: the backup's id of each object it created -> the new id."""
    if record.configuration is None:
        return {}
    config = ServerConfig.model_validate(record.configuration)
    configured = configured_ids(config)
    return {configured[key]: new for key, new in record.journal_created.items() if configured.get(key)}


# ---------------------------------------------------------------- the worker's side (its grants: restore_members.py)


def remember_recreations(record: DeploymentRecord) -> None:
    """Once a restore or a rollback ends: the guild's id map learns what it made again (old id -> new id)."""
    if record.kind == "restore":
        recreated = restored_keys(record)
    elif record.kind == "rollback":
        recreated = {
            key.rsplit(":restore:", 1)[1]: new for key, new in record.journal_created.items() if ":restore:" in key
        }
    else:
        return
    id_map.record_recreations(record.guild_id, recreated)
