"""POST /functions/manageBackup: the bot creates (uploaded, or from the live guild), lists, fetches, deletes,
schedules, compares and restores backups of a server."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field, RootModel, field_validator

from svcconf.api.auth import BotCaller, bot_caller
from svcconf.api.examples import BACKUP_ANSWERS, BACKUP_CREATED, BACKUP_REQUESTS
from svcconf.api.examples_restore import RESTORE_ANSWERS, RESTORE_QUEUED, RESTORE_REQUESTS
from svcconf.api.examples_schedules import BACKUP_SCHEDULE_ANSWERS, BACKUP_SCHEDULE_REQUESTS
from svcconf.api.fields import Snowflake
from svcconf.api.resolver import MIB, create_app, lambda_entry_point
from svcconf.api.responses import BOT_ERRORS, BOT_TOKEN_AUTH, error_responses, request_examples, success
from svcconf.backups.archive import (
    BackupCreated,
    BackupDeleted,
    BackupFetched,
    create_backup,
    delete_backup,
    fetch_backup,
    list_backups,
    store_live_backup,
)
from svcconf.backups.live import read_live_backup
from svcconf.backups.schedules import (
    EVERY_HOURS_MAX,
    KEEP_MAX,
    BackupListWithSchedule,
    BackupScheduled,
    BackupUnscheduled,
    read_schedule,
    remove_schedule,
    set_schedule,
)
from svcconf.chat import get_chat_client
from svcconf.config.field_types import json_integer
from svcconf.deployments.answers import DeploymentView
from svcconf.deployments.bot_restores import (
    RestoreCancelled,
    bot_cancel,
    bot_record_user,
    bot_restore_info,
    bot_rollback,
)
from svcconf.deployments.diff import BackupDiff, diff_backup
from svcconf.deployments.restore import (
    RestoreAsked,
    RestoreInfo,
    RestoreOptions,
    RestorePlanned,
    restore,
)
from svcconf.observability import metrics


class CreateBackupRequest(BaseModel):
    action: Literal["create"]
    guild_id: Snowflake
    backup_data: dict[str, Any] | None = Field(
        None,
        description=(
            "A backup in any shape (get returns it exactly; its `format` is read). Left out: the service makes the "
            "backup from the live guild (the bot must be in it)."
        ),
    )
    guild_name: str | None = Field(None, max_length=100)
    label: str | None = Field(None, max_length=100)
    user_id: Snowflake | None = Field(
        None,
        description="From the live guild: the chat user the bot acts for, recorded as `made_by` if they manage it.",
    )
    members: bool = Field(True, strict=True, description="From the live guild: back up members' roles too.")


class DeleteBackupRequest(BaseModel):
    action: Literal["delete"]
    backup_id: str = Field(min_length=1, max_length=64)
    guild_id: Snowflake


class ListBackupsRequest(BaseModel):
    action: Literal["list"]
    guild_id: Snowflake


class GetBackupRequest(BaseModel):
    action: Literal["get"]
    backup_id: str = Field(min_length=1, max_length=64)
    guild_id: Snowflake | None = Field(
        None, description="The backup's guild: required for a deployment's snapshot, checked when given."
    )


class RestoreBackupRequest(RestoreOptions):
    action: Literal["restore"]
    guild_id: Snowflake = Field(description="The server to restore into: the backup's own, or another (a copy).")
    user_id: Snowflake = Field(description="The chat user the bot acts for: the restore is checked as theirs.")
    project_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$", description="Default `restore-<backup_id>`."
    )


class RestoreInfoRequest(BaseModel):
    action: Literal["info"]
    deployment_id: str = Field(min_length=1, max_length=64, description="A restore made through the bot.")


class CancelRestoreRequest(BaseModel):
    action: Literal["cancel"]
    deployment_id: str = Field(min_length=1, max_length=64, description="A restore made through the bot.")
    user_id: Snowflake = Field(
        description="The chat user the bot acts for: the restore's own, or one who outranks them in the server."
    )


class RollbackRestoreRequest(BaseModel):
    action: Literal["rollback"]
    deployment_id: str = Field(min_length=1, max_length=64, description="A finished restore made through the bot.")
    user_id: Snowflake = Field(
        description="The chat user the bot acts for: the restore's own, or one who outranks them in the server; "
        "the rollback is checked as theirs."
    )


class DiffBackupRequest(BaseModel):
    action: Literal["diff"]
    backup_id: str = Field(min_length=1, max_length=64)
    against: str = Field(
        "live",
        min_length=1,
        max_length=64,
        description='What the backup is compared with: `"live"` (the server now), or the `backup_id` of another backup '
        "of the same server.",
    )
    user_id: Snowflake | None = Field(
        None, description='Against "live": compare in this chat user\'s view of the server.'
    )


class ScheduleBackupsRequest(BaseModel):
    action: Literal["schedule"]
    guild_id: Snowflake
    every_hours: int = Field(ge=1, le=EVERY_HOURS_MAX, description="Hours between two backups (1 to 168).")
    keep: int = Field(ge=1, le=KEEP_MAX, description="How many of the newest scheduled backups are kept (1 to 50).")
    members: bool = Field(True, strict=True, description="Whether each backup holds the members' role assignments.")
    label: str | None = Field(None, max_length=100, description="The label of each scheduled backup.")
    user_id: Snowflake | None = Field(None, description="The chat user the bot acts for.")

    _integers = field_validator("every_hours", "keep", mode="before")(json_integer)


class UnscheduleBackupsRequest(BaseModel):
    action: Literal["unschedule"]
    guild_id: Snowflake


# One model per action, so that openapi.json states what each action needs (a union discriminated by `action`).
BackupRequest = Annotated[
    CreateBackupRequest
    | ListBackupsRequest
    | GetBackupRequest
    | DeleteBackupRequest
    | ScheduleBackupsRequest
    | UnscheduleBackupsRequest
    | RestoreBackupRequest
    | RestoreInfoRequest
    | CancelRestoreRequest
    | RollbackRestoreRequest
    | DiffBackupRequest,
    Field(discriminator="action"),
]
Answer200 = (
    BackupListWithSchedule
    | BackupFetched
    | BackupDeleted
    | BackupScheduled
    | BackupUnscheduled
    | BackupDiff
    | RestorePlanned
    | RestoreInfo
    | RestoreCancelled
)
BackupAnswers = (
    BackupCreated | BackupListWithSchedule | BackupFetched | BackupDeleted | BackupScheduled | BackupUnscheduled
)


class BackupAnswer(RootModel[Annotated[Answer200, Field(discriminator="action")]]):
    """An answer of 200, told apart by `action`: list, get, delete, schedule, unschedule, diff, a restore's plan (dry
    run), a restore's record, a restore cancelled."""


