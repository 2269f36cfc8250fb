"""Scheduled backups: one schedule per guild (manageBackup `schedule`, `unschedule`), and its runs.

`schedule` stores the guild's schedule (a second replaces the first) and one recurring EventBridge Scheduler
schedule, named after the guild, that sends `{guild_id, schedule_id}` to the backup queue every `every_hours`
hours, the first run `every_hours` from now. The backup worker calls `run_scheduled` with that job: it reads the
live guild exactly as manageBackup `create` without `backup_data` does (`live.read_live_backup`: the configuration
with ids, owner and administrators, and the members' role assignments unless the schedule says `members: false`,
when no member list is read), stores nothing when the content's digest (members included) equals the newest
scheduled backup's, else stores it as a backup of kind "scheduled" and prunes the guild's scheduled backups to
`keep` (`archive.store_live_backup`); the run records `last_run_at`, `last_result` and `next_run_at` on the
schedule. Its platform requests keep the bot's own pace (`own_pace`). A run that cannot read the guild records why
and keeps the schedule. A job of a schedule since replaced or removed does nothing.
"""

from __future__ import annotations

import math
import secrets
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf.backups.archive import BackupList, backup_exists, store_live_backup
from svcconf.backups.live import read_live_backup
from svcconf.backups.own_pace import bots_own_work
from svcconf.chat import get_chat_client
from svcconf.chat.errors import ChatError, ChatRateLimited, ChatUnavailable
from svcconf.clock import utc_now
from svcconf.deployments.requests import BotNotInGuild
from svcconf.errors import NotFound, ServiceUnavailable
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store import schedules
from svcconf.store.backup_schedules import BackupSchedule, BackupScheduleRepository, NewestScheduled, RunResult

EVERY_HOURS_MAX = 168  # a week
KEEP_MAX = 50


class ScheduleView(BaseModel):
    """A guild's backup schedule as manageBackup answers it."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    guild_id: str
    every_hours: int = Field(description="Hours between two runs.")
    keep: int = Field(description="How many of the newest scheduled backups the guild keeps.")
    members: bool = Field(description="Whether a run reads the members' role assignments.")
    label: str | None = Field(description="The label each scheduled backup carries.")
    next_run_at: datetime = Field(description="When the next run is due.")
    last_run_at: datetime | None = Field(description="When the last run ended; null before the first.")
    last_result: RunResult | None = Field(description="How the last run ended; null before the first.")

    @classmethod
    def of(cls, schedule: BackupSchedule) -> ScheduleView:
        return cls.model_validate(schedule.model_dump(exclude={"schedule_id", "created_at", "user_id"}))


# manageBackup's answers for schedules, and `list` with the guild's schedule.
class BackupScheduled(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["schedule"] = "schedule"
    schedule: ScheduleView = Field(description="The guild's schedule, which replaced the one it had.")


class BackupUnscheduled(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["unschedule"] = "unschedule"
    schedule: None = Field(None, description="Always null: the guild has no schedule any more.")


class BackupListWithSchedule(BackupList):
    schedule: ScheduleView | None = Field(description="The guild's backup schedule; null when it has none.")


class BackupJob(BaseModel):
    """What a guild's EventBridge schedule sends to the backup queue."""

    guild_id: str = Field(min_length=1, max_length=20)
    schedule_id: str = Field(min_length=1, max_length=64)


def _repository() -> BackupScheduleRepository:
    return BackupScheduleRepository(get_settings().backups_table)


def schedule_name(guild_id: str) -> str:
    return f"backup-{guild_id}"


def set_schedule(
    guild_id: str, *, every_hours: int, keep: int, members: bool, label: str | None, user_id: str | None
) -> ScheduleView:
    """The guild's schedule, replacing the one it had; its first run `every_hours` from now."""
    settings = get_settings()
    if not settings.backup_queue_arn or not settings.backup_scheduler_role_arn:
        raise ServiceUnavailable("Scheduled backups are not configured on this stack (BACKUP_QUEUE_ARN).")
    now = utc_now()
    schedule = BackupSchedule(
        guild_id=guild_id,
        schedule_id=secrets.token_hex(8),
        every_hours=every_hours,
        keep=keep,
        members=members,
        label=label,
        user_id=user_id,
        created_at=now,
        next_run_at=_first_run(now, every_hours),
    )
    # EventBridge first: a job whose schedule_id the table does not hold yet is ignored, so a failure between the
    # two leaves nothing half-made that runs.
    schedules.put_recurring(
        schedule_name(guild_id),
        every_hours=every_hours,
        start=schedule.next_run_at,
        queue_arn=settings.backup_queue_arn,
        role_arn=settings.backup_scheduler_role_arn,
        body=BackupJob(guild_id=guild_id, schedule_id=schedule.schedule_id).model_dump(),
        group=settings.backup_schedule_group,
    )
    _repository().put(schedule)
    logger.info("backup schedule set", extra={"guild_id": guild_id, "every_hours": every_hours, "keep": keep})
    return ScheduleView.of(schedule)


