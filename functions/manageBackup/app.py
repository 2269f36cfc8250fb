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
    require_fields,
)
from svcconf.auth import BotCaller, bot_caller
from svcconf.backups import Backup, create_backup, get_backup, list_backups
from svcconf.fields import Snowflake
from svcconf.observability import metrics
from svcconf.store.backups import BackupSummary


class BackupRequest(BaseModel):
    action: Literal["create", "list", "get"]
    guild_id: Snowflake | None = Field(None, description="Required by create and list; optional filter of get.")
    backup_id: str | None = Field(None, min_length=1, max_length=64, description="Required by get.")
    guild_name: str | None = Field(None, max_length=100)
    backup_data: dict[str, Any] | None = Field(None, description="Required by create; returned exactly by get.")
    label: str | None = Field(None, max_length=100)


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
    if request.action == "create":
        require_fields(request, "guild_id", "backup_data", action="create")
        assert request.guild_id is not None  # require_fields refused None
        assert request.backup_data is not None
        created = create_backup(
            request.guild_id, request.backup_data, guild_name=request.guild_name, label=request.label
        )
        metrics.add_metric(name="BackupCreated", unit="Count", value=1)
        return _answer(BackupResponse(data=created), status_code=201)
    if request.action == "list":
        require_fields(request, "guild_id", action="list")
        assert request.guild_id is not None  # require_fields refused None
        return _answer(BackupResponse(backups=list_backups(request.guild_id)))
    require_fields(request, "backup_id", action="get")
    assert request.backup_id is not None  # require_fields refused None
    return _answer(BackupResponse(data=get_backup(request.backup_id, guild_id=request.guild_id)))


def _answer(body: BackupResponse, status_code: int = 200) -> Response[BackupResponse]:
    return Response(status_code, content_types.APPLICATION_JSON, body)


lambda_handler = lambda_entry_point(app)
