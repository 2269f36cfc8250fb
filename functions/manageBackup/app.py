"""POST /functions/manageBackup: the bot creates, lists and fetches backups of a server's configuration."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api import (
    BOT_TOKEN_AUTH,
    MIB,
    SparseResponse,
    create_app,
    error_responses,
    lambda_entry_point,
)
from svcconf.auth import BotCaller, bot_caller
from svcconf.backups import Backup, create_backup, get_backup, list_backups
from svcconf.fields import Snowflake
from svcconf.observability import metrics
from svcconf.store.backups import BackupSummary


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
    guild_id: Snowflake | None = Field(None, description="If given, the backup's guild.")


# One model per action, so that openapi.json states what each action needs (a union discriminated by `action`).
BackupRequest = Annotated[CreateBackupRequest | ListBackupsRequest | GetBackupRequest, Field(discriminator="action")]


class BackupResponse(SparseResponse):
    data: Backup | BackupSummary | None = Field(None, description="create: the new backup; get: it with its data.")
    backups: list[BackupSummary] | None = Field(None, description="list: newest first, without backup_data.")


app = create_app("manageBackup", max_body_bytes=5 * MIB)


@app.post(
    "/functions/manageBackup",
    summary="Create, list or fetch backups of a server",
    security=[{BOT_TOKEN_AUTH: []}],
    responses={
        200: {"description": "list: the guild's backups; get: one backup with its data"},
        201: {"description": "create: the backup was stored"},
        **error_responses(400, 403, 404, 413, 415, 500),
    },
)
def manage_backup(
    request: Annotated[BackupRequest, Body()],
    _bot: Annotated[BotCaller, Depends(bot_caller)],
) -> Response[BackupResponse]:
    if isinstance(request, CreateBackupRequest):
        created = create_backup(
            request.guild_id, request.backup_data, guild_name=request.guild_name, label=request.label
        )
        metrics.add_metric(name="BackupCreated", unit="Count", value=1)
        return _answer(BackupResponse(data=created), status_code=201)
    if isinstance(request, ListBackupsRequest):
        return _answer(BackupResponse(backups=list_backups(request.guild_id)))
    return _answer(BackupResponse(data=get_backup(request.backup_id, guild_id=request.guild_id)))


def _answer(body: BackupResponse, status_code: int = 200) -> Response[BackupResponse]:
    return Response(status_code, content_types.APPLICATION_JSON, body)


lambda_handler = lambda_entry_point(app)
