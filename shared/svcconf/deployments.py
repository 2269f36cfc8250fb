"""Deployments: a user's server configuration becomes a real guild, reversibly.

The request side (deployToChat) checks who may deploy where, reads the live guild, plans, runs the preflight,
and either answers the dry run or queues the deployment under the guild's lock with a deployment code. The
worker side (`run_job`) snapshots the guild before its first write, applies the plan step by step with a
checkpoint after each, re-queues the rest when its time runs low or the platform asks to wait, and ends
`succeeded`, `partial` or `failed`. A wait longer than SQS can delay (the platform's creation quota: hours) makes
the deployment `waiting` until `resumes_at`, when an EventBridge Scheduler one-time schedule queues it again.
A rollback is a deployment of its own kind that undoes the newest one.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field

from svcconf import backups, codes, creation_quota
from svcconf.auth import BearerUser
from svcconf.chat import ChatError, ChatRateLimited, ChatUnavailable, UnknownGuild, get_chat_client
from svcconf.chat_accounts import managed_guild
from svcconf.clock import utc_now
from svcconf.config import ServerConfig, to_bitfield
from svcconf.config.lint import LintWarning, lint_config
from svcconf.creation_quota import QuotaWarning
from svcconf.deploy.apply import (
    DeploymentAborted,
    DeploymentInterrupted,
    PlanApplier,
    StepOutcome,
    UpdatedObject,
)
from svcconf.deploy.live import LiveGuild, read_live_guild
from svcconf.deploy.plan import DeploymentPlan, PlanItem, plan_deployment
from svcconf.deploy.preflight import preflight_problems
from svcconf.deploy.rollback import GuildSnapshot, channel_state, plan_rollback, role_state
from svcconf.deploy.steps import KIND_GROUPS
from svcconf.errors import Conflict, NotFound, ServiceUnavailable
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store import queues, schedules
from svcconf.store.deployments import (
    DeploymentKind,
    DeploymentRecord,
    DeploymentRepository,
    DeploymentStatus,
    GuildBusy,
    KindCounts,
    Progress,
    StepError,
    Steps,
)

# The permissions a bot needs to deploy at all; an install link asks for these and what the configuration grants.
DEPLOY_BOT_PERMISSIONS = ["VIEW_CHANNEL", "MANAGE_CHANNELS", "MANAGE_ROLES"]
LOCK_SECONDS = 2 * 3600  # a lost worker frees its guild after this
MAX_INTERRUPTIONS = 20  # re-queued this often for the platform's sake: give up with what is done


class GuildIsBusy(Conflict):
    default_message = "Another deployment or rollback to this server is still running; try again when it ends."

    @classmethod
    def held_by(cls, holder: DeploymentRecord | None) -> GuildIsBusy:
        if holder is None or holder.status != "waiting" or holder.resumes_at is None:
            return cls()
        return cls(
            f"Deployment {holder.deployment_id} to this server is waiting for the chat platform and resumes at "
            f"{holder.resumes_at.isoformat(timespec='seconds')}; try again when it ends."
        )


class BotNotInGuild(Conflict):
    default_message = "The service's bot is not in this server: install it with install_url, then deploy again."


class PreflightFailed(Conflict):
    default_message = "The deployment cannot work in this server as it is."


class NoDeployment(NotFound):
    default_message = "No deployment of this project by you was found."


class Generation(BaseModel):
    """The deployment as the specification's generation record describes it."""

    project_id: str
    project_name: str
    guild_id: str
    guild_name: str
    status: DeploymentStatus
    result: str | None = None
    error: str | None = None
    steps: Steps


class DeploymentView(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)  # every field is sent

    ok: bool = True
    deployment_id: str
    kind: DeploymentKind
    status: DeploymentStatus
    steps: Steps
    generation: Generation
    backup_id: str | None = None
    deployment_code: str | None = None
    rollback_of: str | None = None
    created_at: datetime
    finished_at: datetime | None = None
    resumes_at: datetime | None = Field(None, description="While `waiting`: when the deployment goes on by itself.")
    wait_reason: str | None = Field(None, description="While `waiting`: why.")
    warnings: list[QuotaWarning] = Field(default_factory=list, description="deploy: the plan passes the quota.")


class DryRun(BaseModel):
    # Every field is sent, so openapi.json marks them required; `status` tells a plan from a DeploymentView.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    ok: bool = True
    status: Literal["planned"] = Field("planned", description="A dry run changes nothing: it is only a plan.")
    steps: Steps
    plan: list[PlanItem]
    warnings: list[QuotaWarning | LintWarning]


