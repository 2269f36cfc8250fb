"""POST /functions/manageBackup: the bot creates (uploaded, or from the live guild), lists, fetches and deletes backups
of a server's configuration."""

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
from svcconf.backups.archive import (
    BackupCreated,
    BackupDeleted,
    BackupFetched,
    BackupList,
    create_backup,
    delete_backup,
    fetch_backup,
    list_backups,
    schedule_of,
    store_live_backup,
)
from svcconf.backups.live import read_live_backup
from svcconf.chat import get_chat_client
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
    members: bool = Field(True, description="From the live guild: back up members' roles too.")


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


# One model per action, so that openapi.json states what each action needs (a union discriminated by `action`).
BackupRequest = Annotated[
    CreateBackupRequest | ListBackupsRequest | GetBackupRequest | DeleteBackupRequest, Field(discriminator="action")
]


class BackupAnswer(RootModel[Annotated[BackupList | BackupFetched | BackupDeleted, Field(discriminator="action")]]):
    """An answer of 200, told apart by `action`: list, get or delete."""


app = create_app("manageBackup", max_body_bytes=5 * MIB)


@app.post(
    "/functions/manageBackup",
    operation_id="manageBackup",
    tags=["Bot"],
    summary="Create, list, fetch or delete backups of a server",
    description=(
        "The bot keeps backups of a server, chosen by `action`: `create` stores one (201): the `backup_data` it "
        "sends (its `format` read: configuration, discord-backup, template, platform or unknown, and whether it is "
        "`restorable`), or, without `backup_data`, one the service makes from the live guild (its configuration "
        "with ids, members' roles, owner and administrators); `list` answers a guild's backups newest first (200), "
        "`get` answers one with its data exactly as stored (200), `delete` removes one (200). Answers repeat the "
        "`action`. Each kind keeps its newest backups only; `create` names what it pruned."
    ),
    security=[{BOT_TOKEN_AUTH: []}],
    responses={
        200: success(
            "list: the guild's backups; get: one backup with its data; delete: the backup removed",
            BackupAnswer,
            BACKUP_ANSWERS,
        ),
        201: success("create: the backup was stored", BackupCreated, BACKUP_CREATED),
        **error_responses(
            {
                **BOT_ERRORS,
                404: "no such backup (in the guild, when guild_id is given)",
                409: (
                    "create from the live guild: the bot is not in it (`install_url` adds it); delete: the backup "
                    "is a deployment's snapshot"
                ),
                413: "the body is larger than 5 MiB, or the uploaded backup compresses to more than can be stored",
            }
        ),
    },
)
def manage_backup(
    request: Annotated[BackupRequest, Body(openapi_examples=request_examples(BACKUP_REQUESTS))],
    _bot: Annotated[BotCaller, Depends(bot_caller)],
) -> Response[BackupCreated | BackupList | BackupFetched | BackupDeleted]:
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
        return _answer(BackupList(backups=list_backups(request.guild_id), schedule=schedule_of(request.guild_id)))
    if isinstance(request, DeleteBackupRequest):
        deleted = delete_backup(request.backup_id, guild_id=request.guild_id)
        return _answer(BackupDeleted(data=BackupDeleted.Deleted(backup_id=deleted)))
    return _answer(BackupFetched(data=fetch_backup(request.backup_id, guild_id=request.guild_id)))


Answer = BackupCreated | BackupList | BackupFetched | BackupDeleted


def _answer(body: Answer, status_code: int = 200) -> Response[Answer]:
    return Response(status_code, content_types.APPLICATION_JSON, body)


lambda_handler = lambda_entry_point(app)
