"""The worker side of a deployment (deployWorker): run, resume, wait and finish.

`run_job` snapshots the guild before its first write, applies the plan's steps side by side across the platform's
buckets (`deploy_engine/scheduler.py`), journaled as they go (`run_journal.py`), re-queues the rest when its time
runs low or the platform asks to wait, and ends `succeeded`, `partial` or `failed`. A wait longer than SQS can delay
(the platform's creation quota: hours) makes the deployment `waiting` until `resumes_at`, when an EventBridge
Scheduler one-time schedule queues it again. A deployment cancelled (`cancel.py`) starts no more steps: the intent
before each write and the checkpoint after each step tell it, what it wrote is journaled, and its guild is freed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from svcconf import caller_rights
from svcconf.backups import archive
from svcconf.chat import Channel, ChatError, ChatRateLimited, ChatUnavailable, Role, get_chat_client
from svcconf.clock import utc_now
from svcconf.config import ServerConfig
from svcconf.deploy_engine.apply import (
    DeploymentAborted,
    DeploymentInterrupted,
    ItemError,
    PlanApplier,
    StepOutcome,
    UpdatedObject,
)
from svcconf.deploy_engine.journal import fingerprint, fingerprint_of, guild_fields, made_by_the_write
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.scheduler import AwaitedIds
from svcconf.deploy_engine.snapshot import GuildSnapshot, channel_state, role_state
from svcconf.deploy_engine.steps import KIND_GROUPS, DeploymentPlan
from svcconf.deployments import quota as creation_quota
from svcconf.deployments import restore, restore_members, restore_parts
from svcconf.deployments.common import (
    LOCK_SECONDS,
    DeployJob,
    deployment_repository,
    job_of,
    planned_steps,
    rollback_plan,
)
from svcconf.deployments.ids import translated
from svcconf.deployments.run_journal import RunJournal, progress_of
from svcconf.errors import BackupNotFound, ServiceUnavailable
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store import queues, schedules, write_intents
from svcconf.store.deployment_items import (
    DeploymentKind,
    DeploymentRecord,
    DeploymentStatus,
    Progress,
    StepError,
    Steps,
)
from svcconf.store.deployment_records import DeploymentCancelled, DeploymentRepository

MAX_INTERRUPTIONS = 20  # re-queued this often for the platform's sake: give up with what is done


def run_job(job: DeployJob, seconds_left: Callable[[], float]) -> None:
    """Runs (or resumes) one deployment while the invocation has more than its margin of time left."""
    repository = deployment_repository()
    margin = get_settings().deploy_margin_seconds
    record = repository.get(job.user_id, job.project_id, job.deployment_id)
    if record is None or record.finished:
        logger.info("nothing to run", extra={"deployment_id": job.deployment_id, "found": record is not None})
        if record is not None and record.status == "cancelled":
            repository.release(record)  # a cancelled running one's lock, if a delivery comes before its expiry
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
        plan, (target, left) = caller_rights.plan_as_caller(
            client, record.chat_user_id, live, lambda view: _worker_plan(repository, record, view)
        )
        first_run = not record.counted
        repository.mark_running(record, steps=planned_steps(plan) if first_run else None, now=utc_now())
        # What the rollback leaves as it is, and the confirmed deletions a deploy keeps (changed since), named once.
        named = [StepError(**e.model_dump()) for e in left if StepError(**e.model_dump()) not in record.steps.errors]
        if named and (first_run or record.kind in ("deploy", "restore")):
            repository.record_progress(record, Progress(errors=named), utc_now())
        if not first_run and record.kind in ("deploy", "restore"):
            _adopt_unrecorded(repository, record, live, plan)
        applier = PlanApplier(client, record.guild_id, plan, audit_reason=f"svc {record.kind} {record.deployment_id}")

        journal = RunJournal(repository, record, plan)

        def members_back(ids: AwaitedIds, going: Callable[[], bool]) -> bool:
            """Beside the steps: members get their roles back, each grant once the role it names is made."""
            return restore_members.restore_members(client, record, ids, going, journal.save_members)

        finished = applier.run(
            skip=set(record.journal_failed),
            checkpoint=journal.checkpoint,
            has_time=lambda: seconds_left() > margin,
            intend=journal.intend,
            beside=members_back if record.kind == "restore" else None,
        )
        logger.info("steps journaled", extra={"journal_updates": journal.writes})
        if finished and target is not None and target.kind == "restore":  # and its rollback takes them back
            finished = restore_members.take_back_grants(client, record, target, lambda: seconds_left() > margin)
    except (DeploymentInterrupted, ChatRateLimited, ChatUnavailable) as pause:
        creation_quota.remember_buckets(client, record.guild_id, utc_now())
        _requeue(record, job, pause)
        return
    except (DeploymentAborted, ChatError) as fatal:
        _finish(repository, record, error=getattr(fatal, "reason", None) or str(fatal))
        return
    except DeploymentCancelled:
        _stop_cancelled(repository, record)
        return
    creation_quota.remember_buckets(client, record.guild_id, utc_now())
    if not finished:
        logger.info("time is running low: the rest goes to the next invocation")
        queues.send(get_settings().deploy_queue_url or "", job_of(record, job.interruptions).model_dump(mode="json"))
        return
    if _finish(repository, record, error=None) and target is not None:
        repository.mark_rolled_back(target, record.deployment_id, utc_now())


def abandon(job: DeployJob, reason: str) -> None:
    """The job's last delivery failed unexpectedly: the deployment ends, and its guild is free again."""
    repository = deployment_repository()
    record = repository.get(job.user_id, job.project_id, job.deployment_id)
    if record is not None and not record.finished:
        _finish(repository, record, error=reason)