class DeployJob(BaseModel):
    """The queue's message: which deployment to run (or resume), and how often it was interrupted."""

    user_id: str
    project_id: str
    deployment_id: str
    interruptions: int = 0
    wake_at: datetime | None = None  # the schedule's delivery for a deployment waiting until then


def _repository() -> DeploymentRepository:
    return DeploymentRepository(get_settings().deployments_table)


def new_deployment_id() -> str:
    # Millisecond time first, in fixed-width hex, so a project's deployments sort by creation time.
    return f"dp_{int(utc_now().timestamp() * 1000):012x}{secrets.token_hex(4)}"


# ---------------------------------------------------------------- the request side


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


def _checked_plan(user: BearerUser, guild_id: str, config: ServerConfig) -> tuple[str, LiveGuild, DeploymentPlan]:
    """Who may deploy here, the live guild, and a plan the platform will accept: else 403, 409."""
    chat_user_id, _ = managed_guild(user, guild_id)
    live = _live_guild(guild_id, config)
    plan = plan_deployment(live, config)
    problems = preflight_problems(live, plan)
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        raise PreflightFailed(
            f"The deployment cannot work in this server as it is: {len(problems)} {noun}.", details=problems
        )
    return chat_user_id, live, plan


def planned_steps(plan: DeploymentPlan) -> Steps:
    steps = Steps()
    for item in plan.items:
        counts: KindCounts = getattr(steps, KIND_GROUPS[item.kind])
        if item.action == "keep":
            counts.existing += 1
        else:
            counts.planned += 1
    return steps


def dry_run(user: BearerUser, guild_id: str, config: ServerConfig) -> DryRun:
    _, _, plan = _checked_plan(user, guild_id, config)
    quota = creation_quota.quota_warnings(guild_id, plan, utc_now())
    return DryRun(steps=planned_steps(plan), plan=plan.items, warnings=[*quota, *lint_config(config)])


def deploy(user: BearerUser, guild_id: str, project_id: str, project_name: str, config: ServerConfig) -> DeploymentView:
    chat_user_id, live, plan = _checked_plan(user, guild_id, config)
    record = _new_record(
        "deploy",
        user,
        chat_user_id,
        project_id,
        project_name,
        live,
        steps=planned_steps(plan),
        # What the user stated, not the schema's defaults: an omitted attribute must stay omitted.
        configuration=config.model_dump(mode="json", exclude_unset=True),
    )
    warnings = creation_quota.quota_warnings(guild_id, plan, record.created_at)
    _queue(record, mint_for=config)
    metrics.add_metric(name="DeploymentQueued", unit="Count", value=1)
    return view(record).model_copy(update={"warnings": warnings})


def rollback(user: BearerUser, project_id: str, guild_id: str) -> DeploymentView:
    chat_user_id, _ = managed_guild(user, guild_id)
    holder = _repository().lock_holder(guild_id, int(utc_now().timestamp()))
    if holder is not None and holder.status == "waiting":
        raise GuildIsBusy.held_by(holder)  # named with its time, whether or not it is the one to roll back
    target = _repository().newest(user.sub, project_id, guild_id=guild_id, kind="deploy")
    if target is None or not target.finished or target.rolled_back_by or not target.backup_id:
        raise NoDeployment("Nothing to roll back: no finished, not yet rolled back deployment of this project here.")
    live = _live_guild(guild_id, None)
    record = _new_record(
        "rollback",
        user,
        chat_user_id,
        project_id,
        target.project_name,
        live,
        backup_id=target.backup_id,
        rollback_of=target.deployment_id,
    )
    _queue(record)
    metrics.add_metric(name="RollbackQueued", unit="Count", value=1)
    return view(record)


def _new_record(
    kind: DeploymentKind,
    user: BearerUser,
    chat_user_id: str,
    project_id: str,
    project_name: str,
    live: LiveGuild,
    **details: Any,
) -> DeploymentRecord:
    now = utc_now()
    return DeploymentRecord(
        deployment_id=new_deployment_id(),
        kind=kind,
        user_id=user.sub,
        chat_user_id=chat_user_id,
        project_id=project_id,
        project_name=project_name,
        guild_id=live.id,
        guild_name=live.name,
        bot_role_ids=live.bot_role_ids,
        status="queued",
        created_at=now,
        updated_at=now,
        **details,
    )


