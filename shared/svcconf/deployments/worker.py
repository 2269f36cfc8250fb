"""The worker side of a deployment (deployWorker): run, resume, wait and finish.

`run_job` snapshots the guild before its first write, applies the plan step by step with a checkpoint after each,
re-queues the rest when its time runs low or the platform asks to wait, and ends `succeeded`, `partial` or
`failed`. A wait longer than SQS can delay (the platform's creation quota: hours) makes the deployment `waiting`
until `resumes_at`, when an EventBridge Scheduler one-time schedule queues it again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta

from svcconf import backups, caller_rights
from svcconf.chat import ChatError, ChatRateLimited, ChatUnavailable, get_chat_client
from svcconf.clock import utc_now
from svcconf.config import ServerConfig
from svcconf.deploy_engine.apply import (
    DeploymentAborted,
    DeploymentInterrupted,
    PlanApplier,
    StepOutcome,
    UpdatedObject,
)
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.plan import DeploymentPlan, plan_deployment
from svcconf.deploy_engine.rollback import GuildSnapshot, channel_state, role_state
from svcconf.deploy_engine.steps import KIND_GROUPS
from svcconf.deployments import quota as creation_quota
from svcconf.deployments.common import (
    LOCK_SECONDS,
    DeployJob,
    deployment_repository,
    job_of,
    planned_steps,
    rollback_plan,
)
from svcconf.errors import ServiceUnavailable
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store import queues, schedules
from svcconf.store.deployment_records import (
    DeploymentKind,
    DeploymentRecord,
    DeploymentRepository,
    DeploymentStatus,
    Progress,
    StepError,
    Steps,
)

MAX_INTERRUPTIONS = 20  # re-queued this often for the platform's sake: give up with what is done


def run_job(job: DeployJob, seconds_left: Callable[[], float]) -> None:
    """Runs (or resumes) one deployment while the invocation has more than its margin of time left."""
    repository = deployment_repository()
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
        plan, target = caller_rights.plan_as_caller(
            client, record.chat_user_id, live, lambda view: _worker_plan(repository, record, view)
        )
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
        queues.send(get_settings().deploy_queue_url or "", job_of(record, job.interruptions).model_dump(mode="json"))
        return
    _finish(repository, record, error=None)
    if target is not None:
        repository.mark_rolled_back(target, record.deployment_id, utc_now())


def abandon(job: DeployJob, reason: str) -> None:
    """The job's last delivery failed unexpectedly: the deployment ends, and its guild is free again."""
    repository = deployment_repository()
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
        # A pruning deploy deletes only what its confirmed plan listed: what someone made since is kept.
        config = ServerConfig.model_validate(record.configuration or {})
        prune = record.confirmed_deletes is not None
        return plan_deployment(live, config, prune=prune, confirmed_deletes=record.confirmed_deletes), None
    target = repository.get(record.user_id, record.project_id, record.rollback_of or "")
    if target is None or record.backup_id is None:
        raise DeploymentAborted("The deployment to roll back is gone.")
    return rollback_plan(live, target, record.backup_id), target


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
        deleted=outcome.deleted,
        failed=outcome.failed,
        counts=outcome.counts,
        errors=[StepError(**error.model_dump()) for error in outcome.errors],
    )


def _requeue(record: DeploymentRecord, job: DeployJob, pause: Exception) -> None:
    reason = getattr(pause, "reason", None) or str(pause)
    if job.interruptions >= MAX_INTERRUPTIONS:
        _finish(deployment_repository(), record, error=f"The chat platform kept refusing for too long: {reason}")
        return
    wait = math.ceil(getattr(pause, "retry_after", None) or 0)
    if wait > queues.MAX_DELAY_SECONDS:
        _wait(record, job, wait, pause)
        return
    logger.warning("the chat platform asks to wait: re-queued", extra={"retry_after": wait, "reason": reason})
    next_job = job_of(record, job.interruptions + 1)
    queues.send(get_settings().deploy_queue_url or "", next_job.model_dump(mode="json"), delay_seconds=max(wait, 1))


def _wait(record: DeploymentRecord, job: DeployJob, wait: int, pause: Exception) -> None:
    """Longer than SQS can delay: the deployment waits, keeps its guild, and a one-time schedule wakes it."""
    settings = get_settings()
    if not settings.deploy_queue_arn or not settings.deploy_scheduler_role_arn:
        raise ServiceUnavailable("Waiting deployments need DEPLOY_QUEUE_ARN and DEPLOY_SCHEDULER_ROLE_ARN.")
    now = utc_now()
    resumes_at = (now + timedelta(seconds=wait)).replace(microsecond=0) + timedelta(seconds=1)
    reason = creation_quota.wait_reason(getattr(pause.__cause__, "route", None), resumes_at)
    repository = deployment_repository()
    repository.extend_lock(record, int(resumes_at.timestamp()) + LOCK_SECONDS)
    wake = job_of(record, job.interruptions + 1).model_copy(update={"wake_at": resumes_at})
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
        error = f"{failed} {'object' if failed == 1 else 'objects'} failed: see steps.errors."
    repository.finish(record, status, summary(record.kind, steps), error, utc_now())
    metrics.add_metric(name=f"Deployment{status.capitalize()}", unit="Count", value=1)
    logger.info("deployment finished", extra={"status": status, "changed": changed, "failed": failed})


_SINGULAR = {group: kind for kind, group in KIND_GROUPS.items()}  # "roles" -> "role"; "settings" stays


def summary(kind: DeploymentKind, steps: Steps) -> str:
    """One sentence a person can read: what was created, updated, deleted and failed, per kind."""

    def part(counter: str) -> str:
        counts = [(group, getattr(getattr(steps, group), counter)) for group in KIND_GROUPS.values()]
        return ", ".join(f"{n} {_SINGULAR[group] if n == 1 else group}" for group, n in counts if n) or "nothing"

    verbs = ("deleted", "updated") if kind == "rollback" else ("created", "updated")
    sentence = (
        f"{verbs[0].capitalize()} {part(verbs[0])}; {'restored' if kind == 'rollback' else 'updated'} {part(verbs[1])}"
    )
    if kind == "deploy" and steps.total("deleted"):  # a pruning deploy
        sentence += f"; deleted {part('deleted')}"
    failed = steps.total("failed")
    return f"{sentence}; {failed} failed." if failed else f"{sentence}."
