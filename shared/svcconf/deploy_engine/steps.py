"""What a deploy or a rollback plans: the objects it touches (plan items, shown by the dry run) and the platform
writes that do it (steps), keyed so a resumed run knows what is done. Plain data: the planners make them, the
applier runs them, the deployment record journals them."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from svcconf.config.lint import LintWarning

Kind = Literal["role", "category", "channel", "overwrite", "settings", "automod_rule", "onboarding", "welcome_screen"]
Action = Literal["create", "update", "keep", "delete"]
# which counter group of a deployment record's steps a kind counts in
KIND_GROUPS: dict[str, str] = {
    "role": "roles",
    "category": "categories",
    "channel": "channels",
    "overwrite": "overwrites",
    "settings": "settings",
    # v4
    "automod_rule": "automod",
    "onboarding": "onboarding",
    "welcome_screen": "welcome_screen",
}
EVERYONE_KEY = "@everyone"  # an overwrite's target
SETTINGS_KEY = "settings"
ROLE_OVERWRITE = 0  # overwrite type: 0 role, 1 member


def role_key(name: str) -> str:
    return f"role:{name.casefold()}"


def category_key(name: str) -> str:
    return f"category:{name.casefold()}"


def channel_key(category: str | None, channel_type: int, platform_name: str) -> str:
    return f"channel:{category or '-'}:{channel_type}:{platform_name.casefold()}"


# ---------------------------------------------------------------- what the plan says


class Change(BaseModel):
    field: str
    old: Any
    new: Any


class PlanItem(BaseModel):
    """One object of the configuration (or of the server, for a delete) and what the deploy does with it."""

    kind: Kind
    name: str
    action: Action
    id: str | None = Field(None, description="The object's id in the server; none for an object still to create.")
    changes: list[Change] = Field(default_factory=list)
    field: str = Field(description="The object's path in the configuration; empty for an object it does not name.")
    note: str | None = Field(None, description="What a person must know first, e.g. that a channel's messages go.")
    key: str = Field(exclude=True)
    owner: str | None = Field(None, exclude=True)  # an overwrite's channel or category key


class OverwriteSpec(BaseModel):
    """A desired overwrite; its target (a role key or @everyone) becomes an id when the step is applied."""

    target: str
    allow: int
    deny: int
    field: str


class RoleStep(BaseModel):
    op: Literal["create_role", "update_role"]
    key: str
    name: str
    field: str
    role_id: str | None = None
    payload: dict[str, Any]
    previous: dict[str, Any] = Field(default_factory=dict)


class ChannelStep(BaseModel):
    op: Literal["create_channel", "update_channel"]
    kind: Literal["category", "channel"]
    key: str
    name: str
    field: str
    channel_id: str | None = None
    parent: str | None = None  # the category's key (create)
    payload: dict[str, Any]
    after_create: dict[str, Any] = Field(default_factory=dict)  # what only a modify takes (channel flags)
    overwrites: list[OverwriteSpec] = Field(default_factory=list)  # create: all; update: those that change
    base_overwrites: list[dict[str, Any]] = Field(default_factory=list)  # update: the live list they merge into
    replaces_overwrites: bool = False  # update: base_overwrites leaves some out (a move leaves its old category's)
    previous: dict[str, Any] = Field(default_factory=dict)
    overwrite_keys: list[str] = Field(default_factory=list)  # the overwrite items this step creates or updates
    # the overwrite items its whole list changes besides `overwrites` (a move's left-behind ones, a rollback's)
    rewritten_keys: list[str] = Field(default_factory=list)


class GuildStep(BaseModel):
    """The guild's settings in one request; the channels they name become ids when the step is applied."""

    op: Literal["modify_guild"] = "modify_guild"
    key: str = SETTINGS_KEY
    name: str = "server settings"
    field: str = "settings"
    payload: dict[str, Any]
    channels: dict[str, str] = Field(default_factory=dict)  # platform field -> the channel's key
    previous: dict[str, Any] = Field(default_factory=dict)


class RolePosition(BaseModel):
    ref: str  # a configured role's key, or a live role's id
    position: int
    previous: int | None = None  # its position when the request is sent (after the deploy's creations)


class ReorderRoles(BaseModel):
    op: Literal["reorder_roles"] = "reorder_roles"
    key: str = "reorder:roles"
    name: str = "role order"
    field: str = "roles"
    positions: list[RolePosition]


class ChannelPosition(BaseModel):
    ref: str  # a configured channel's or category's key, or a live channel's id
    position: int
    previous: int | None = None  # the live position (None: created by this deploy)


class ReorderChannels(BaseModel):
    """One bulk position request for categories and channels (no entry changes a parent: moves are their own)."""

    op: Literal["reorder_channels"] = "reorder_channels"
    key: str = "reorder:channels"
    name: str = "channel order"
    field: str = "categories"
    positions: list[ChannelPosition]


class DeleteStep(BaseModel):
    """A pruning deploy removes what its configuration does not name; a rollback what its deployment created."""

    op: Literal["delete_role", "delete_channel"]
    kind: Kind
    key: str
    name: str
    field: str = ""
    object_id: str


class CommunityStep(BaseModel):
    """v4: an AutoMod rule created, updated or deleted, onboarding put, the welcome screen modified. The payload's
    roles and channels the deploy creates are `community.REF` + their key, resolved when the step is applied."""

    op: Literal[
        "create_automod_rule", "update_automod_rule", "delete_automod_rule", "put_onboarding", "modify_welcome_screen"
    ]
    kind: Literal["automod_rule", "onboarding", "welcome_screen"]
    key: str
    name: str
    field: str = ""
    object_id: str | None = None  # an AutoMod rule's id (update, delete)
    payload: dict[str, Any] = Field(default_factory=dict)
    previous: dict[str, Any] = Field(default_factory=dict)  # the platform's values the step replaces


Step = Annotated[
    RoleStep | ChannelStep | GuildStep | ReorderRoles | ReorderChannels | DeleteStep | CommunityStep,
    Field(discriminator="op"),
]


class DeploymentPlan(BaseModel):
    guild_id: str = ""
    items: list[PlanItem]
    steps: list[Step]
    ids: dict[str, str] = Field(description="Key of each matched object -> its live id.")
    warnings: list[LintWarning] = Field(default_factory=list)  # what a pruning plan keeps and why
    caller_id: str = ""  # the chat user the plan was made for (`caller_rights.within_reach` sets it)
    kept: list[PlanItem] = Field(default_factory=list)  # confirmed deletions that changed since: kept and named

    def writes(self) -> int:
        return len(self.steps)

    def deletes(self) -> list[PlanItem]:
        """The objects the plan deletes (what `confirm` is for); an overwrite a move leaves behind is an access
        change of its channel, not an object deleted."""
        return [item for item in self.items if item.action == "delete" and item.kind != "overwrite"]

    @property
    def plan_id(self) -> str:
        """A digest of the guild, the caller's chat user id, what the plan shows (kinds, ids, names, changes) and
        every step's payload (what each create, update and delete would send), not of counts or warnings: the same
        server, configuration and caller give the same id; two plans that would write differently never share one."""
        shown = [
            [item.kind, item.action, item.id, item.name, [[c.field, c.old, c.new] for c in item.changes]]
            for item in self.items
            if item.action != "keep"
        ]
        writes = [step.model_dump(mode="json") for step in self.steps]
        text = json.dumps([self.guild_id, self.caller_id, shown, writes], sort_keys=True, default=str)
        return f"plan_{hashlib.sha256(text.encode()).hexdigest()[:32]}"