def _queue(record: DeploymentRecord, *, mint_for: ServerConfig | None = None) -> None:
    """Takes the guild's lock with the queued record, mints the project's code for a deploy, sends the job."""
    settings = get_settings()
    if not settings.deploy_queue_url:
        logger.error("the deploy queue is not configured (DEPLOY_QUEUE_URL)")
        raise ServiceUnavailable("Deployments are not configured.")
    repository = _repository()
    now = int(record.created_at.timestamp())
    try:
        repository.start(record, lock_expiration=now + LOCK_SECONDS, now=now)
    except GuildBusy as busy:
        raise GuildIsBusy.held_by(repository.lock_holder(record.guild_id, now)) from busy
    try:
        if mint_for is not None:
            code = codes.mint_code(
                record.project_id,
                record.project_name,
                mint_for.model_dump(mode="json"),
                chat_user_id=record.chat_user_id,
            )
            repository.set_code(record, code.code, utc_now())
            record.deployment_code = code.code
        queues.send(settings.deploy_queue_url, _job(record).model_dump(mode="json"))
    except Exception:
        # Not queued means never run: release the guild at once rather than after the lock's expiry.
        repository.finish(record, "failed", "Not started.", "The deployment could not be queued.", utc_now())
        raise


def _job(record: DeploymentRecord, interruptions: int = 0) -> DeployJob:
    return DeployJob(
        user_id=record.user_id,
        project_id=record.project_id,
        deployment_id=record.deployment_id,
        interruptions=interruptions,
    )


def info(user: BearerUser, project_id: str, guild_id: str | None) -> DeploymentView:
    record = _repository().newest(user.sub, project_id, guild_id=guild_id)
    if record is None:
        raise NoDeployment()
    if record.kind == "deploy" or record.deployment_code:
        return view(record)
    # A rollback carries no code of its own: the project's code is its newest deploy's.
    newest_deploy = _repository().newest(user.sub, project_id, guild_id=guild_id, kind="deploy")
    return view(record, deployment_code=newest_deploy.deployment_code if newest_deploy else None)


def view(record: DeploymentRecord, deployment_code: str | None = None) -> DeploymentView:
    generation = Generation(
        project_id=record.project_id,
        project_name=record.project_name,
        guild_id=record.guild_id,
        guild_name=record.guild_name,
        status=record.status,
        result=record.result,
        error=record.error,
        steps=record.steps,
    )
    return DeploymentView(
        deployment_id=record.deployment_id,
        kind=record.kind,
        status=record.status,
        steps=record.steps,
        generation=generation,
        backup_id=record.backup_id,
        deployment_code=record.deployment_code or deployment_code,
        rollback_of=record.rollback_of,
        created_at=record.created_at,
        finished_at=record.finished_at,
        resumes_at=record.resumes_at,
        wait_reason=record.wait_reason,
    )


# ---------------------------------------------------------------- the worker side


def run_job(job: DeployJob, seconds_left: Callable[[], float]) -> None:
    """Runs (or resumes) one deployment while the invocation has more than its margin of time left."""
    repository = _repository()
    margin = get_settings().deploy_margin_seconds
    record = repository.get(job.user_id, job.project_id, job.deployment_id)
    if record is None or record.finished:
        logger.info("nothing to run", extra={"deployment_id": job.deployment_id, "found": record is not None})
        return
    logger.append_keys(deployment_id=record.deployment_id, guild_id=record.guild_id, kind=record.kind)
    client = get_chat_client()
    if record.status == "waiting":
        # Only the schedule's delivery resumes it: a re-delivered older message would start a second run.
        if job.wake_at is None or job.wake_at != record.resumes_at:
            logger.info("waiting until resumes_at: not this delivery's turn", extra={"resumes_at": record.resumes_at})
            return
        client.forget_guild_buckets(record.guild_id)  # waited out on the schedule's clock, not the limiter's
    repository.extend_lock(record, int(utc_now().timestamp()) + LOCK_SECONDS)
    try:
        live = read_live_guild(client, record.guild_id, record.bot_role_ids or None)
        plan, target = _worker_plan(repository, record, live)
        repository.mark_running(record, steps=None if record.counted else planned_steps(plan), now=utc_now())
        if record.counted and record.kind == "deploy":
            _adopt_unrecorded(repository, record, live, plan)
        applier = PlanApplier(client, record.guild_id, plan, audit_reason=f"svc {record.kind} {record.deployment_id}")

        def checkpoint(outcome: StepOutcome) -> None:
            repository.record_progress(record, _progress(outcome), utc_now())
            creation_quota.record_creations(record.guild_id, plan, outcome, utc_now())

        finished = applier.run(
            skip=set(record.journal_failed), checkpoint=checkpoint, has_time=lambda: seconds_left() > margin
        )
    except (DeploymentInterrupted, ChatRateLimited, ChatUnavailable) as pause:
        creation_quota.remember_buckets(client, record.guild_id, utc_now())
        _requeue(record, job, pause)
        return
    except (DeploymentAborted, ChatError) as fatal:
        _finish(repository, record, error=getattr(fatal, "reason", None) or str(fatal))
        return
    creation_quota.remember_buckets(client, record.guild_id, utc_now())
    if not finished:
        logger.info("time is running low: the rest goes to the next invocation")
        queues.send(get_settings().deploy_queue_url or "", _job(record, job.interruptions).model_dump(mode="json"))
        return
    _finish(repository, record, error=None)
    if target is not None:
        repository.mark_rolled_back(target, record.deployment_id, utc_now())


