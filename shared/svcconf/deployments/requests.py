"""The request side of a deployment (deployToChat): deploy, dry run, info and rollback.

It checks who may deploy where, reads the live guild, plans, runs the preflight, and either answers the dry run or
queues the deployment under the guild's lock with a deployment code (409 when the guild is busy, the bot is not in
it or the preflight fails), with a warning when the platform's creation quota will make it wait. What it answers
is modelled in `answers.py`.
"""

from __future__ import annotations

from urllib.parse import urlencode

from svcconf import caller_rights
from svcconf.accounts.chat_account import managed_guild
from svcconf.api.auth import BearerUser
from svcconf.backups import archive
from svcconf.caller_rights import CallerView
from svcconf.chat import ChatError, UnknownGuild, get_chat_client
from svcconf.clock import utc_now
from svcconf.config import ServerConfig, to_bitfield
from svcconf.config.lint import LintWarning, lint_config
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.matching import with_ids
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from svcconf.deploy_engine.prune import confirmed_fingerprints, deletion_warnings
from svcconf.deploy_engine.steps import DeploymentPlan
from svcconf.deployments import quota as creation_quota
from svcconf.deployments.answers import DeploymentView, DryRun, HistoryEntry, view
from svcconf.deployments.common import (
    deployment_repository,
    planned_steps,
    rollback_plan,
)
from svcconf.deployments.ids import translated
from svcconf.deployments.queueing import GuildIsBusy, new_record, queue_deployment
from svcconf.errors import BadRequest, Conflict, FieldError, NotFound
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store.deployment_items import DeploymentRecord

# The permissions a bot needs to deploy at all; an install link asks for these and what the configuration grants.
DEPLOY_BOT_PERMISSIONS = ["VIEW_CHANNEL", "MANAGE_CHANNELS", "MANAGE_ROLES"]


class BotNotInGuild(Conflict):
    default_message = "The service's bot is not in this server: install it with install_url, then deploy again."


class PreflightFailed(Conflict):
    default_message = "The deployment cannot work in this server as it is."


class SnapshotGone(Conflict):
    default_message = "The deployment's snapshot of the server is gone: it can no longer be rolled back."


class PlanNotConfirmed(Conflict):
    default_message = (
        "This deploy deletes objects: send `confirm` with the `plan_id` of the plan you saw (a dry run with `prune`)."
    )


class NoDeployment(NotFound):
    default_message = "No deployment of this project by you was found."


class LaterDeploymentInTheWay(Conflict):
    default_message = "A later deployment changed what this one did: roll that one back first."


def install_url(guild_id: str, config: ServerConfig | None) -> str:
    """The platform's link that adds the bot to this guild with the permissions the deploy will use."""
    granted: list[str] = [p for role in config.roles for p in role.permissions] if config else []
    granted += (config.everyone_permissions or []) if config else []
    if config and config.settings:
        granted.append("MANAGE_GUILD")  # the settings' one PATCH
    settings = get_settings()
    query = {
        "client_id": settings.chat_client_id or "",
        "scope": "bot",
        "permissions": to_bitfield([*DEPLOY_BOT_PERMISSIONS, *granted]),
        "guild_id": guild_id,
        "disable_guild_select": "true",
    }
    return f"{settings.chat_authorize_url}?{urlencode(query)}"


def _live_guild(guild_id: str, config: ServerConfig | None) -> LiveGuild:
    try:
        return read_live_guild(get_chat_client(), guild_id)
    except UnknownGuild as missing:
        raise BotNotInGuild(install_url=install_url(guild_id, config)) from missing


def _checked_plan(
    user: BearerUser, guild_id: str, config: ServerConfig, *, prune: bool
) -> tuple[str, CallerView, DeploymentPlan]:
    """Who may deploy here, the guild as they see it, and a plan the platform will accept from the bot and would
    accept from them in its own client: else 403, 409."""
    chat_user_id, _ = managed_guild(user, guild_id)
    standing, seen = caller_rights.as_caller(get_chat_client(), _live_guild(guild_id, config), chat_user_id)
    config = translated(config, seen.live)  # ids the guild no longer has, as a restore made them again
    plan = caller_rights.within_reach(standing, seen, plan_deployment(seen.live, config, prune=prune))
    problems = preflight_problems(seen.live, plan)  # a channel hidden from the caller is absent from `seen`
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise PreflightFailed(
            f"The deployment cannot work in this server as it is: {len(problems)} {noun}.", details=problems
        )
    caller_rights.check_plan(standing, seen, plan)  # what could work: would the platform let this person do it?
    return chat_user_id, seen, plan


def dry_run(user: BearerUser, guild_id: str, config: ServerConfig, *, prune: bool = False) -> DryRun:
    _, seen, plan = _checked_plan(user, guild_id, config, prune=prune)
    quota = creation_quota.quota_warnings(guild_id, plan, utc_now())
    return DryRun(
        steps=planned_steps(plan),
        plan=plan.items,
        plan_id=plan.plan_id,
        warnings=[*quota, *plan_warnings(plan), *lint_config(config), *seen.hidden_warnings()],
    )


