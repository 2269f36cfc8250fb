"""The deploy planner's working state: what the plan's phases (roles, channels, settings) read and add to."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from svcconf.config import ServerConfig
    from svcconf.config.lint import LintWarning
    from svcconf.deploy_engine.live import LiveGuild
    from svcconf.deploy_engine.matching import Matches
    from svcconf.deploy_engine.order import Orders
    from svcconf.deploy_engine.prune import Deletions
    from svcconf.deploy_engine.steps import PlanItem, ReorderRoles, Step


class PlanState:
    """Set once by the planner (`plan._Planner`); each phase's mixin appends to `items` and `steps` in turn."""

    live: LiveGuild
    config: ServerConfig
    matches: Matches
    deletions: Deletions
    items: list[PlanItem]
    steps: list[Step]
    # The live id of each plan key matched so far: later phases (overwrites, settings) refer to objects by it.
    ids: dict[str, str]
    role_names: dict[str, str]
    orders: Orders
    role_order: ReorderRoles | None
    warnings: list[LintWarning]  # what the plan says beside its items (a pruning plan's keeps, v4's colours)
