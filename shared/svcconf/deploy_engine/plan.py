"""The deploy plan: a pure function of the live guild and a configuration, shared by the dry run, the worker
and its resume after a crash.

The server is made to match its configuration. Objects are matched by id, then by name (`matching.py`). A missing
object is created; a matched object whose name, category or stated attributes differ is updated (a rename or a
move is the same object: its messages, members and overwrites stay); the order of roles, categories and channels
is the configuration's (`order.py`); the server's name is a setting. With `prune`, what the configuration does
not name is deleted (`prune.py`); without it, it is left alone. A second deploy of the same configuration plans no
write at all.

Steps come in the order the platform needs: @everyone's permissions, roles (with explicit permissions: a role
created without them copies @everyone's), categories with their overwrites, channels with their parent, position
and overwrites in the create body (no request per overwrite; a move is the channel's own modify, as the platform
takes one parent change per bulk request), one bulk channel position request if an order still differs, the
guild's settings in one request (after the channels, so the AFK and system channels it names exist), deletions
(channels, categories, then roles; first instead, when the platform's caps leave no room for the creations
otherwise), then one bulk role reorder if the configured roles' relative order differs.
A channel's overwrites are its category's with the channel's own replacing them per role, so a channel in a
private category is private from its first moment whatever the platform copies. A neutral overwrite (nothing
allowed or denied) is sent with a new channel (so the platform copies nothing in its place) and left unwritten on a
channel that has none: both grant the same.

The phases are mixins of the planner here: `plan_roles.py`, `plan_channels.py` (with the overwrites) and
`plan_settings.py`, over the state of `plan_state.py`; this module orders their steps into the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from svcconf.config import EVERYONE, ServerConfig
from svcconf.deploy_engine.matching import Matches, config_channel_key, match_objects, placed_channels
from svcconf.deploy_engine.order import plan_orders
from svcconf.deploy_engine.plan_channels import ChannelPlanner
from svcconf.deploy_engine.plan_community import CommunityPlanner
from svcconf.deploy_engine.plan_roles import RolePlanner
from svcconf.deploy_engine.plan_settings import SettingsPlanner
from svcconf.deploy_engine.prune import Deletions, deletions_first, plan_deletions
from svcconf.deploy_engine.steps import (
    EVERYONE_KEY,
    DeploymentPlan,
    PlanItem,
    ReorderChannels,
    Step,
    category_key,
    role_key,
)
from svcconf.errors import BadRequest, FieldError

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping

    from svcconf.deploy_engine.live import LiveGuild

# What the planners' callers use; the plan's data lives in svcconf.deploy_engine.steps.
__all__ = ["plan_deployment"]

# ---------------------------------------------------------------- names a deploy must tell apart


def _duplicates(config: ServerConfig) -> list[FieldError]:
    """Categories and channels must be unique where the deploy matches them, or it could not converge."""
    seen: dict[str, str] = {}
    problems = []
    for field, key, label in _named_objects(config):
        if key in seen:
            message = f"{label} has the same name as {seen[key]}: a deploy matches by name, so names must differ"
            problems.append(FieldError(field=f"config.{field}.name", message=message))
        else:
            seen[key] = field
    return problems


def _named_objects(config: ServerConfig) -> Iterator[tuple[str, str, str]]:
    for c, category in enumerate(config.categories):
        yield f"categories[{c}]", category_key(category.name), f"category '{category.name}'"
        for n, channel in enumerate(category.channels):
            key = config_channel_key(category.name, channel)
            yield f"categories[{c}].channels[{n}]", key, f"channel '{channel.name}'"
    for n, channel in enumerate(config.channels):
        yield f"channels[{n}]", config_channel_key(None, channel), f"channel '{channel.name}'"


# ---------------------------------------------------------------- the planner


class _Planner(RolePlanner, ChannelPlanner, SettingsPlanner, CommunityPlanner):
    def __init__(self, live: LiveGuild, config: ServerConfig, deletions: Deletions, matches: Matches):
        self.live = live
        self.config = config
        self.matches = matches
        self.deletions = deletions
        self.warnings = list(deletions.warnings)
        self.items: list[PlanItem] = []
        self.steps: list[Step] = []
        self.ids: dict[str, str] = {EVERYONE_KEY: live.everyone.id}
        self.role_names = {EVERYONE_KEY: EVERYONE} | {role_key(role.name): role.name for role in config.roles}
        self.orders = plan_orders(live, config, matches, deletions.ids)
        self.role_order = self._reorder()

    def plan(self) -> DeploymentPlan:
        room_roles, room_channels = deletions_first(self.live, self.config, self.matches)
        self._everyone()
        if room_roles:
            self.steps += [step for step in self.deletions.steps if step.kind == "role"]
        for index, role in enumerate(self.config.roles):
            self._role(index, role)
        if room_channels:
            self.steps += [step for step in self.deletions.steps if step.kind != "role"]
        for index, category in enumerate(self.config.categories):
            self._category(index, category)
        for field, placed_in, channel in placed_channels(self.config):
            self._channel(field, channel, placed_in)
        bulk = self.orders.bulk()
        if bulk:
            self.steps.append(ReorderChannels(positions=bulk))
        self._settings()  # after the channels: the AFK and system channels may be new
        self._community()  # v4: AutoMod, onboarding, the welcome screen name the roles and channels made above
        if not room_channels:
            self.steps += [step for step in self.deletions.steps if step.kind != "role"]
        if not room_roles:
            self.steps += [step for step in self.deletions.steps if step.kind == "role"]
        self.items += self.deletions.items
        if self.role_order is not None:
            self.steps.append(self.role_order)
        return DeploymentPlan(
            guild_id=self.live.id,
            items=self.items,
            steps=self.steps,
            ids=self.ids,
            warnings=self.warnings,
            kept=self.deletions.kept,
        )


def plan_deployment(
    live: LiveGuild,
    config: ServerConfig,
    *,
    prune: bool = False,
    confirmed_deletes: Collection[str] | None = None,
    confirmed_fingerprints: Mapping[str, str] | None = None,
) -> DeploymentPlan:
    """What deploying `config` to `live` would create, update, keep and (with `prune`) delete, and the writes that
    do it, in order. `confirmed_deletes`: the ids a confirmed plan listed; nothing else is deleted, and none whose
    fingerprint is no longer the confirmed one (`confirmed_fingerprints`): those are the plan's `kept`."""
    problems = _duplicates(config)
    if problems:
        raise BadRequest("The configuration names some objects twice.", details=problems)
    matches = match_objects(live, config)
    deletions = plan_deletions(live, matches, confirmed_deletes, confirmed_fingerprints) if prune else Deletions()
    planner = _Planner(live, config, deletions, matches)
    planner.prune, planner.confirmed_deletes = prune, confirmed_deletes
    return planner.plan()