def plan_warnings(plan: DeploymentPlan) -> list[LintWarning]:
    """What the plan keeps that a prune would have deleted, what it deletes, and who holds each role it deletes."""
    counts = None
    if any(item.kind == "role" for item in plan.deletes()):
        try:
            counts = get_chat_client().role_member_counts(plan.guild_id)
        except ChatError:
            logger.warning("the platform's role member counts could not be read")  # the warning says "unknown"
    return [*plan.warnings, *deletion_warnings(plan.items, counts)]


def deploy(
    user: BearerUser,
    guild_id: str,
    project_id: str,
    project_name: str,
    config: ServerConfig,
    *,
    prune: bool = False,
    confirm: str | None = None,
    acknowledge: list[str] | None = None,
) -> DeploymentView:
    chat_user_id, seen, plan = _checked_plan(user, guild_id, config, prune=prune)
    caller_rights.require_acknowledged(config, acknowledge or [], seen.live, plan.ids)
    if plan.deletes() and confirm != plan.plan_id:
        message = None if confirm is None else "The server changed since that plan: confirm the current plan_id."
        raise PlanNotConfirmed(
            message, plan=[item.model_dump(mode="json") for item in plan.items], plan_id=plan.plan_id
        )
    record = new_record(
        "deploy",
        user.sub,
        chat_user_id,
        project_id,
        project_name,
        seen.live,
        steps=planned_steps(plan),
        # What the user stated, not the schema's defaults: an omitted attribute must stay omitted; with the ids
        # of what the plan matched, so `info` can answer every id once the worker adds what it created.
        configuration=with_ids(config, plan.ids).model_dump(mode="json", exclude_unset=True),
        confirmed_deletes=[item.id for item in plan.deletes() if item.id] if prune else None,
        confirmed_fingerprints=confirmed_fingerprints(seen.live, [i.id for i in plan.deletes() if i.id])
        if prune
        else None,
    )
    quota = creation_quota.quota_warnings(guild_id, plan, record.created_at)
    warnings = [*quota, *lint_config(config), *seen.hidden_warnings()]
    queue_deployment(record, mint_for=config)
    metrics.add_metric(name="DeploymentQueued", unit="Count", value=1)
    return view(record).model_copy(update={"warnings": warnings})


def rollback(
    user: BearerUser, project_id: str | None, guild_id: str | None, deployment_id: str | None = None
) -> DeploymentView:
    """Queues the undoing of `deployment_id`, or of the caller's newest deployment of the project (to `guild_id`,
    when given)."""
    chat_user_id, target, live = _rollback_target(user, project_id, guild_id, deployment_id)
    return queue_rollback(user.sub, chat_user_id, target, live)


def queue_rollback(record_user_id: str, chat_user_id: str, target: DeploymentRecord, live: LiveGuild) -> DeploymentView:
    """The rollback of `target` queued for `chat_user_id`, once they may (both doors: deployToChat for a signed-in
    user, manageBackup for the chat user the bot names); its plan is checked for them as a deploy's. The record is
    `record_user_id`'s, the owner of `target`, so the worker finds what it undoes."""
    standing, seen = caller_rights.as_caller(get_chat_client(), live, chat_user_id)
    caller_rights.check_plan(standing, seen, rollback_plan(seen.live, target, target.backup_id or "").plan)
    record = new_record(
        "rollback",
        record_user_id,
        chat_user_id,
        target.project_id,
        target.project_name,
        live,
        backup_id=target.backup_id,
        rollback_of=target.deployment_id,
    )
    queue_deployment(record)
    metrics.add_metric(name="RollbackQueued", unit="Count", value=1)
    return view(record)


def rollback_dry_run(
    user: BearerUser, project_id: str | None, guild_id: str | None, deployment_id: str | None = None
) -> DryRun:
    """What that rollback would do now, as the caller sees the server, written nowhere; what anyone changed since
    the deployment (and the rollback would leave) as warnings. A deployment that holds the guild never refuses it."""
    chat_user_id, target, live = _rollback_target(user, project_id, guild_id, deployment_id, dry_run=True)
    standing, seen = caller_rights.as_caller(get_chat_client(), live, chat_user_id)
    planned = rollback_plan(seen.live, target, target.backup_id or "")
    caller_rights.check_plan(standing, seen, planned.plan)
    planned.plan.caller_id = chat_user_id  # its plan_id is this caller's
    left = [
        LintWarning(field="", rule="left-as-it-is", message=f"{error.kind} '{error.name}': {error.message}")
        for error in planned.left
    ]
    plan = planned.plan
    return DryRun(steps=planned_steps(plan), plan=plan.items, plan_id=plan.plan_id, warnings=left)


