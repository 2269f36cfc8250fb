"""A deployment as the deployments table keeps it: its record (status, step counts, configuration, journal), the
progress one applied step adds, and the record's form in its item (`svcconf.store.deployment_records` reads and
writes the items).

Across releases (docs/11-production.md, "Stored items across releases"): a deployment carries the
`schema_version` of the release that wrote it (none before version 2: such an item reads as 1). During a canary,
or after a rollback, a deployment queued by one release is run by the release before or after it, so a reader
takes one version back and one forward: a field it does not know is kept on the record (`extra="allow"`), and in
the item, which the worker only ever updates attribute by attribute; a field added since has a default.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf.deploy_engine.steps import KIND_GROUPS
from svcconf.store import documents
from svcconf.store.dynamo import UpdateExpression, plain_integers

SCHEMA_VERSION = 2  # of the items this release writes; 1 is the shape before the version was stored
DeploymentKind = Literal["deploy", "rollback", "restore"]
DeploymentStatus = Literal["queued", "running", "waiting", "succeeded", "partial", "failed", "cancelled"]
FINISHED: tuple[DeploymentStatus, ...] = ("succeeded", "partial", "failed", "cancelled")
ACTIVE: tuple[DeploymentStatus, ...] = ("queued", "running", "waiting")
COUNTERS = ("planned", "created", "updated", "existing", "deleted", "failed")


class KindCounts(BaseModel):
    planned: int = 0
    created: int = 0
    updated: int = 0
    existing: int = 0
    deleted: int = 0
    failed: int = 0


class StepError(BaseModel):
    kind: str
    name: str
    message: str


class MemberCounts(BaseModel):
    """A restore's member role grants: `planned`, `granted` and `failed` count grants (member, role); `left_server`
    counts the backup's members no longer in the server. Its rollback: `planned` grants to take back, `removed`."""

    planned: int = 0
    granted: int = 0
    left_server: int = 0
    failed: int = 0
    removed: int = 0  # the rollback of a restore: grants it took back


class RestoreSource(BaseModel):
    """What a restore restores: the backup, the parts asked for, and whether members get their roles back."""

    backup_id: str
    only: list[str]
    members: bool = True
    acknowledged_dangerous_members: bool = False


class Steps(BaseModel):
    roles: KindCounts = Field(default_factory=KindCounts)
    categories: KindCounts = Field(default_factory=KindCounts)
    channels: KindCounts = Field(default_factory=KindCounts)
    overwrites: KindCounts = Field(default_factory=KindCounts)
    settings: KindCounts = Field(default_factory=KindCounts)  # the guild's own settings: one object
    # v4: AutoMod rules, onboarding and the welcome screen (one object each)
    automod: KindCounts = Field(default_factory=KindCounts)
    onboarding: KindCounts = Field(default_factory=KindCounts)
    welcome_screen: KindCounts = Field(default_factory=KindCounts)
    errors: list[StepError] = Field(default_factory=list)
    members: MemberCounts | None = None  # a restore's member role grants

    def total(self, counter: str) -> int:
        return sum(getattr(getattr(self, group), counter) for group in KIND_GROUPS.values())