def abandon(job: DeployJob, reason: str) -> None:
    """The job's last delivery failed unexpectedly: the deployment ends, and its guild is free again."""
    repository = _repository()
    record = repository.get(job.user_id, job.project_id, job.deployment_id)
    if record is not None and not record.finished:
        _finish(repository, record, error=reason)


def _worker_plan(
    repository: DeploymentRepository, record: DeploymentRecord, live: LiveGuild
) -> tuple[DeploymentPlan, DeploymentRecord | None]:
    if record.kind == "deploy":
        if record.backup_id is None:
            snapshot = GuildSnapshot.of(live, utc_now())
            backup = backups.create_backup(
                live.id,
                snapshot.backup_data(record.deployment_id),
                guild_name=live.name,
                label=f"Before deployment {record.deployment_id}",
            )
            repository.set_backup(record, backup.backup_id, utc_now())
            record.backup_id = backup.backup_id
        return plan_deployment(live, ServerConfig.model_validate(record.configuration or {})), None
    target = repository.get(record.user_id, record.project_id, record.rollback_of or "")
    if target is None or record.backup_id is None:
        raise DeploymentAborted("The deployment to roll back is gone.")
    snapshot = GuildSnapshot.from_backup_data(backups.get_backup(record.backup_id).backup_data)
    updated = {key: entry["id"] for key, entry in target.journal_updated.items()}
    return plan_rollback(live, snapshot, target.journal_created, updated), target


def _adopt_unrecorded(
    repository: DeploymentRepository, record: DeploymentRecord, live: LiveGuild, plan: DeploymentPlan
) -> None:
    """A run killed between a platform write and its checkpoint left one object its journal does not know. The
    snapshot taken before the first write tells: an object the plan matches that was not there was created;
    one that was there with other attributes was updated."""
    before = GuildSnapshot.from_backup_data(backups.get_backup(record.backup_id or "").backup_data)
    states_before = {r.id: role_state(r) for r in before.roles} | {c.id: channel_state(c) for c in before.channels}
    states_now = {r.id: role_state(r) for r in live.roles} | {c.id: channel_state(c) for c in live.channels}
    outcome = StepOutcome(key="adopted")
    for item in plan.items:
        if item.kind == "settings":  # the guild itself: changed since the snapshot means the lost run's PATCH
            changed = before.settings is not None and before.settings != live.settings
            if item.action == "keep" and changed and item.key not in record.journal_updated:
                outcome.updated[item.key] = UpdatedObject(id=live.id, kind="settings", previous={})
                outcome.count("settings", "updated")
            continue
        object_id = plan.ids.get(item.key)
        if item.action != "keep" or item.kind == "overwrite" or object_id is None:
            continue
        if object_id not in states_before:
            if item.key in record.journal_created:
                continue
            outcome.created[item.key] = object_id
            outcome.count(item.kind, "created")
            owned = sum(1 for other in plan.items if other.kind == "overwrite" and other.owner == item.key)
            outcome.count("overwrite", "created", owned)
        elif item.key not in record.journal_updated and states_before[object_id] != states_now[object_id]:
            outcome.updated[item.key] = UpdatedObject(id=object_id, kind=item.kind, previous={})
            outcome.count(item.kind, "updated")
    if outcome.created or outcome.updated:
        logger.info("objects changed by a run that was cut short", extra={"objects": sorted(outcome.created)})
        repository.record_progress(record, _progress(outcome), utc_now())