def _rollback_target(
    user: BearerUser,
    project_id: str | None,
    guild_id: str | None,
    deployment_id: str | None,
    *,
    dry_run: bool = False,
) -> tuple[str, DeploymentRecord, LiveGuild]:
    """The deployment to undo and its guild as it is: else 403, 404, 409 (busy, a later deployment in the way, or
    its snapshot gone)."""
    if project_id is None and deployment_id is None:
        raise BadRequest(
            "Name what to roll back: `project_id` (its newest deployment) or `deployment_id`.",
            details=[FieldError(field="project_id", message="required without deployment_id")],
        )
    repository = deployment_repository()
    if deployment_id is not None:
        target = repository.find(deployment_id, user.sub)
        if target is None or project_id not in (None, target.project_id) or guild_id not in (None, target.guild_id):
            raise NoDeployment(f"Nothing to roll back: no deployment {deployment_id} by you (of that project, there).")
    else:
        target = repository.newest(user.sub, project_id or "", guild_id=guild_id, kind="deploy") or repository.newest(
            user.sub, project_id or "", guild_id=guild_id, kind="restore"
        )
    guild = guild_id or (target.guild_id if target else None)
    if guild is None:
        raise NoDeployment("Nothing to roll back: no deployment of this project by you.")
    chat_user_id, _ = managed_guild(user, guild)  # 403 before anything about the project is told
    return chat_user_id, *rollbackable(target, guild, by_id=deployment_id is not None, dry_run=dry_run)


def rollbackable(
    target: DeploymentRecord | None, guild_id: str, *, by_id: bool, dry_run: bool = False
) -> tuple[DeploymentRecord, LiveGuild]:
    """`target` and its guild as it is, when it may be rolled back now: else 404 (nothing to roll back), 409 (the
    guild busy, never for a dry run; a later deployment in the way, when named `by_id`; its snapshot gone)."""
    repository = deployment_repository()
    holder = repository.lock_holder(guild_id, int(utc_now().timestamp()))
    if holder is not None and not dry_run:
        raise GuildIsBusy.held_by(holder)  # named, whether or not it is the one to roll back; never a dry run
    if target is None or target.kind == "rollback" or not target.finished or target.rolled_back_by:
        raise NoDeployment("Nothing to roll back: no finished, not yet rolled back deployment of this project here.")
    if not target.backup_id:
        raise NoDeployment(f"Nothing to roll back: deployment {target.deployment_id} wrote nothing.")
    if by_id:
        _require_nothing_later(repository.later(target), target)
    if not archive.backup_exists(target.backup_id):
        raise SnapshotGone(
            f"Deployment {target.deployment_id} can no longer be rolled back: its snapshot of the server "
            f"({target.backup_id}) is gone.",
            deployment_id=target.deployment_id,
        )
    return target, _live_guild(target.guild_id, None)


def _require_nothing_later(later: list[DeploymentRecord], target: DeploymentRecord) -> None:
    """A deployment is rolled back alone only if no later one of the project on that guild (rollbacks aside),
    not itself rolled back, touched one of its objects: else 409 naming the later one."""
    mine = touched(target)
    for other in reversed(later):  # the oldest in the way first: the one to roll back next
        if other.kind == "rollback" or other.rolled_back_by:
            continue
        if touched(other) & mine:
            raise LaterDeploymentInTheWay(
                f"Deployment {other.deployment_id}, made after {target.deployment_id}, changed some of the same "
                f"objects: roll it back first (`rollback` with its deployment_id).",
                deployment_id=other.deployment_id,
            )


def touched(record: DeploymentRecord) -> set[str]:
    """The ids of every object a deployment created, updated, moved or deleted (the guild's own for its settings)."""
    ids = {*record.journal_created.values(), *record.journal_deleted.values()}
    for entry in record.journal_updated.values():
        positions = (entry.get("previous") or {}).get("positions")
        if isinstance(positions, dict):  # a bulk reorder: the objects it moved, not the guild
            ids.update(positions)
        else:
            ids.add(str(entry["id"]))
    return ids


def info(user: BearerUser, project_id: str, guild_id: str | None, deployment_id: str | None = None) -> DeploymentView:
    """The caller's deployment `deployment_id` of the project, or their newest (to `guild_id`, when given), with the
    project's history: their newest 20 deployments of it, newest first."""
    repository = deployment_repository()
    history = repository.history(user.sub, project_id, guild_id=guild_id)
    if deployment_id is not None:
        record = repository.get(user.sub, project_id, deployment_id)
        if record is not None and guild_id not in (None, record.guild_id):
            record = None
    else:
        record = history[0] if history else None
    if record is None:
        raise NoDeployment(f"No deployment {deployment_id} of this project by you." if deployment_id else None)
    entries = [HistoryEntry.of(other) for other in history]
    if record.kind == "deploy" or record.deployment_code:
        return view(record, history=entries)
    # A rollback carries no code of its own: the project's code is its newest deploy's.
    newest_deploy = repository.newest(user.sub, project_id, guild_id=guild_id, kind="deploy")
    return view(record, deployment_code=newest_deploy.deployment_code if newest_deploy else None, history=entries)
