"""What both sides of a deployment share: the queue's job, the guild lock's duration, the table, planned counts."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from svcconf.backups import archive
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.rollback import RollbackJournal, RollbackPlan, plan_rollback
from svcconf.deploy_engine.snapshot import GuildSnapshot
from svcconf.deploy_engine.steps import KIND_GROUPS, DeploymentPlan
from svcconf.settings import get_settings
from svcconf.store.deployment_items import DeploymentRecord, KindCounts, Steps
from svcconf.store.deployment_records import DeploymentRepository

LOCK_SECONDS = 2 * 3600  # a lost worker frees its guild after this
WHO_MAY_CANCEL = (
    "the deployer, the server's owner, an administrator, or a member with MANAGE_GUILD whose highest role is above"
    " the deployer's"
)


class DeployJob(BaseModel):
    """The queue's message: which deployment to run (or resume), and how often it was interrupted."""

    user_id: str
    project_id: str
    deployment_id: str
    interruptions: int = 0
    wake_at: datetime | None = None  # the schedule's delivery for a deployment waiting until then


def deployment_repository() -> DeploymentRepository:
    return DeploymentRepository(get_settings().deployments_table)


def job_of(record: DeploymentRecord, interruptions: int = 0) -> DeployJob:
    return DeployJob(
        user_id=record.user_id,
        project_id=record.project_id,
        deployment_id=record.deployment_id,
        interruptions=interruptions,
    )


def rollback_journal(target: DeploymentRecord, done: dict[str, str] | None = None) -> RollbackJournal:
    """What the rollback of `target` works from: its journal, and what the rollback itself made so far (`done`)."""
    return RollbackJournal(
        created=target.journal_created,
        updated={key: entry["id"] for key, entry in target.journal_updated.items()},
        deleted=target.journal_deleted,
        after=target.journal_after,
        done=done or {},
    )


def planned_steps(plan: DeploymentPlan) -> Steps:
    steps = Steps()
    for item in plan.items:
        counts: KindCounts = getattr(steps, KIND_GROUPS[item.kind])
        if item.action == "keep":
            counts.existing += 1
        else:
            counts.planned += 1
    return steps


def rollback_plan(
    live: LiveGuild, target: DeploymentRecord, backup_id: str, done: dict[str, str] | None = None
) -> RollbackPlan:
    """What undoing `target` writes now: from its snapshot (`backup_id`) and its journal, and what the rollback
    itself made so far (`done`). The request checks it for the caller (and shows it, for a dry run); the worker
    applies it. `BackupNotFound` when the snapshot is gone."""
    snapshot = GuildSnapshot.from_backup_data(archive.get_backup(backup_id).backup_data)
    return plan_rollback(live, snapshot, rollback_journal(target, done))