class DeploymentRecord(BaseModel):
    # A newer release's attributes are kept, not dropped: see the module's docstring.
    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    deployment_id: str
    kind: DeploymentKind
    user_id: str
    chat_user_id: str
    project_id: str
    project_name: str
    guild_id: str
    guild_name: str
    bot_role_ids: list[str] = Field(default_factory=list)  # the bot's roles when the request checked the guild
    status: DeploymentStatus
    steps: Steps = Field(default_factory=Steps)
    result: str | None = None
    error: str | None = None
    backup_id: str | None = None
    deployment_code: str | None = None
    rollback_of: str | None = None
    rolled_back_by: str | None = None
    cancelled_by: str | None = None  # the chat user id of who cancelled it
    configuration: dict[str, Any] | None = None
    journal_created: dict[str, str] = Field(default_factory=dict)
    journal_updated: dict[str, dict[str, Any]] = Field(default_factory=dict)
    journal_failed: dict[str, str] = Field(default_factory=dict)
    journal_deleted: dict[str, str] = Field(default_factory=dict)  # plan key -> the id of the object deleted
    # object key -> when its write began (Unix ms), set with its outcome; those in flight are on the guild's lock
    journal_intents: dict[str, int] = Field(default_factory=dict)
    journal_after: dict[str, str] = Field(default_factory=dict)  # object key -> its fingerprint
    restore: RestoreSource | None = None  # a restore's backup and options
    members_cursor: int = 0  # a restore: how many of the backup's members (by user id) the grants went through
    confirmed_deletes: list[str] | None = None  # a pruning deploy: the ids its confirmed plan deletes, and no other
    confirmed_fingerprints: dict[str, str] | None = None  # their fingerprints then: one changed since is kept
    counted: bool = False  # the first worker run has set the planned and existing counts
    resumes_at: datetime | None = None  # while `waiting`: when the worker runs it again
    wait_reason: str | None = None  # while `waiting`: why, in a sentence
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class Progress(BaseModel):
    """One applied step, as the worker records it."""

    created: dict[str, str] = Field(default_factory=dict)
    updated: dict[str, dict[str, Any]] = Field(default_factory=dict)
    deleted: dict[str, str] = Field(default_factory=dict)
    failed: dict[str, str] = Field(default_factory=dict)
    after: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    errors: list[StepError] = Field(default_factory=list)


def merged(progresses: list[Progress]) -> Progress:
    """Several steps' progress as one, in their order: a later entry of a key wins, the counts add up."""
    whole = Progress()
    for progress in progresses:
        for journal in ("created", "updated", "deleted", "failed", "after"):
            getattr(whole, journal).update(getattr(progress, journal))
        for group, counters in progress.counts.items():
            added = whole.counts.setdefault(group, {})
            for counter, amount in counters.items():
                added[counter] = added.get(counter, 0) + amount
        whole.errors.extend(progress.errors)
    return whole


def configuration_key(deployment_id: str) -> str:
    """Where the documents bucket keeps a deployment's configuration when its item cannot."""
    return f"deployments/{deployment_id}/configuration.json.bz2"


def item_attributes(record: DeploymentRecord) -> dict[str, Any]:
    """The record's attributes as its item stores them (the table's key aside)."""
    item = record.model_dump(mode="json", exclude={"configuration"}, exclude_none=True)
    item["schema_version"] = SCHEMA_VERSION  # what this release writes, whatever it read
    if record.configuration is not None:
        item["configuration"] = documents.stored(record.configuration, configuration_key(record.deployment_id))
    return item


def record_from(item: dict[str, Any]) -> DeploymentRecord:
    """The record an item of this release, the one before or the one after it keeps."""
    values = {key: value for key, value in item.items() if key not in ("pk", "sk")}
    values.setdefault("schema_version", 1)  # written before the version was stored
    if "configuration" in values:
        values["configuration"] = documents.loaded(values["configuration"])
    return DeploymentRecord.model_validate(plain_integers(values))


def progress_update(progress: Progress, now: datetime, intents: dict[str, int] | None = None) -> UpdateExpression:
    """The update that adds applied steps' progress to their deployment's item, attribute by attribute, with the
    intents of their writes (object key -> Unix ms)."""
    update = UpdateExpression()
    for key, at_ms in (intents or {}).items():
        update.set(["journal_intents", key], at_ms)
    for key, object_id in progress.created.items():
        update.set(["journal_created", key], object_id)
    for key, updated in progress.updated.items():
        update.set(["journal_updated", key], updated)
    for key, object_id in progress.deleted.items():
        update.set(["journal_deleted", key], object_id)
    for key, reason in progress.failed.items():
        update.set(["journal_failed", key], reason)
    for key, fingerprint in progress.after.items():
        update.set(["journal_after", key], fingerprint)
    for group, counters in progress.counts.items():
        for counter, amount in counters.items():
            update.add(["steps", group, counter], amount)
    if progress.errors:
        update.append(["steps", "errors"], [error.model_dump() for error in progress.errors])
    update.set(["updated_at"], now.isoformat())
    return update
