"""A worker run's journal, written from the steps running side by side across the platform's buckets:

- the intent before each platform write, on the guild's lock (`svcconf.store.write_intents`): a small item, so a
  step's request waits for a small write, however large the deployment's journal has grown;
- each step's outcome after it, on the deployment's item with the intents of its writes, gathered: while one update
  of the item is under way the outcomes that arrive wait, and the next update takes them all
  (`svcconf.store.group_commit`); the creations among them counted against the guild's quota in the same turn, a
  restore's member grants' progress (beside the steps) in turn with them.

Each kind of write goes one at a time (moto, the local runner's DynamoDB, loses one of two concurrent updates of an
item), the two side by side. At the platform's caps (750 steps) the outcomes take about half as many updates as
steps.
"""

from __future__ import annotations

from typing import NamedTuple

from svcconf.clock import utc_now
from svcconf.deploy_engine.apply import StepOutcome
from svcconf.deploy_engine.journal import epoch_ms, fingerprint_of
from svcconf.deploy_engine.steps import DeploymentPlan, Step
from svcconf.deployments import quota as creation_quota
from svcconf.store import restore_journal, write_intents
from svcconf.store.deployment_items import DeploymentRecord, MemberCounts, Progress, StepError, merged
from svcconf.store.deployment_records import DeploymentCancelled, DeploymentRepository
from svcconf.store.group_commit import GroupCommit

# The writes whose intent a deploy journals first: what a run cut off may have done without its checkpoint.
JOURNALED_WRITES = (
    *("create_role", "update_role", "create_channel", "update_channel", "modify_guild"),
    *("delete_role", "delete_channel"),
)


class Intent(NamedTuple):
    key: str  # the object's
    at_ms: int  # when its write begins (Unix ms)


class MemberProgress(NamedTuple):
    """A restore's member grants beside the steps: how far they went, and every grant made so far."""

    cursor: int
    counts: MemberCounts
    grants: list[tuple[str, str]]


def progress_of(outcome: StepOutcome, deleted_roles: set[str] | None = None) -> Progress:
    """One step's journal entries; a channel's fingerprint leaves out the overwrites of roles the plan deletes."""
    return Progress(
        created=outcome.created,
        updated={key: entry.model_dump() for key, entry in outcome.updated.items()},
        deleted=outcome.deleted,
        failed=outcome.failed,
        after={key: fingerprint_of(answer, deleted_roles or set()) for key, answer in outcome.answers.items()},
        counts=outcome.counts,
        errors=[StepError(**error.model_dump()) for error in outcome.errors],
    )


class RunJournal:
    """`intend` and `checkpoint` for `PlanApplier.run`, called from its steps' threads."""

    def __init__(self, repository: DeploymentRepository, record: DeploymentRecord, plan: DeploymentPlan) -> None:
        self._repository = repository
        self._record = record
        self._plan = plan
        self._deleted_roles = {step.object_id for step in plan.steps if step.op == "delete_role"}
        self._began: dict[str, int] = {}  # the steps' intents, until their outcome is journaled with them
        self._intents: GroupCommit[Intent] = GroupCommit(self._write_intents)
        self._outcomes: GroupCommit[StepOutcome | MemberProgress] = GroupCommit(self._write_outcomes)

    @property
    def writes(self) -> int:
        """The updates of the deployment's item the steps' outcomes took."""
        return self._outcomes.writes

    def intend(self, step: Step) -> None:
        """Before a write of a deploy or a restore; `DeploymentCancelled` if it was cancelled: the write is not made."""
        if self._record.kind in ("deploy", "restore") and step.op in JOURNALED_WRITES:
            intent = Intent(step.key, epoch_ms(utc_now()))
            self._intents.submit(intent)
            self._began[intent.key] = intent.at_ms

    def checkpoint(self, outcome: StepOutcome) -> None:
        """After a step: journaled, then `DeploymentCancelled` if it was cancelled, before the next step starts."""
        self._outcomes.submit(outcome)

    def save_members(self, cursor: int, counts: MemberCounts, grants: list[tuple[str, str]]) -> None:
        """A restore's member grants so far, on the deployment's item too: in turn with the steps' outcomes."""
        self._outcomes.submit(MemberProgress(cursor, counts, list(grants)))

    def _write_intents(self, intents: list[Intent]) -> None:
        write_intents.record_intents(self._record, dict(intents))

    def _write_outcomes(self, entries: list[StepOutcome | MemberProgress]) -> None:
        members = [entry for entry in entries if isinstance(entry, MemberProgress)]
        if members:  # the last says all
            restore_journal.save_member_progress(self._record, *members[-1])
        outcomes = [entry for entry in entries if isinstance(entry, StepOutcome)]
        if not outcomes:
            return
        progress = merged([progress_of(outcome, self._deleted_roles) for outcome in outcomes])
        began = {outcome.key: self._began.pop(outcome.key) for outcome in outcomes if outcome.key in self._began}
        status = self._repository.record_progress(self._record, progress, utc_now(), began)
        if progress.created:
            creation_quota.record_creations(self._record.guild_id, self._plan, progress.created, utc_now())
        if status == "cancelled":
            raise DeploymentCancelled(self._record.deployment_id)