def remove_schedule(guild_id: str) -> None:
    """Removes the guild's schedule and its EventBridge schedule; 404 when it had neither. Its backups stay."""
    removed = _repository().delete(guild_id)
    fired_by = schedules.remove(schedule_name(guild_id), group=get_settings().backup_schedule_group)
    if removed is None and not fired_by:
        raise NotFound("The guild has no backup schedule.")
    logger.info("backup schedule removed", extra={"guild_id": guild_id})


def read_schedule(guild_id: str) -> ScheduleView | None:
    schedule = _repository().get(guild_id)
    return ScheduleView.of(schedule) if schedule else None


def run_scheduled(job: BackupJob) -> RunResult | None:
    """One run of the guild's schedule; its result, or None when the job's schedule is no longer the guild's.
    The platform's passing failures (unavailable, rate limited) are recorded and raised, so the queue retries."""
    repository = _repository()
    schedule = repository.get(job.guild_id)
    if schedule is None or schedule.schedule_id != job.schedule_id:
        logger.info("a replaced or removed schedule's job: nothing to do", extra={"guild_id": job.guild_id})
        return None
    newest = repository.newest(job.guild_id)
    if newest is not None and not backup_exists(newest.backup_id):
        newest = None  # deleted since: nothing to be equal to
    try:
        with bots_own_work(job.guild_id):
            made = read_live_backup(get_chat_client(), job.guild_id, user_id=schedule.user_id, members=schedule.members)
    except (ChatError, BotNotInGuild) as error:
        why = "the service's bot is not in it" if isinstance(error, BotNotInGuild) else error.message
        result = RunResult(outcome="failed", detail=f"The guild could not be read: {why}")
        _record(repository, schedule, result)
        metrics.add_metric(name="ScheduledBackupFailed", unit="Count", value=1)
        if isinstance(error, ChatUnavailable | ChatRateLimited):
            raise
        return result
    if newest is not None and made.digest == newest.digest:
        result = RunResult(outcome="unchanged", backup_id=newest.backup_id)
        metrics.add_metric(name="ScheduledBackupUnchanged", unit="Count", value=1)
    else:
        stored = store_live_backup(made, label=schedule.label, kind="scheduled", keep=schedule.keep)
        repository.set_newest(job.guild_id, NewestScheduled(backup_id=stored.backup_id, digest=made.digest))
        detail = "; ".join(f"{w.field}: {w.message}" for w in made.warnings) or None  # what create would warn
        result = RunResult(outcome="stored", backup_id=stored.backup_id, pruned=stored.pruned, detail=detail)
        metrics.add_metric(name="ScheduledBackupStored", unit="Count", value=1)
    _record(repository, schedule, result)
    return result


def _record(repository: BackupScheduleRepository, schedule: BackupSchedule, result: RunResult) -> None:
    now = utc_now()
    next_run_at = next_run_after(schedule, now)
    if not repository.record_run(
        schedule.guild_id, schedule.schedule_id, ran_at=now, result=result, next_run_at=next_run_at
    ):
        logger.info("the schedule was replaced during its run", extra={"guild_id": schedule.guild_id})
    logger.info("scheduled backup ran", extra={"guild_id": schedule.guild_id, "outcome": result.outcome})


def _first_run(now: datetime, every_hours: int) -> datetime:
    # Whole seconds, as EventBridge takes its StartDate.
    return datetime.fromtimestamp(math.ceil((now + timedelta(hours=every_hours)).timestamp()), now.tzinfo)


def next_run_after(schedule: BackupSchedule, moment: datetime) -> datetime:
    """The schedule's first run after `moment`: its runs fall every `every_hours` from the first one."""
    first = _first_run(schedule.created_at, schedule.every_hours)
    if moment < first:
        return first
    period = timedelta(hours=schedule.every_hours)
    return first + period * (math.floor((moment - first) / period) + 1)
