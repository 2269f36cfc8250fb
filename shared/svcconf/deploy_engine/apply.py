"""Applying a plan: one platform request per step (two for a channel whose flags only a modify takes), the steps
side by side across the platform's buckets in the order they need (`scheduler.py`), each outcome checkpointed.

What a failure means decides what happens next:
- the platform refuses one object (missing permissions, an invalid body, a cap, an object gone): that object
  is recorded as failed with the platform's reason and the deploy goes on; what depends on it (a channel of a
  failed category, an overwrite for a failed role) fails or is left out with its own reason;
- the platform is slow, down or rate-limiting past one call's wait: `DeploymentInterrupted`, the caller
  re-queues the rest (the plan is recomputed from the live guild, so nothing is done twice);
- the bot is gone from the guild or its token refused: `DeploymentAborted`, nothing more can work.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, Field

from svcconf.chat import (
    Channel,
    ChatBotUnauthorized,
    ChatClient,
    ChatError,
    ChatRateLimited,
    ChatUnavailable,
    Guild,
    MissingAccess,
    Role,
    UnknownChannel,
    UnknownGuild,
    UnknownRole,
)
from svcconf.deploy_engine.apply_community import Unresolved, apply_community
from svcconf.deploy_engine.scheduler import AwaitedIds, StepScheduler, StepsStopped
from svcconf.deploy_engine.steps import (
    KIND_GROUPS,
    ROLE_OVERWRITE,
    ChannelStep,
    CommunityStep,
    DeleteStep,
    DeploymentPlan,
    GuildStep,
    PlanItem,
    ReorderChannels,
    ReorderRoles,
    RoleStep,
    Step,
)

# What runs beside the steps: given the ids as the steps make them and whether they are still going, it says
# whether it finished.
Beside = Callable[[AwaitedIds, Callable[[], bool]], bool]


class ItemError(BaseModel):
    kind: str
    name: str
    message: str


class UpdatedObject(BaseModel):
    id: str
    kind: str
    previous: dict[str, Any]


class StepOutcome(BaseModel):
    """What one step did: checkpointed before the next step runs."""

    key: str
    created: dict[str, str] = Field(default_factory=dict)  # object key -> the new object's id
    updated: dict[str, UpdatedObject] = Field(default_factory=dict)
    deleted: dict[str, str] = Field(default_factory=dict)
    failed: dict[str, str] = Field(default_factory=dict)  # object key -> reason
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)  # "roles" -> {"created": 1}
    errors: list[ItemError] = Field(default_factory=list)
    # object key -> the object as the platform answered this step's last write of it (the journal's fingerprint)
    answers: dict[str, Role | Channel | Guild] = Field(default_factory=dict)

    def count(self, kind: str, outcome: str, amount: int = 1) -> None:
        if amount:
            group = self.counts.setdefault(KIND_GROUPS[kind], {})
            group[outcome] = group.get(outcome, 0) + amount

    def fail(self, item: PlanItem, message: str) -> None:
        self.failed[item.key] = message
        self.errors.append(ItemError(kind=item.kind, name=item.name, message=message))
        self.count(item.kind, "failed")


class DeploymentInterrupted(Exception):
    """The platform cannot take more now; the rest is to be tried again after `retry_after` seconds."""

    def __init__(self, reason: str, retry_after: float = 0.0):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class DeploymentAborted(Exception):
    """Nothing more can work in this guild (the bot was removed, its token refused)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _reason_of(error: ChatError) -> str:
    if error.platform_code is None or str(error.platform_code) in error.message:
        return error.message
    return f"{error.message} (the chat platform's code {error.platform_code})"