app = create_app("manageBackup", max_body_bytes=5 * MIB)


@app.post(
    "/functions/manageBackup",
    operation_id="manageBackup",
    tags=["Bot"],
    summary="Back up a server, and schedule, compare and restore its backups",
    description=(
        "The bot keeps backups of a server, chosen by `action`: `create` stores one (201): the `backup_data` it "
        "sends (its `format` read: configuration, discord-backup, template, platform or unknown, and whether it is "
        "`restorable`), or, without `backup_data`, one the service makes from the live guild (its configuration "
        "with ids, members' roles, owner and administrators); `list` answers a guild's backups newest first and its"
        " schedule (200), `get` answers one with its data exactly as stored (200), `delete` removes one (200). "
        "Answers repeat the `action`. Each kind keeps its newest backups only; `create` names what it pruned. "
        "`schedule` sets the guild's backup schedule (200), `unschedule` removes it (200; 404 when none); a "
        "schedule's run stores nothing when nothing changed since the newest scheduled backup. `restore` deploys a "
        "backup back as the chat user `user_id` could (202, or its plan with `dry_run`, 200), members' roles "
        "included; `info` reads such a restore, `cancel` stops it (200) and `rollback` undoes it, member grants "
        "included (202), each as deployToChat's; `diff` compares a backup with the live server or another backup."
    ),
    security=[{BOT_TOKEN_AUTH: []}],
    responses={
        200: success(
            "list: the guild's backups and its schedule; get: one backup with its data; delete: the backup removed; "
            "schedule: the guild's new schedule; unschedule: none any more; diff; restore with dry_run: its plan; "
            "info; cancel: the restore, cancelled",
            BackupAnswer,
            {**BACKUP_ANSWERS, **BACKUP_SCHEDULE_ANSWERS, **RESTORE_ANSWERS},
        ),
        201: success("create: the backup was stored", BackupCreated, BACKUP_CREATED),
        202: success("restore, rollback: queued; read its progress with info", DeploymentView, RESTORE_QUEUED),
        **error_responses(
            {
                **BOT_ERRORS,
                403: "restore, rollback: the user may not restore into that server, or may not make some of the "
                "changes (one detail per object); cancel, rollback: the user may not deploy there or does not outrank "
                "the restore's user",
                404: "no such backup (in the guild, when guild_id is given; diff: `against` too), no such restore made"
                " through the bot, nothing of it to roll back; unschedule: the guild has no schedule",
                409: "create from the live guild: the bot is not in it (`install_url` adds it); delete: the backup is a"
                " deployment's snapshot; restore, diff: the backup cannot be restored (its problems), the bot is not"
                " in the server, the preflight failed, deletions are not confirmed, or dangerous grants are not"
                " acknowledged; cancel: the restore has ended; rollback: the server is busy, or the restore's snapshot"
                " is gone",
                413: "the body is larger than 5 MiB, or the uploaded backup compresses to more than can be stored",
            }
        ),
    },
)
def manage_backup(
    request: Annotated[
        BackupRequest,
        Body(openapi_examples=request_examples({**BACKUP_REQUESTS, **BACKUP_SCHEDULE_REQUESTS, **RESTORE_REQUESTS})),
    ],
    _bot: Annotated[BotCaller, Depends(bot_caller)],
) -> Response[Any]:
    if isinstance(request, RestoreBackupRequest):
        asked = RestoreAsked(**request.model_dump(exclude={"action", "user_id"}))
        restored = restore(bot_record_user(request.user_id), request.user_id, asked)
        return Response(200 if request.dry_run else 202, content_types.APPLICATION_JSON, restored)
    if isinstance(request, RestoreInfoRequest):
        return Response(200, content_types.APPLICATION_JSON, bot_restore_info(request.deployment_id))
    if isinstance(request, CancelRestoreRequest):
        return Response(200, content_types.APPLICATION_JSON, bot_cancel(request.deployment_id, request.user_id))
    if isinstance(request, RollbackRestoreRequest):
        return Response(202, content_types.APPLICATION_JSON, bot_rollback(request.deployment_id, request.user_id))
    if isinstance(request, DiffBackupRequest):
        diff = diff_backup(request.backup_id, request.against, request.user_id)
        return Response(200, content_types.APPLICATION_JSON, diff)
    if isinstance(request, CreateBackupRequest):
        if request.backup_data is None:
            made = read_live_backup(
                get_chat_client(), request.guild_id, user_id=request.user_id, members=request.members
            )
            created = store_live_backup(made, label=request.label)
        else:
            created = create_backup(
                request.guild_id, request.backup_data, guild_name=request.guild_name, label=request.label
            )
        metrics.add_metric(name="BackupCreated", unit="Count", value=1)
        return _answer(BackupCreated(data=created), status_code=201)
    if isinstance(request, ListBackupsRequest):
        backups = list_backups(request.guild_id)
        return _answer(BackupListWithSchedule(backups=backups, schedule=read_schedule(request.guild_id)))
    if isinstance(request, ScheduleBackupsRequest):
        schedule = set_schedule(
            request.guild_id,
            every_hours=request.every_hours,
            keep=request.keep,
            members=request.members,
            label=request.label,
            user_id=request.user_id,
        )
        return _answer(BackupScheduled(schedule=schedule))
    if isinstance(request, DeleteBackupRequest):
        deleted = delete_backup(request.backup_id, guild_id=request.guild_id)
        return _answer(BackupDeleted(data=BackupDeleted.Deleted(backup_id=deleted)))
    if isinstance(request, UnscheduleBackupsRequest):
        remove_schedule(request.guild_id)
        return _answer(BackupUnscheduled())
    return _answer(BackupFetched(data=fetch_backup(request.backup_id, guild_id=request.guild_id)))


def _answer(body: BackupAnswers, status_code: int = 200) -> Response[BackupAnswers]:
    return Response(status_code, content_types.APPLICATION_JSON, body)


lambda_handler = lambda_entry_point(app)