def _progress(outcome: StepOutcome) -> Progress:
    return Progress(
        created=outcome.created,
        updated={key: entry.model_dump() for key, entry in outcome.updated.items()},
        failed=outcome.failed,
        counts=outcome.counts,
        errors=[StepError(**error.model_dump()) for error in outcome.errors],
    )


def _requeue(record: DeploymentRecord, job: DeployJob, pause: Exception) -> None:
    reason = getattr(pause, "reason", None) or str(pause)
    if job.interruptions >= MAX_INTERRUPTIONS:
        _finish(_repository(), record, error=f"The chat platform kept refusing for too long: {reason}")
        return
    wait = math.ceil(getattr(pause, "retry_after", None) or 0)
    if wait > queues.MAX_DELAY_SECONDS:
        _wait(record, job, wait, pause)
        return
    logger.warning("the chat platform asks to wait: re-queued", extra={"retry_after": wait, "reason": reason})
    next_job = _job(record, job.interruptions + 1)
    queues.send(get_settings().deploy_queue_url or "", next_job.model_dump(mode="json"), delay_seconds=max(wait, 1))


def _wait(record: DeploymentRecord, job: DeployJob, wait: int, pause: Exception) -> None:
    """Longer than SQS can delay: the deployment waits, keeps its guild, and a one-time schedule wakes it."""
    settings = get_settings()
    if not settings.deploy_queue_arn or not settings.deploy_scheduler_role_arn:
        raise ServiceUnavailable("Waiting deployments need DEPLOY_QUEUE_ARN and DEPLOY_SCHEDULER_ROLE_ARN.")
    now = utc_now()
    resumes_at = (now + timedelta(seconds=wait)).replace(microsecond=0) + timedelta(seconds=1)
    reason = creation_quota.wait_reason(getattr(pause.__cause__, "route", None), resumes_at)
    repository = _repository()
    repository.extend_lock(record, int(resumes_at.timestamp()) + LOCK_SECONDS)
    wake = _job(record, job.interruptions + 1).model_copy(update={"wake_at": resumes_at})
    schedules.send_later(
        f"{record.deployment_id}-{int(resumes_at.timestamp())}",
        resumes_at,
        queue_arn=settings.deploy_queue_arn,
        role_arn=settings.deploy_scheduler_role_arn,
        body=wake.model_dump(mode="json"),
        group=settings.deploy_schedule_group,
    )
    repository.mark_waiting(record, resumes_at, reason, now)
    metrics.add_metric(name="DeploymentWaiting", unit="Count", value=1)
    logger.warning("the chat platform asks to wait for hours: waiting", extra={"resumes_at": resumes_at.isoformat()})


def _finish(repository: DeploymentRepository, record: DeploymentRecord, *, error: str | None) -> None:
    steps = (repository.get(record.user_id, record.project_id, record.deployment_id) or record).steps
    failed = steps.total("failed")
    changed = steps.total("created") + steps.total("updated") + steps.total("deleted")
    status: DeploymentStatus
    if error is not None:
        status = "partial" if changed else "failed"
    else:
        status = "succeeded" if not failed else ("partial" if changed else "failed")
    if failed and error is None:
        error = f"{failed} object(s) failed: see steps.errors."
    repository.finish(record, status, summary(record.kind, steps), error, utc_now())
    metrics.add_metric(name=f"Deployment{status.capitalize()}", unit="Count", value=1)
    logger.info("deployment finished", extra={"status": status, "changed": changed, "failed": failed})


def summary(kind: DeploymentKind, steps: Steps) -> str:
    """One sentence a person can read: what was created, updated, deleted and failed, per kind."""

    def part(counter: str) -> str:
        counts = [(group, getattr(getattr(steps, group), counter)) for group in KIND_GROUPS.values()]
        return ", ".join(f"{n} {group}" for group, n in counts if n) or "nothing"

    verbs = ("deleted", "updated") if kind == "rollback" else ("created", "updated")
    sentence = (
        f"{verbs[0].capitalize()} {part(verbs[0])}; {'restored' if kind == 'rollback' else 'updated'} {part(verbs[1])}"
    )
    failed = steps.total("failed")
    return f"{sentence}; {failed} failed." if failed else f"{sentence}."
