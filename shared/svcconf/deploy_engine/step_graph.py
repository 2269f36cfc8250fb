"""What a plan's steps wait for, and which of the platform's rate-limit buckets each one's request goes to.

The platform limits each route per major parameter (a guild's role creations, a guild's channel creations, each
channel's own modify and delete) and the bot's requests in all; buckets of different routes run side by side. So a
plan's steps run concurrently, one step at a time per bucket (its `Lane`), each once what it waits for is done.
What a step waits for is stated here, not implied by the plan's order:

- a channel or category waits for the roles its overwrites name and the category it goes into (when this plan
  creates or moves them), and for an earlier step of the same object;
- the settings wait for the channels they name (the AFK, system and rules channels);
- the v4 steps (AutoMod, onboarding, the welcome screen) and the two orders wait for everything before them:
  they name what the deploy made, and onboarding counts the channels @everyone may post in as they end up;
- a deletion waits for everything before it and everything after it waits for the deletion: a pruning plan's
  deletions make room for its creations (the caps), a rollback restores a channel's overwrites before the roles
  they name go, and a category goes after the channels that leave it. Deletions of channels, or of roles, in a
  row run side by side.

Plain data in, plain data out: `scheduler.py` runs the steps by it, the bench computes its floor from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from svcconf.deploy_engine.steps import (
    ChannelStep,
    CommunityStep,
    DeleteStep,
    GuildStep,
    ReorderChannels,
    ReorderRoles,
    RoleStep,
    Step,
)


@dataclass(frozen=True, order=True)
class Lane:
    """A platform bucket as a route and its major parameter: its steps go one at a time, the first that is ready
    first (in the plan's order)."""

    route: str  # "POST /guilds/{guild_id}/channels"
    major: str  # the guild's or the channel's id


def lane_of(step: Step, guild_id: str) -> Lane:
    """The bucket of the step's (first) request."""
    if isinstance(step, RoleStep):
        if step.op == "create_role":
            return Lane("POST /guilds/{guild_id}/roles", guild_id)
        return Lane("PATCH /guilds/{guild_id}/roles/{role_id}", guild_id)
    if isinstance(step, ChannelStep):
        if step.op == "create_channel":
            return Lane("POST /guilds/{guild_id}/channels", guild_id)
        return Lane("PATCH /channels/{channel_id}", step.channel_id or "")
    if isinstance(step, GuildStep):
        return Lane("PATCH /guilds/{guild_id}", guild_id)
    if isinstance(step, ReorderRoles):
        return Lane("PATCH /guilds/{guild_id}/roles", guild_id)
    if isinstance(step, ReorderChannels):
        return Lane("PATCH /guilds/{guild_id}/channels", guild_id)
    if isinstance(step, DeleteStep):
        if step.op == "delete_role":
            return Lane("DELETE /guilds/{guild_id}/roles/{role_id}", guild_id)
        return Lane("DELETE /channels/{channel_id}", step.object_id)
    return Lane(COMMUNITY_ROUTES[step.op], guild_id)


COMMUNITY_ROUTES = {  # v4: each a route of the guild's
    "create_automod_rule": "POST /guilds/{guild_id}/auto-moderation/rules",
    "update_automod_rule": "PATCH /guilds/{guild_id}/auto-moderation/rules/{rule_id}",
    "delete_automod_rule": "DELETE /guilds/{guild_id}/auto-moderation/rules/{rule_id}",
    "put_onboarding": "PUT /guilds/{guild_id}/onboarding",
    "modify_welcome_screen": "PATCH /guilds/{guild_id}/welcome-screen",
}


def dependencies(steps: list[Step]) -> list[set[int]]:
    """For each step, the indexes of the earlier steps it waits for (never a later one: the plan's order is a valid
    order). What a step waits for through another is left out: after a barrier, a step waits for the barrier only."""
    waits: list[set[int]] = []
    barrier: list[int] = []  # the steps everything after them waits for
    barrier_waits: set[int] = set()  # what the barrier's first step waited for (its side-by-side deletions wait for)
    since: list[int] = []  # the steps after the barrier
    last: dict[str, int] = {}  # an object's key -> the last step that wrote it
    for index, step in enumerate(steps):
        named = {last[key] for key in _names(step) if key in last}
        if _waits_for_all(step):
            if barrier and not since and _side_by_side(steps[barrier[-1]], step):
                waits.append(set(barrier_waits) | named)
                barrier.append(index)
            else:
                waits.append(set(barrier) | set(since) | named)
                barrier, barrier_waits, since = [index], waits[-1], []
        else:
            waits.append(set(barrier) | named)
            since.append(index)
        last[step.key] = index
    return waits


def _waits_for_all(step: Step) -> bool:
    return isinstance(step, DeleteStep | ReorderRoles | ReorderChannels | CommunityStep)


def _names(step: Step) -> set[str]:
    """The keys of the objects whose earlier writes the step waits for: its own, and those it names."""
    if isinstance(step, ChannelStep):
        return {step.key, *(overwrite.target for overwrite in step.overwrites), *([step.parent] if step.parent else [])}
    if isinstance(step, GuildStep):
        return {step.key, *step.channels.values()}
    return {step.key}


def _side_by_side(earlier: Step, later: Step) -> bool:
    """Two deletions in a row that need no order: both of roles, or both of channels that are not categories."""
    if not (isinstance(earlier, DeleteStep) and isinstance(later, DeleteStep)):
        return False
    if earlier.op == "delete_role" or later.op == "delete_role":
        return earlier.op == later.op
    return earlier.kind == "channel" and later.kind == "channel"