class PlanApplier:
    def __init__(self, client: ChatClient, guild_id: str, plan: DeploymentPlan, *, audit_reason: str):
        self.client = client
        self.guild_id = guild_id
        self.plan = plan
        self.audit_reason = audit_reason
        self.ids = dict(plan.ids)
        self.items = {item.key: item for item in plan.items}

    def run(
        self,
        *,
        skip: set[str],
        checkpoint: Callable[[StepOutcome], None],
        has_time: Callable[[], bool],
        intend: Callable[[Step], None] = lambda step: None,
        beside: Beside | None = None,
    ) -> bool:
        """Applies the steps not in `skip` side by side across the platform's buckets (`scheduler.py`), each
        announced to `intend` before its write and its outcome handed to `checkpoint`; False when
        time ran out before the last one. `beside` runs alongside (a restore's member grants), given the ids as the
        steps make them and whether the steps are still going; its result joins the steps'."""
        scheduler = StepScheduler(self.plan.steps, self.guild_id)

        def execute(step: Step) -> Callable[[], None]:
            # Its intent before its request; its outcome after, while the next step of its bucket goes. Both are
            # called from the steps' threads side by side (the worker's journal gathers them into its writes).
            intend(step)
            outcome = self._apply(step)
            return lambda: checkpoint(outcome)

        if beside is None:
            return scheduler.run(execute, has_time=has_time, skip=skip)
        with ThreadPoolExecutor(1, thread_name_prefix="beside") as pool:
            ids = AwaitedIds(self.ids, scheduler)
            alongside = pool.submit(
                contextvars.copy_context().run, beside, ids, lambda: has_time() and not scheduler.stopped
            )
            try:
                finished = scheduler.run(execute, has_time=has_time, skip=skip)
            except BaseException:
                alongside.exception()  # it stops too (the steps are no longer going); the steps' failure is raised
                raise
            try:
                return alongside.result() and finished
            except StepsStopped:  # it waited for a step the run did not reach: the next run goes on from its cursor
                return False

    def _apply(self, step: Step) -> StepOutcome:
        outcome = StepOutcome(key=step.key)
        try:
            if isinstance(step, RoleStep):
                self._role(step, outcome)
            elif isinstance(step, ChannelStep):
                self._channel(step, outcome)
            elif isinstance(step, GuildStep):
                self._settings(step, outcome)
            elif isinstance(step, ReorderRoles):
                self._reorder(step, outcome)
            elif isinstance(step, ReorderChannels):
                self._reorder_channels(step, outcome)
            elif isinstance(step, CommunityStep):
                self._community(step, outcome)
            else:
                self._delete(step, outcome)
        except (UnknownGuild, MissingAccess, ChatBotUnauthorized) as error:
            raise DeploymentAborted(f"The bot can no longer work in this server: {_reason_of(error)}") from error
        except (ChatRateLimited, ChatUnavailable) as error:
            retry_after = getattr(error, "retry_after", None) or 0.0
            raise DeploymentInterrupted(_reason_of(error), retry_after) from error
        except ChatError as error:
            self._failed(step, outcome, _reason_of(error))
        return outcome

    # -- steps ----------------------------------------------------------------------------------------------

    def _role(self, step: RoleStep, outcome: StepOutcome) -> None:
        if step.op == "create_role":
            role = self.client.create_role(self.guild_id, step.payload, reason=self.audit_reason)
            self.ids[step.key] = role.id
            outcome.created[step.key] = role.id
            outcome.answers[step.key] = role
            outcome.count("role", "created")
            return
        assert step.role_id is not None
        outcome.answers[step.key] = self.client.modify_role(
            self.guild_id, step.role_id, step.payload, reason=self.audit_reason
        )
        outcome.updated[step.key] = UpdatedObject(id=step.role_id, kind="role", previous=step.previous)
        outcome.count("role", "updated")

    def _channel(self, step: ChannelStep, outcome: StepOutcome) -> None:
        item = self.items[step.key]
        overwrite_items = [self.items[key] for key in step.overwrite_keys]
        resolved, unresolved = self._resolve_overwrites(step)
        for spec_item in unresolved:
            outcome.fail(spec_item, "its role could not be created, so this overwrite was left out")
        applied = [i for i in overwrite_items if i.key not in outcome.failed]
        body = dict(step.payload)
        if step.op == "create_channel":
            if step.parent is not None:
                if step.parent not in self.ids:
                    outcome.fail(item, "its category could not be created")
                    for overwrite in applied:
                        outcome.fail(overwrite, "its channel could not be created")
                    return
                body["parent_id"] = self.ids[step.parent]
            body["permission_overwrites"] = resolved
            channel = self.client.create_channel(self.guild_id, body, reason=self.audit_reason)
            self.ids[step.key] = channel.id
            outcome.created[step.key] = channel.id
            outcome.answers[step.key] = channel
            outcome.count(item.kind, "created")
            outcome.count("overwrite", "created", len(applied))
            if step.after_create:  # recorded as created first: a refusal here leaves it to the rollback all the same
                outcome.answers[step.key] = self.client.modify_channel(
                    channel.id, step.after_create, reason=self.audit_reason
                )
            return
        assert step.channel_id is not None
        if step.parent is not None:  # a move into a category (one the deploy may just have created)
            if step.parent not in self.ids:
                outcome.fail(item, "its new category could not be created, so it stays where it is")
                return
            body["parent_id"] = self.ids[step.parent]
        if step.overwrites or step.replaces_overwrites:
            merged = {entry["id"]: entry for entry in step.base_overwrites}
            merged |= {entry["id"]: entry for entry in resolved}
            body["permission_overwrites"] = list(merged.values())
        outcome.answers[step.key] = self.client.modify_channel(step.channel_id, body, reason=self.audit_reason)
        if item.action == "update":
            outcome.updated[step.key] = UpdatedObject(id=step.channel_id, kind=item.kind, previous=step.previous)
            outcome.count(item.kind, "updated")
        elif applied:  # only overwrites changed: the channel counts as existing, and rollback restores them
            outcome.updated[step.key] = UpdatedObject(id=step.channel_id, kind=item.kind, previous=step.previous)
        for overwrite in applied:
            outcome.count("overwrite", "created" if overwrite.action == "create" else "updated")
        outcome.count("overwrite", "updated", len(step.rewritten_keys))

    def _settings(self, step: GuildStep, outcome: StepOutcome) -> None:
        item = self.items.get(step.key)
        body = dict(step.payload)
        for field, channel_key in step.channels.items():
            if channel_key in self.ids:
                body[field] = self.ids[channel_key]
            elif item is not None:
                outcome.errors.append(
                    ItemError(kind="settings", name=item.name, message=f"{field}: its channel could not be created")
                )
                outcome.count("settings", "failed")
        if not body:
            return
        outcome.answers[step.key] = self.client.modify_guild(self.guild_id, body, reason=self.audit_reason)
        outcome.updated[step.key] = UpdatedObject(id=self.guild_id, kind="settings", previous=step.previous)
        outcome.count("settings", "updated")

    def _resolve_overwrites(self, step: ChannelStep) -> tuple[list[dict[str, Any]], list[PlanItem]]:
        resolved, unresolved = [], []
        for spec, key in zip(step.overwrites, step.overwrite_keys, strict=True):
            target_id = self.ids.get(spec.target)
            if target_id is None:
                unresolved.append(self.items[key])
                continue
            entry = {"id": target_id, "type": ROLE_OVERWRITE, "allow": str(spec.allow), "deny": str(spec.deny)}
            resolved.append(entry)
        return resolved, unresolved

    def _reorder(self, step: ReorderRoles, outcome: StepOutcome) -> None:
        positions, previous = [], {}
        for entry in step.positions:
            role_id = self.ids.get(entry.ref) if entry.ref.startswith("role:") else entry.ref
            if role_id is None:
                continue  # created by this deploy, and its creation failed
            positions.append({"id": role_id, "position": entry.position})
            previous[role_id] = entry.previous
        self.client.reorder_roles(self.guild_id, positions, reason=self.audit_reason)
        # Journaled with each role's position before the request, so a rollback can restore the order.
        outcome.updated[step.key] = UpdatedObject(id=self.guild_id, kind="role", previous={"positions": previous})

    def _reorder_channels(self, step: ReorderChannels, outcome: StepOutcome) -> None:
        """Position-only entries (moves were their channels' own requests), so the one-parent rule holds."""
        positions, previous = [], {}
        for entry in step.positions:
            channel_id = self.ids.get(entry.ref, entry.ref if entry.ref.isdigit() else None)
            if channel_id is None:
                continue  # created by this deploy, and its creation failed
            positions.append({"id": channel_id, "position": entry.position})
            previous[channel_id] = entry.previous
        self.client.reorder_channels(self.guild_id, positions, reason=self.audit_reason)
        # Journaled with each channel's position before (None: created by this deploy), so a rollback can restore it.
        outcome.updated[step.key] = UpdatedObject(id=self.guild_id, kind="channel", previous={"positions": previous})

    def _delete(self, step: DeleteStep, outcome: StepOutcome) -> None:
        try:
            if step.op == "delete_role":
                self.client.delete_role(self.guild_id, step.object_id, reason=self.audit_reason)
            else:
                self.client.delete_channel(step.object_id, reason=self.audit_reason)
        except (UnknownRole, UnknownChannel):
            pass  # already gone: what the rollback wanted
        outcome.deleted[step.key] = step.object_id
        outcome.count(step.kind, "deleted")

    def _community(self, step: CommunityStep, outcome: StepOutcome) -> None:
        """v4: an AutoMod rule, onboarding or the welcome screen (apply_community.py)."""
        try:
            done, object_id = apply_community(self.client, self.guild_id, step, self.ids, self.audit_reason)
        except Unresolved as missing:
            item = self.items.get(step.key)
            if item is not None:
                outcome.fail(item, f"what it names could not be created ({missing})")
            return
        if done == "created" and step.kind == "automod_rule":
            self.ids[step.key] = object_id
            outcome.created[step.key] = object_id
        elif done == "deleted":
            outcome.deleted[step.key] = object_id
        else:
            outcome.updated[step.key] = UpdatedObject(id=object_id, kind=step.kind, previous=step.previous)
        outcome.count(step.kind, done)

    def _failed(self, step: Step, outcome: StepOutcome, message: str) -> None:
        item = self.items.get(step.key)
        if item is not None and item.action != "keep":
            outcome.fail(item, message)
        else:
            outcome.failed[step.key] = message
            if item is None:  # the role order: no object of its own
                outcome.errors.append(ItemError(kind="role", name=step.name, message=message))
        if isinstance(step, ChannelStep):
            for key in step.overwrite_keys:
                if key not in outcome.failed:
                    outcome.fail(self.items[key], f"its {self.items[step.key].kind} could not be changed: {message}")
