"""POST /functions/deployToChat: deploy a configuration to a guild (or plan it), read a deployment, roll back."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field, RootModel

from svcconf.accounts.chat_account import managed_guild
from svcconf.api.auth import BearerUser, bearer_user
from svcconf.api.examples import DEPLOY_ANSWERS, DEPLOY_QUEUED, DEPLOY_REQUESTS
from svcconf.api.examples_community import COMMUNITY_DEPLOY_ANSWERS, COMMUNITY_DEPLOY_REQUESTS
from svcconf.api.examples_restore import DEPLOY_RESTORE_REQUESTS, RESTORE_QUEUED
from svcconf.api.fields import Snowflake
from svcconf.api.resolver import MIB, create_app, lambda_entry_point
from svcconf.api.responses import BEARER_AUTH, BEARER_ERRORS, error_responses, request_examples, success
from svcconf.config import ServerConfig
from svcconf.deployments.answers import DeploymentView, DryRun
from svcconf.deployments.cancel import cancel
from svcconf.deployments.drift import with_drift
from svcconf.deployments.export_import import ExportAnswer, ImportAnswer, export_guild, import_data, import_template
from svcconf.deployments.requests import deploy, dry_run, info, rollback, rollback_dry_run
from svcconf.deployments.restore import RestoreAsked, RestoreOptions, restore
from svcconf.errors import BadRequest
from svcconf.limits import platform_reads

ProjectId = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$", description="The web app's project id.", examples=["proj-42"]
    ),
]

DeploymentId = Annotated[
    str,
    Field(
        pattern=r"^dp_[0-9a-f]{20}$",
        description="A deployment's id, as its 202 and `info` answer it.",
        examples=["dp_01a20e188a0e2d24b4c3"],
    ),
]


class DeployRequest(BaseModel):
    action: Literal["deploy"]
    guild_id: Snowflake
    config: ServerConfig
    project_id: ProjectId
    project_name: str = Field(min_length=1, max_length=100)
    dry_run: bool = Field(False, strict=True, description="Plan and check only: change nothing, mint no code.")
    prune: bool = Field(
        False,
        strict=True,
        description="Delete the roles, categories and channels the configuration does not name (the plan's `delete`"
        " items); without it they are left alone.",
    )
    confirm: str | None = Field(
        None,
        max_length=64,
        description="The `plan_id` of the dry run whose plan the caller saw: needed when the plan deletes anything,"
        " and refused (409 with the current plan) when the server changed since.",
        examples=["plan_3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6"],
    )
    acknowledge: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=16,
        description="The lint rule ids of dangerous grants to every member the caller means (409 names them).",
        examples=[["everyone-permissions-dangerous"]],
    )


class InfoRequest(BaseModel):
    action: Literal["info"]
    project_id: ProjectId
    guild_id: Snowflake | None = Field(None, description="Only deployments to this guild.")
    deployment_id: DeploymentId | None = Field(
        None, description="That deployment of the project (any of the caller's); absent: the newest."
    )
    drift: bool = Field(
        False, strict=True, description="Add `drift`: what changed on the server since that deployment finished."
    )


class RollbackRequest(BaseModel):
    action: Literal["rollback"]
    project_id: ProjectId | None = Field(
        None, description="The project whose newest finished deploy is undone; needed without `deployment_id`."
    )
    guild_id: Snowflake | None = Field(
        None, description="The guild of the deployment to undo; absent: the project's newest deployment anywhere."
    )
    deployment_id: DeploymentId | None = Field(
        None,
        description="The deployment to undo (then nothing else is needed); refused (409, naming it) while a later "
        "deployment of the project to that guild that changed some of its objects is not rolled back.",
    )
    dry_run: bool = Field(
        False, strict=True, description="Plan only: answer what the rollback would do, change nothing."
    )


class CancelRequest(BaseModel):
    action: Literal["cancel"]
    deployment_id: DeploymentId | None = Field(None, description="The deployment to cancel.")
    guild_id: Snowflake | None = Field(
        None, description="Without `deployment_id`: the deployment queued, waiting or running on this guild now."
    )


class ExportRequest(BaseModel):
    action: Literal["export"]
    guild_id: Snowflake


class ImportRequest(BaseModel):
    action: Literal["import"]
    template: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="A native server-template code or link of the chat platform (or `data`).",
        examples=["https://discord.new/hgM48av5Q69A"],
    )
    data: dict[str, Any] | None = Field(
        None,
        description=(
            "Instead of `template`: a backup in one of the backup formats (this service's configuration, the "
            "platform's own objects, a native template's snapshot, discord-backup's BackupData)."
        ),
    )


class RestoreRequest(RestoreOptions):
    action: Literal["restore"]
    guild_id: Snowflake
    project_id: ProjectId | None = Field(None, description="The restore's project; default `restore-<backup_id>`.")


DeployToChatRequest = Annotated[
    DeployRequest | InfoRequest | RollbackRequest | CancelRequest | ExportRequest | ImportRequest | RestoreRequest,
    Field(discriminator="action"),
]
Answer = DeploymentView | DryRun | ExportAnswer | ImportAnswer


class DeployToChatAnswer(RootModel[Annotated[Answer, Field(discriminator="status")]]):
    """An answer of 200: a plan (`status: planned`), a configuration read from a server (`exported`) or a template
    (`imported`), or a deployment (`status`:
    one of its states)."""


app = create_app("deployToChat", max_body_bytes=MIB)


@app.post(
    "/functions/deployToChat",
    operation_id="deployToChat",
    tags=["Deployments"],
    summary="Deploy a configuration to a server of the chat platform, plan it, read a deployment, roll it back, or "
    "read a server or a native template as a configuration",
    description=(
        "One operation, seven actions chosen by `action`: `deploy` queues a deployment of the configuration to a "
        "server the user manages (202; with `dry_run: true` it only plans and answers the plan, 200), `info` reads "
        "the newest deployment of a project, or one by its `deployment_id`, with the project's history (200), "
        "`rollback` queues the undoing of the newest one, or of one by its `deployment_id` (202), `cancel` ends a "
        "queued, waiting or running deployment (200, `status: cancelled`), `export` reads a server as a "
        "configuration (200), `import` reads a native server template (`template`) or another tool's backup "
        "(`data`: any backup format) as one (200), `restore` deploys a backup back with the members' roles (202; "
        "with `dry_run: true` its plan, 200). Answers are told apart by `status`: `planned` for a plan, `exported` "
        "and `imported` for a configuration read, a deployment's state otherwise."
    ),
    security=[{BEARER_AUTH: []}],
    responses={
        200: success(
            "info: the newest deployment (or the one named) and the history; cancel: the deployment, cancelled; "
            "deploy with dry_run: the plan and its warnings; export, import: a "
            "configuration read from a server or a native template",
            DeployToChatAnswer,
            {**DEPLOY_ANSWERS, **COMMUNITY_DEPLOY_ANSWERS},
        ),
        202: success(
            "deploy, rollback or restore: queued; the worker applies it (read its progress with info)",
            DeploymentView,
            {**DEPLOY_QUEUED, **RESTORE_QUEUED},
        ),
        **error_responses(
            {
                **BEARER_ERRORS,
                400: "a field is invalid, or no usable chat account is linked to the user; `details` names each field",
                403: "the user may not manage the server, or may not make some of the changes (one detail per object)",
                404: "no such server for the user, no deployment of the project to roll back or read, no deployment "
                "to cancel, or no template of that code",
                409: "another deployment to the server is queued, waiting or running (the body's `deployment_id` names "
                "it), a later deployment changed what the one to roll back did, the one to cancel has ended, the bot"
                " is not in the server, its preflight failed, its"
                " plan deletes and `confirm` is not the current plan's `plan_id` (the body then carries `plan` and"
                " `plan_id`), or it gives every member a dangerous permission that `acknowledge` does not name",
                502: "the chat platform failed or is rate-limiting the service",
                503: "deployments or bearer authentication are not configured",
            },
            limited=True,
        ),
    },
)
def deploy_to_chat(
    request: Annotated[
        DeployToChatRequest,
        Body(
            openapi_examples=request_examples(
                {**DEPLOY_REQUESTS, **COMMUNITY_DEPLOY_REQUESTS, **DEPLOY_RESTORE_REQUESTS}
            )
        ),
    ],
    user: Annotated[BearerUser, Depends(bearer_user)],
) -> Response[Answer]:
    if isinstance(request, InfoRequest):
        found = info(user, request.project_id, request.guild_id, request.deployment_id)
        if not request.drift:
            return _answer(found)
        with platform_reads(user):  # reading the server for the drift is a platform read
            return _answer(found.model_copy(update={"drift": with_drift(user, request.project_id, request.guild_id)}))
    if isinstance(request, ImportRequest) and request.data is not None:  # read from what was sent: no platform read
        if request.template is not None:
            raise BadRequest.for_field("data", "give either template or data, not both")
        return _answer(import_data(request.data))
    with platform_reads(user):  # every other action makes the bot read the platform for the user
        return _act(request, user)


def _act(
    request: DeployRequest | RollbackRequest | CancelRequest | ExportRequest | ImportRequest | RestoreRequest,
    user: BearerUser,
) -> Response[Answer]:
    if isinstance(request, CancelRequest):
        return _answer(cancel(user, deployment_id=request.deployment_id, guild_id=request.guild_id))
    if isinstance(request, RestoreRequest):
        chat_user_id, _ = managed_guild(user, request.guild_id)
        asked = RestoreAsked(**request.model_dump(exclude={"action"}))
        restored = restore(user.sub, chat_user_id, asked)
        return _answer(restored, status_code=200 if request.dry_run else 202)
    if isinstance(request, ExportRequest):
        return _answer(export_guild(user, request.guild_id))
    if isinstance(request, ImportRequest):
        if request.template is None:
            raise BadRequest.for_field("template", "is required (or data: a backup to read)")
        return _answer(import_template(request.template))
    if isinstance(request, DeployRequest):
        if request.dry_run:
            return _answer(dry_run(user, request.guild_id, request.config, prune=request.prune))
        deployment = deploy(
            user,
            request.guild_id,
            request.project_id,
            request.project_name,
            request.config,
            prune=request.prune,
            confirm=request.confirm,
            acknowledge=request.acknowledge,
        )
        return _answer(deployment, status_code=202)
    if request.dry_run:
        return _answer(rollback_dry_run(user, request.project_id, request.guild_id, request.deployment_id))
    return _answer(rollback(user, request.project_id, request.guild_id, request.deployment_id), status_code=202)


def _answer(body: Answer, status_code: int = 200) -> Response[Answer]:
    return Response(status_code, content_types.APPLICATION_JSON, body)


lambda_handler = lambda_entry_point(app)
