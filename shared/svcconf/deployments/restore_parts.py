"""A restore's plan: a deploy's plan of the backup's configuration, kept to the parts the restore asks for
(`only`: roles; channels with categories and overwrites; settings with the server's name and @everyone's
permissions; members, which the worker grants after the plan's steps).
"""

from __future__ import annotations

from typing import Literal

from svcconf.config import ServerConfig
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import (
    EVERYONE_KEY,
    ChannelStep,
    DeleteStep,
    DeploymentPlan,
    GuildStep,
    PlanItem,
    ReorderChannels,
    ReorderRoles,
    RoleStep,
    Step,
)
from svcconf.deployments.ids import translated
from svcconf.store.deployment_items import RestoreSource

Part = Literal["roles", "channels", "settings", "members"]
PARTS: tuple[Part, ...] = ("roles", "channels", "settings", "members")


def _part_of_item(item: PlanItem) -> Part:
    if item.kind == "settings" or item.field == "everyone_permissions":
        return "settings"
    return "roles" if item.kind == "role" else "channels"


def _part_of_step(step: Step) -> Part:
    if isinstance(step, GuildStep):
        return "settings"
    if isinstance(step, RoleStep):
        return "settings" if step.field == "everyone_permissions" else "roles"
    if isinstance(step, ReorderRoles):
        return "roles"
    if isinstance(step, DeleteStep):
        return "roles" if step.kind == "role" else "channels"
    return "channels"


def _overwrite_target(item: PlanItem) -> str:
    """An overwrite item's target (a role key or @everyone): its key is `overwrite:<owner key>:<target>`."""
    return item.key.removeprefix(f"overwrite:{item.owner}:")


def only_plan(plan: DeploymentPlan, only: list[str]) -> DeploymentPlan:
    """The plan kept to the parts asked for. Without roles, a channel's overwrite of a role the guild does not have
    is left out (nothing to point it at); without channels, a setting naming a channel the guild does not have."""
    if set(PARTS[:3]) <= set(only):
        return plan
    known = {EVERYONE_KEY, *plan.ids}
    items = [
        item
        for item in plan.items
        if _part_of_item(item) in only
        and not (item.kind == "overwrite" and "roles" not in only and _overwrite_target(item) not in known)
    ]
    steps: list[Step] = []
    for step in plan.steps:
        if _part_of_step(step) not in only:
            continue
        if isinstance(step, ChannelStep) and "roles" not in only:
            kept = [spec for spec in step.overwrites if spec.target in known or spec.target.startswith("existing:")]
            step = step.model_copy(update={"overwrites": kept})
        if isinstance(step, GuildStep) and "channels" not in only:
            gone = {field for field, key in step.channels.items() if key not in plan.ids}
            step = step.model_copy(
                update={
                    "payload": {k: v for k, v in step.payload.items() if k not in gone},
                    "channels": {k: v for k, v in step.channels.items() if k not in gone},
                }
            )
        if isinstance(step, ReorderChannels) and "channels" not in only:
            continue
        steps.append(step)
    return plan.model_copy(update={"items": items, "steps": steps})


def restore_plan(
    live: LiveGuild,
    config: ServerConfig,
    source: RestoreSource,
    *,
    prune: bool,
    confirmed_deletes: list[str] | None = None,
) -> DeploymentPlan:
    """The worker's and the request's plan: the configuration through the guild's id map, kept to `only`."""
    plan = plan_deployment(live, translated(config, live), prune=prune, confirmed_deletes=confirmed_deletes)
    return only_plan(plan, source.only)
