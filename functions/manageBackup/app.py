"""POST /functions/manageBackup: the bot creates, lists and fetches backups of a server's configuration."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field, RootModel

from svcconf.api.auth import BotCaller, bot_caller
from svcconf.api.examples import BACKUP_ANSWERS, BACKUP_CREATED, BACKUP_REQUESTS
from svcconf.api.examples_restore import RESTORE_ANSWERS, RESTORE_QUEUED, RESTORE_REQUESTS
from svcconf.api.fields import Snowflake
from svcconf.api.resolver import MIB, create_app, lambda_entry_point
from svcconf.api.responses import BOT_ERRORS, BOT_TOKEN_AUTH, error_responses, request_examples, success
from svcconf.backups.archive import BackupCreated, BackupFetched, BackupList, create_backup, fetch_backup, list_backups
from svcconf.deployments.answers import DeploymentView
from svcconf.deployments.diff import BackupDiff, diff_backup
from svcconf.deployments.restore import (
    RestoreAsked,
    RestoreInfo,
    RestoreOptions,
    RestorePlanned,
    bot_record_user,
    bot_restore_info,
    restore,
)
from svcconf.observability import metrics


class CreateBackupRequest(BaseModel):
    action: Literal["create"]
    guild_id: Snowflake
    backup_data: dict[str, Any] = Field(description="The server's export; get returns it exactly.")
    guild_name: str | None = Field(None, max_length=100)
    label: str | None = Field(None, max_length=100)


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


class DiffBackupRequest(BaseModel):
    action: Literal["diff"]
    backup_id: str = Field(min_length=1, max_length=64)
    against: Literal["live"] = Field("live", description="What the backup is compared with: the live server.")
    user_id: Snowflake | None = Field(None, description="Compare in this chat user's view of the server.")


# One model per action, so that openapi.json states what each action needs (a union discriminated by `action`).
BackupRequest = Annotated[
    CreateBackupRequest
    | ListBackupsRequest
    | GetBackupRequest
    | RestoreBackupRequest
    | RestoreInfoRequest
    | DiffBackupRequest,
    Field(discriminator="action"),
]
Answer200 = BackupList | BackupFetched | BackupDiff | RestorePlanned | RestoreInfo


class BackupAnswer(RootModel[Annotated[Answer200, Field(discriminator="action")]]):
    """An answer of 200, told apart by `action`: list, get, diff, a restore's plan (dry run), a restore's record."""


app = create_app("manageBackup", max_body_bytes=5 * MIB)


@app.post(
    "/functions/manageBackup",
    operation_id="manageBackup",
    tags=["Bot"],
    summary="Create, list or fetch backups of a server",
    description=(
        "The bot keeps backups of a server's export, chosen by `action`: `create` stores one (201), `list` answers "
        "a guild's backups newest first (200), `get` answers one with its data exactly as stored (200). Answers "
        "repeat the `action`. A guild keeps its newest backups only; older ones are pruned. `restore` deploys a "
        "backup back as the chat user `user_id` could (202, or its plan with `dry_run`, 200), members' roles "
        "included; `info` reads such a restore; `diff` compares a backup with the live server."
    ),
    security=[{BOT_TOKEN_AUTH: []}],
    responses={
        200: success(
            "list: the guild's backups; get: one backup with its data; diff; restore with dry_run: its plan; info",
            BackupAnswer,
            {**BACKUP_ANSWERS, **RESTORE_ANSWERS},
        ),
        201: success("create: the backup was stored", BackupCreated, BACKUP_CREATED),
        202: success("restore: queued; read its progress with info", DeploymentView, RESTORE_QUEUED),
        **error_responses(
            {
                **BOT_ERRORS,
                403: "restore: the user may not restore into that server, or may not make some of the changes (one"
                " detail per object)",
                404: "no such backup (in the guild, when guild_id is given), or no such restore made through the bot",
                409: "restore, diff: the backup cannot be restored (its problems), the bot is not in the server, the"
                " preflight failed, deletions are not confirmed, or dangerous grants are not acknowledged",
                413: "the body is larger than 5 MiB, or the backup compresses to more than can be stored",
            }
        ),
    },
)
def manage_backup(
    request: Annotated[BackupRequest, Body(openapi_examples=request_examples({**BACKUP_REQUESTS, **RESTORE_REQUESTS}))],
    _bot: Annotated[BotCaller, Depends(bot_caller)],
) -> Response[Any]:
    if isinstance(request, RestoreBackupRequest):
        asked = RestoreAsked(**request.model_dump(exclude={"action", "user_id"}))
        restored = restore(bot_record_user(request.user_id), request.user_id, asked)
        return Response(200 if request.dry_run else 202, content_types.APPLICATION_JSON, restored)
    if isinstance(request, RestoreInfoRequest):
        return Response(200, content_types.APPLICATION_JSON, bot_restore_info(request.deployment_id))
    if isinstance(request, DiffBackupRequest):
        return Response(200, content_types.APPLICATION_JSON, diff_backup(request.backup_id, "live", request.user_id))
    if isinstance(request, CreateBackupRequest):
        created = create_backup(
            request.guild_id, request.backup_data, guild_name=request.guild_name, label=request.label
        )
        metrics.add_metric(name="BackupCreated", unit="Count", value=1)
        return _answer(BackupCreated(data=created), status_code=201)
    if isinstance(request, ListBackupsRequest):
        return _answer(BackupList(backups=list_backups(request.guild_id)))
    return _answer(BackupFetched(data=fetch_backup(request.backup_id, guild_id=request.guild_id)))


def _answer(
    body: BackupCreated | BackupList | BackupFetched, status_code: int = 200
) -> Response[BackupCreated | BackupList | BackupFetched]:
    return Response(status_code, content_types.APPLICATION_JSON, body)


lambda_handler = lambda_entry_point(app)
