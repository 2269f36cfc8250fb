"""deployToChat's answers: a deployment as its caller sees it (deploy, info, rollback) and a dry run's plan."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf.config import ServerConfig
from svcconf.config.answers import AnswerConfig
from svcconf.config.lint import LintWarning
from svcconf.deploy_engine.matching import with_ids
from svcconf.deploy_engine.member_grants import MembersPlan
from svcconf.deploy_engine.steps import PlanItem
from svcconf.deployments.drift import DriftItem
from svcconf.deployments.quota import QuotaWarning
from svcconf.store.deployment_items import DeploymentKind, DeploymentRecord, DeploymentStatus, Steps

OPEN_SET = (
    "Values may be added in later releases (v4 added `cancelled`): read it as an open set and keep a value you do"
    " not know."
)
OPEN_KINDS = "Values may be added in later releases: read it as an open set and keep a value you do not know."

# A deploy's configuration "as deployed" once it ran to its end; a cancelled one stopped halfway.
FINISHED_AS_DEPLOYED = ("succeeded", "partial", "failed")


class Generation(BaseModel):
    """The deployment as the specification's generation record describes it."""

    project_id: str
    project_name: str
    guild_id: str
    guild_name: str
    status: DeploymentStatus = Field(description=OPEN_SET)
    result: str | None = None
    error: str | None = None
    steps: Steps


class HistoryEntry(BaseModel):
    """One deployment of the project, as `info`'s history lists it."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    deployment_id: str
    kind: DeploymentKind = Field(description=OPEN_KINDS)
    status: DeploymentStatus = Field(description=OPEN_SET)
    created_at: datetime
    finished_at: datetime | None = None
    result: str | None = None

    @classmethod
    def of(cls, record: DeploymentRecord) -> HistoryEntry:
        return cls(
            deployment_id=record.deployment_id,
            kind=record.kind,
            status=record.status,
            created_at=record.created_at,
            finished_at=record.finished_at,
            result=record.result,
        )


def _drift_optional(schema: dict[str, Any]) -> None:
    schema["required"] = [name for name in schema.get("required", []) if name != "drift"]


class DeploymentView(BaseModel):
    # Every field is sent but `drift`, which only `info` with `drift: true` has.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True, json_schema_extra=_drift_optional)

    ok: bool = True
    deployment_id: str
    kind: DeploymentKind = Field(description=OPEN_KINDS)
    status: DeploymentStatus = Field(description=OPEN_SET)
    steps: Steps
    generation: Generation
    backup_id: str | None = None
    deployment_code: str | None = None
    rollback_of: str | None = None
    created_at: datetime
    finished_at: datetime | None = None
    resumes_at: datetime | None = Field(None, description="While `waiting`: when the deployment goes on by itself.")
    wait_reason: str | None = Field(None, description="While `waiting`: why.")
    warnings: list[QuotaWarning | LintWarning] = Field(
        default_factory=list,
        description="deploy: the plan passes the quota; the permission-safety lint; channels the caller cannot view.",
    )
    config: AnswerConfig | None = Field(
        None,
        description="info, once a deploy has finished: the configuration as deployed, with the id of every object it"
        " matched or created.",
    )
    history: list[HistoryEntry] | None = Field(
        None,
        description="info: the project's deployments by the caller (to `guild_id`, when given), newest first, at most"
        " 20; null in other answers.",
    )
    drift: list[DriftItem] | None = Field(
        None,
        description="info with drift: what changed on the server since the deployment finished, as plan items, each"
        " naming the later deployment of this service that made it, or who did (the audit log, VIEW_AUDIT_LOG).",
    )


def _members_optional(schema: dict[str, Any]) -> None:
    schema["required"] = [name for name in schema.get("required", []) if name != "members"]


class DryRun(BaseModel):
    # Every field is sent, so openapi.json marks them required; `status` tells a plan from a DeploymentView. But for
    # `members`, which only a restore's plan has.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True, json_schema_extra=_members_optional)

    ok: bool = True
    status: Literal["planned"] = Field("planned", description="A dry run changes nothing: it is only a plan.")
    steps: Steps
    plan: list[PlanItem]
    plan_id: str = Field(description="The plan's digest: a deploy whose plan deletes sends it back as `confirm`.")
    warnings: list[QuotaWarning | LintWarning]
    members: MembersPlan | None = Field(None, description="restore: the members' role grants it would make.")


def view(
    record: DeploymentRecord, deployment_code: str | None = None, history: list[HistoryEntry] | None = None
) -> DeploymentView:
    generation = Generation(
        project_id=record.project_id,
        project_name=record.project_name,
        guild_id=record.guild_id,
        guild_name=record.guild_name,
        status=record.status,
        result=record.result,
        error=record.error,
        steps=record.steps,
    )
    return DeploymentView(
        deployment_id=record.deployment_id,
        kind=record.kind,
        status=record.status,
        steps=record.steps,
        generation=generation,
        backup_id=record.backup_id,
        deployment_code=record.deployment_code or deployment_code,
        rollback_of=record.rollback_of,
        created_at=record.created_at,
        finished_at=record.finished_at,
        resumes_at=record.resumes_at,
        wait_reason=record.wait_reason,
        config=deployed_config(record),
        history=history,
    )


def deployed_config(record: DeploymentRecord) -> ServerConfig | None:
    """A finished deploy's configuration with the ids it matched (stored with the request) and created (journaled)."""
    if record.kind != "deploy" or record.status not in FINISHED_AS_DEPLOYED or record.configuration is None:
        return None
    return with_ids(ServerConfig.model_validate(record.configuration), record.journal_created)
