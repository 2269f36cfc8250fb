"""What a deploy or a rollback plans: the objects it touches (plan items, shown by the dry run) and the platform
writes that do it (steps), keyed so a resumed run knows what is done. Plain data: the planners make them, the
applier runs them, the deployment record journals them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

Kind = Literal["role", "category", "channel", "overwrite", "settings"]
Action = Literal["create", "update", "keep", "delete"]
# which counter group of a deployment record's steps a kind counts in
KIND_GROUPS: dict[str, str] = {
    "role": "roles",
    "category": "categories",
    "channel": "channels",
    "overwrite": "overwrites",
    "settings": "settings",
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
    """One object of the configuration and what the deploy does with it."""

    kind: Kind
    name: str
    action: Action
    changes: list[Change] = Field(default_factory=list)
    field: str = Field(description="The object's path in the configuration.")
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
    previous: dict[str, Any] = Field(default_factory=dict)
    overwrite_keys: list[str] = Field(default_factory=list)  # the overwrite items this step creates or updates


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


class ReorderRoles(BaseModel):
    op: Literal["reorder_roles"] = "reorder_roles"
    key: str = "reorder:roles"
    name: str = "role order"
    field: str = "roles"
    positions: list[RolePosition]


class DeleteStep(BaseModel):
    """A rollback removes what its deployment created."""

    op: Literal["delete_role", "delete_channel"]
    kind: Kind
    key: str
    name: str
    field: str = ""
    object_id: str


Step = Annotated[RoleStep | ChannelStep | GuildStep | ReorderRoles | DeleteStep, Field(discriminator="op")]


class DeploymentPlan(BaseModel):
    items: list[PlanItem]
    steps: list[Step]
    ids: dict[str, str] = Field(description="Key of each matched object -> its live id.")

    def writes(self) -> int:
        return len(self.steps)