def _worker_plan(
    repository: DeploymentRepository, record: DeploymentRecord, live: LiveGuild
) -> tuple[DeploymentPlan, tuple[DeploymentRecord | None, list[ItemError]]]:
    if record.kind in ("deploy", "restore"):
        if record.backup_id is None:
            snapshot = GuildSnapshot.of(live, utc_now())
            backup = archive.create_deployment_snapshot(
                live.id,
                snapshot.backup_data(record.deployment_id),
                guild_name=live.name,
                label=f"Before deployment {record.deployment_id}",
            )
            repository.set_backup(record, backup.backup_id, utc_now())
            record.backup_id = backup.backup_id
        # A pruning deploy deletes only what its confirmed plan listed: what someone made since is kept.
        # The configuration was validated when it was queued, perhaps by the next release (a canary, or before a
        # rollback): a field this release does not know is left out of the plan instead of failing the deployment
        # into the dead-letter queue (docs/11-production.md, "Stored items across releases").
        config = ServerConfig.model_validate(record.configuration or {}, extra="ignore")
        prune = record.confirmed_deletes is not None
        if record.restore is not None:  # the backup's configuration, kept to the parts asked for
            plan = restore_parts.restore_plan(
                live, config, record.restore, prune=prune, confirmed_deletes=record.confirmed_deletes
            )
            return plan, (None, [])
        config = translated(config, live)  # ids the guild no longer has, as a restore or rollback made them again
        plan = plan_deployment(
            live,
            config,
            prune=prune,
            confirmed_deletes=record.confirmed_deletes,
            confirmed_fingerprints=record.confirmed_fingerprints,
        )
        kept = [ItemError(kind=item.kind, name=item.name, message=item.note or "kept") for item in plan.kept]
        return plan, (None, kept)
    target = repository.get(record.user_id, record.project_id, record.rollback_of or "")
    if target is None or record.backup_id is None:
        raise DeploymentAborted("The deployment to roll back is gone.")
    try:
        rollback = rollback_plan(live, target, record.backup_id, done=record.journal_created)
    except BackupNotFound as gone:  # pruned since the request: end now, and free the guild
        raise DeploymentAborted(f"The snapshot of the server ({record.backup_id}) is gone.") from gone
    return rollback.plan, (target, rollback.left)


def _adopt_unrecorded(
    repository: DeploymentRepository, record: DeploymentRecord, live: LiveGuild, plan: DeploymentPlan
) -> None:
    """A run killed between platform writes and their checkpoints left objects its journal does not name: those of
    the intents not followed by a checkpoint (steps in flight or being journaled: `deploy_engine/scheduler.py`).
    Each is adopted only if the live object is that write's doing: for a create, one the snapshot did not hold, made
    (its id's time) while the write could run; for an update, one that differs from the snapshot. An object a
    person made meanwhile under the same name has no intent of ours, or another time: it is never adopted, so no
    rollback deletes it."""
    journaled = {
        *record.journal_created,
        *record.journal_updated,
        *record.journal_deleted,
        *record.journal_failed,
    }
    # In flight: on the guild's lock; a release before this one kept them on the deployment's item.
    begun = {**record.journal_intents, **write_intents.begun(record)}
    pending = sorted((at, key) for key, at in begun.items() if key not in journaled)
    if not pending:
        return
    before = GuildSnapshot.from_backup_data(archive.get_backup(record.backup_id or "").backup_data)
    # The steps in flight when the run ended were all sent within one call's longest wait of the newest; an older
    # intent is a step some earlier run was stopped before (the plan no longer holds it, or it is journaled).
    newest, longest = pending[-1][0], get_settings().chat_max_wait_seconds * 1000
    for at, key in pending:
        if newest - at <= longest:
            _adopt(repository, record, live, plan, before, key, at)


