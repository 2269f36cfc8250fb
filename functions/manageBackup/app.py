"""POST /functions/manageBackup: the bot creates, lists and fetches backups of a server's configuration."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field, RootModel

from svcconf.api.auth import BotCaller, bot_caller
from svcconf.api.examples import BACKUP_ANSWERS, BACKUP_CREATED, BACKUP_REQUESTS
from svcconf.api.fields import Snowflake
from svcconf.api.resolver import MIB, create_app, lambda_entry_point
from svcconf.api.responses import BOT_ERRORS, BOT_TOKEN_AUTH, error_responses, request_examples, success
from svcconf.backups.archive import BackupCreated, BackupFetched, BackupList, create_backup, fetch_backup, list_backups
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


# One model per action, so that openapi.json states what each action needs (a union discriminated by `action`).
BackupRequest = Annotated[CreateBackupRequest | ListBackupsRequest | GetBackupRequest, Field(discriminator="action")]


class BackupAnswer(RootModel[Annotated[BackupList | BackupFetched, Field(discriminator="action")]]):
    """An answer of 200, told apart by `action`: list or get."""


app = create_app("manageBackup", max_body_bytes=5 * MIB)


@app.post(
    "/functions/manageBackup",
    operation_id="manageBackup",
    tags=["Bot"],
    summary="Create, list or fetch backups of a server",
    description=(
        "The bot keeps backups of a server's export, chosen by `action`: `create` stores one (201), `list` answers "
        "a guild's backups newest first (200), `get` answers one with its data exactly as stored (200). Answers "
        "repeat the `action`. A guild keeps its newest backups only; older ones are pruned."
    ),
    security=[{BOT_TOKEN_AUTH: []}],
    responses={
        200: success("list: the guild's backups; get: one backup with its data", BackupAnswer, BACKUP_ANSWERS),
        201: success("create: the backup was stored", BackupCreated, BACKUP_CREATED),
        **error_responses(
            {
                **BOT_ERRORS,
                404: "no such backup (in the guild, when guild_id is given)",
                413: "the body is larger than 5 MiB, or the backup compresses to more than can be stored",
            }
        ),
    },
)
def manage_backup(
    request: Annotated[BackupRequest, Body(openapi_examples=request_examples(BACKUP_REQUESTS))],
    _bot: Annotated[BotCaller, Depends(bot_caller)],
) -> Response[BackupCreated | BackupList | BackupFetched]:
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
