"""A guild's backup schedule, and the digest of its newest scheduled backup, in the backups table.

Two items per guild next to its backups (their sort keys never begin with `BACKUP#` or `DATA#`, so listing and
pruning backups never see them):
- `SCHEDULE`: what manageBackup `schedule` asked for and how its last run went. A second `schedule` replaces it
  with a new `schedule_id`; a run records its result only while the schedule it ran for is still the guild's
  (a conditional update), so a late run of a replaced or removed schedule changes nothing.
- `SCHEDULED_NEWEST`: the newest scheduled backup's id and content digest, which a run compares its own with. It
  outlives `unschedule`, so a schedule set again later still skips a backup equal to the newest one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from svcconf.store.dynamo import is_conditional_check_failure, plain_integers, table

SCHEDULE_SK = "SCHEDULE"
NEWEST_SK = "SCHEDULED_NEWEST"


class RunResult(BaseModel):
    """How a scheduled run ended."""

    outcome: Literal["stored", "unchanged", "failed"] = Field(
        description="stored: a new backup; unchanged: the guild equals the newest scheduled backup, nothing stored; "
        "failed: the guild could not be read (the schedule stays)."
    )
    backup_id: str | None = Field(None, description="stored: the new backup; unchanged: the newest one it equals.")
    pruned: list[str] = Field(default_factory=list, description="Scheduled backups removed to keep `keep`.")
    detail: str | None = Field(
        None, description="failed: why; stored: what the backup could not hold (members not read), else null."
    )


class BackupSchedule(BaseModel):
    """A guild's schedule as stored (manageBackup answers `ScheduleView`, without the internal fields)."""

    guild_id: str
    schedule_id: str
    every_hours: int
    keep: int
    members: bool
    label: str | None = None
    user_id: str | None = None
    created_at: datetime
    next_run_at: datetime
    last_run_at: datetime | None = None
    last_result: RunResult | None = None


class NewestScheduled(BaseModel):
    backup_id: str
    digest: str


class BackupScheduleRepository:
    def __init__(self, table_name: str):
        self._table = table(table_name)

    def get(self, guild_id: str) -> BackupSchedule | None:
        item = self._table.get_item(Key=_key(guild_id, SCHEDULE_SK), ConsistentRead=True).get("Item")
        return BackupSchedule.model_validate(_fields(item)) if item else None

    def put(self, schedule: BackupSchedule) -> None:
        """Stores the guild's schedule, replacing the one it had."""
        item = {**schedule.model_dump(mode="json", exclude_none=True), "sk": SCHEDULE_SK}
        self._table.put_item(Item=item)

    def delete(self, guild_id: str) -> BackupSchedule | None:
        """Removes the guild's schedule; the one removed, or None when it had none."""
        old = self._table.delete_item(Key=_key(guild_id, SCHEDULE_SK), ReturnValues="ALL_OLD").get("Attributes")
        return BackupSchedule.model_validate(_fields(old)) if old else None

    def record_run(
        self, guild_id: str, schedule_id: str, *, ran_at: datetime, result: RunResult, next_run_at: datetime
    ) -> bool:
        """Records a run's result on the schedule it ran for; False when that schedule was replaced or removed."""
        try:
            self._table.update_item(
                Key=_key(guild_id, SCHEDULE_SK),
                UpdateExpression="SET last_run_at = :ran, last_result = :result, next_run_at = :next",
                ConditionExpression="schedule_id = :id",
                ExpressionAttributeValues={
                    ":ran": ran_at.isoformat(),
                    ":result": result.model_dump(mode="json", exclude_none=True),
                    ":next": next_run_at.isoformat(),
                    ":id": schedule_id,
                },
            )
        except Exception as error:
            if is_conditional_check_failure(error):
                return False
            raise
        return True

    def newest(self, guild_id: str) -> NewestScheduled | None:
        item = self._table.get_item(Key=_key(guild_id, NEWEST_SK), ConsistentRead=True).get("Item")
        return NewestScheduled.model_validate(_fields(item)) if item else None

    def set_newest(self, guild_id: str, newest: NewestScheduled) -> None:
        self._table.put_item(Item={**_key(guild_id, NEWEST_SK), **newest.model_dump()})


def _key(guild_id: str, sk: str) -> dict[str, str]:
    return {"guild_id": guild_id, "sk": sk}


def _fields(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in plain_integers(item).items() if key != "sk"}