def _adopt(
    repository: DeploymentRepository,
    record: DeploymentRecord,
    live: LiveGuild,
    plan: DeploymentPlan,
    before: GuildSnapshot,
    key: str,
    at: int,
) -> None:
    deleted = key.removeprefix("delete:") if key.startswith("delete:") else None
    if deleted is not None and _object(live, deleted) is None:  # the lost run's delete: the rollback makes it again
        gone = _object(before, deleted)
        outcome = StepOutcome(key="adopted", deleted={key: deleted})
        outcome.count(
            "role" if isinstance(gone, Role) else "category" if gone and gone.is_category else "channel", "deleted"
        )
        repository.record_progress(record, progress_of(outcome), utc_now(), {key: at})
        return
    item = next((item for item in plan.items if item.key == key), None)
    if item is None:
        return
    outcome, after = StepOutcome(key="adopted"), {}
    if item.kind == "settings":  # the guild itself: changed since the snapshot means the lost run's PATCH
        if before.settings is not None and before.settings != live.settings:
            outcome.updated[key] = UpdatedObject(id=live.id, kind="settings", previous={})
            outcome.count("settings", "updated")
            after[key] = fingerprint(guild_fields(live.name, live.settings))
    elif (object_id := plan.ids.get(key)) is not None:
        existed = {role.id for role in before.roles} | {channel.id for channel in before.channels}
        live_object = _object(live, object_id)
        longest = get_settings().chat_max_wait_seconds
        if object_id not in existed and made_by_the_write(object_id, at, longest):
            outcome.created[key] = object_id
            outcome.count(item.kind, "created")
            owned = sum(1 for other in plan.items if other.kind == "overwrite" and other.owner == key)
            outcome.count("overwrite", "created", owned)
        elif object_id in existed and _state(live_object) != _state(_object(before, object_id)):
            outcome.updated[key] = UpdatedObject(id=object_id, kind=item.kind, previous={})
            outcome.count(item.kind, "updated")
        if live_object is not None:
            after[key] = fingerprint_of(live_object)
    if outcome.created or outcome.updated:
        logger.info("an object written by a run that was cut short", extra={"key": key})
        adopted = progress_of(outcome).model_copy(update={"after": after})
        repository.record_progress(record, adopted, utc_now(), {key: at})


def _object(guild: LiveGuild | GuildSnapshot, object_id: str) -> Role | Channel | None:
    objects: list[Role | Channel] = [*guild.roles, *guild.channels]
    return next((found for found in objects if found.id == object_id), None)


def _state(found: Role | Channel | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return role_state(found) if isinstance(found, Role) else channel_state(found)


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
    try:
        repository.mark_waiting(record, resumes_at, reason, now)
    except DeploymentCancelled:  # cancelled meanwhile: its schedule finds it ended and does nothing
        _stop_cancelled(repository, record)
        return
    metrics.add_metric(name="DeploymentWaiting", unit="Count", value=1)
    logger.warning("the chat platform asks to wait for hours: waiting", extra={"resumes_at": resumes_at.isoformat()})


def _stop_cancelled(repository: DeploymentRepository, record: DeploymentRecord) -> None:
    """Cancelled while it ran: its result counts all it wrote (the cancel counted what was written then)."""
    stored = repository.get(record.user_id, record.project_id, record.deployment_id) or record
    repository.settle_cancelled(record, cancelled_summary(stored), utc_now())  # counted by the cancel's request
    logger.info("deployment cancelled: stopped between two steps", extra={"cancelled_by": stored.cancelled_by})


def cancelled_summary(record: DeploymentRecord) -> str:
    """A cancelled deployment's result: who cancelled it, and what it had written (it stays; a rollback undoes it)."""
    return f"Cancelled by chat user {record.cancelled_by}. {summary(record.kind, record.steps)}"


def _finish(repository: DeploymentRepository, record: DeploymentRecord, *, error: str | None) -> bool:
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
    if not repository.finish(record, status, summary(record.kind, steps), error, utc_now()):
        logger.info("deployment cancelled before it could finish")
        return False
    restore.remember_recreations(repository.get(record.user_id, record.project_id, record.deployment_id) or record)
    metrics.add_metric(name=f"Deployment{status.capitalize()}", unit="Count", value=1)
    logger.info("deployment finished", extra={"status": status, "changed": changed, "failed": failed})
    return True


_SINGULAR = {group: kind for kind, group in KIND_GROUPS.items()}  # "roles" -> "role"


def _counted(group: str, n: int) -> str:
    if group == "settings":  # one object, the server's own: a count of it reads oddly
        return "the server's settings"
    return f"{n} {_SINGULAR[group] if n == 1 else group}"


def summary(kind: DeploymentKind, steps: Steps) -> str:
    """One sentence a person can read: what was created, updated, deleted and failed, per kind."""

    def part(counter: str) -> str:
        counts = [(group, getattr(getattr(steps, group), counter)) for group in KIND_GROUPS.values()]
        return ", ".join(_counted(group, n) for group, n in counts if n) or "nothing"

    verbs = ("deleted", "updated") if kind == "rollback" else ("created", "updated")
    sentence = (
        f"{verbs[0].capitalize()} {part(verbs[0])}; {'restored' if kind == 'rollback' else 'updated'} {part(verbs[1])}"
    )
    if kind in ("deploy", "restore") and steps.total("deleted"):  # a pruning deploy
        sentence += f"; deleted {part('deleted')}"
    if kind == "rollback" and steps.total("created"):  # what the deployment had deleted, made again
        sentence += f"; re-created {part('created')}"
    failed = steps.total("failed")
    return f"{sentence}; {failed} failed." if failed else f"{sentence}."
