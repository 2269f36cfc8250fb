"""What the caller may do to each object of a plan: the platform's rules for people (docs/05-deploy-engine.md,
"What a caller may do"), checked per plan item before anything is queued, and again when a deployment runs.

Pure: the caller's standing, the guild as they see it and the plan in, one refusal per object out. Every kind of
item (role, category, channel, overwrite, settings) and every action but `keep` (create, update with its renames,
moves and reorders, delete) needs its permission; roles only strictly below the caller's highest; what a role, an
@everyone or an overwrite grants only what the caller holds (there: in that channel); a channel the caller cannot
view is never touched. The owner may do everything; ADMINISTRATOR everything but pass the role hierarchy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from svcconf.caller_rights.community import COMMUNITY_KINDS, community_refusals
from svcconf.caller_rights.standing import CallerStanding
from svcconf.chat import Channel, Role
from svcconf.config import EVERYONE, PERMISSION_BITS, from_bitfield
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import (
    KIND_GROUPS,
    ChannelStep,
    DeleteStep,
    DeploymentPlan,
    OverwriteSpec,
    PlanItem,
    ReorderRoles,
    RoleStep,
    role_key,
)
from svcconf.errors import FieldError

MANAGE_ROLES = 1 << PERMISSION_BITS["MANAGE_ROLES"]
MANAGE_CHANNELS = 1 << PERMISSION_BITS["MANAGE_CHANNELS"]
MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]
EVERYONE_ROLE_KEY = role_key(EVERYONE)


@dataclass(frozen=True)
class Refusal:
    """One reason the platform would refuse the caller one object: `obj` the object's plan key (its reasons are
    joined), `field` the most precise configuration path."""

    obj: str
    field: str
    message: str


class _Guild:
    """The live guild with its roles and channels by id: a plan at the platform's caps looks each up many times."""

    def __init__(self, live: LiveGuild, plan: DeploymentPlan):
        self.live = live
        # Each object's live id by its plan key: the plan's matches, and the ids a rollback's items carry.
        self.ids = plan.ids | {item.key: item.id for item in plan.items if item.id}
        self.roles = {role.id: role for role in live.roles}
        self.channels = {channel.id: channel for channel in live.channels}

    def channel(self, channel_id: str | None) -> Channel | None:
        return self.channels.get(channel_id or "")


def plan_refusals(standing: CallerStanding, live: LiveGuild, plan: DeploymentPlan) -> list[FieldError]:
    """Every object of the plan the caller may not change, one detail each (its reasons joined), plan order."""
    if standing.owner:
        return []
    guild = _Guild(live, plan)
    by_object: dict[str, list[Refusal]] = {}
    for refusal in [*_item_refusals(standing, guild, plan), *_step_refusals(standing, guild, plan)]:
        by_object.setdefault(refusal.obj, []).append(refusal)
    items = {item.key: item for item in plan.items}
    return [
        FieldError(field=refusals[0].field, message=_named(items.get(obj), refusals))
        for obj, refusals in by_object.items()
    ]


def _named(item: PlanItem | None, refusals: list[Refusal]) -> str:
    """The reasons, joined; an object the configuration does not name (a rollback's, a prune's) is named first."""
    reasons = "; ".join(dict.fromkeys(r.message for r in refusals))
    return f"{item.kind} '{item.name}': {reasons}" if item is not None and not item.field else reasons


# ---------------------------------------------------------------- per item: permission, hierarchy, visibility


def _item_refusals(standing: CallerStanding, guild: _Guild, plan: DeploymentPlan) -> Iterator[Refusal]:
    for item in plan.items:
        if item.action == "keep":
            continue
        if item.kind == "role":
            yield from _role_item(standing, guild, plan, item)
        elif item.kind in ("category", "channel"):
            yield from _channel_item(standing, guild, plan, item)
        elif item.kind == "overwrite":
            yield from _overwrite_item(standing, guild, plan, item)
        elif item.kind in COMMUNITY_KINDS:  # v4: caller_rights/community.py
            for field, message in community_refusals(standing, guild.live, plan, item):
                yield Refusal(item.key, field, message)
        elif not standing.holds(MANAGE_GUILD):  # settings, the server's name among them
            yield Refusal(item.key, item.field, "you need MANAGE_GUILD to change the server's settings and name")


def _where(item: PlanItem) -> str:
    """The item's configuration path; a delete of an object the configuration does not name has none: its group."""
    return item.field or KIND_GROUPS[item.kind]


def _object_id(plan: DeploymentPlan, item: PlanItem) -> str | None:
    """The live id of the object an item changes: its own `id` when the plan carries one, else the match."""
    return item.id or plan.ids.get(item.key)


def _live_role(guild: _Guild, plan: DeploymentPlan, item: PlanItem) -> Role | None:
    if item.key == EVERYONE_ROLE_KEY:
        return guild.live.everyone
    return guild.roles.get(_object_id(plan, item) or "")


def _role_item(standing: CallerStanding, guild: _Guild, plan: DeploymentPlan, item: PlanItem) -> Iterator[Refusal]:
    if not standing.holds(MANAGE_ROLES):
        yield Refusal(item.key, _where(item), "you need MANAGE_ROLES to create, change, reorder or delete roles")
        return
    role = _live_role(guild, plan, item)
    if role is None or role.is_everyone(guild.live.id) or standing.outranks(role) or _moves_only(item):
        return
    yield Refusal(item.key, _where(item), f"role '{role.name}' is not below your highest role")


def _moves_only(item: PlanItem) -> bool:
    """An update of the role's place alone: the role order's check judges it, after the plan's creations (which
    lift every role one place without moving it)."""
    return item.action == "update" and bool(item.changes) and all(c.field == "position" for c in item.changes)


def _channel_item(standing: CallerStanding, guild: _Guild, plan: DeploymentPlan, item: PlanItem) -> Iterator[Refusal]:
    channel = guild.channel(_object_id(plan, item))
    if item.action != "create" and channel is None:
        # Matched in the full guild but not in the caller's view: it does not exist for them.
        yield Refusal(item.key, _where(item), "names a channel you cannot view in this server")
        return
    if not _permissions_where(standing, guild, channel) & MANAGE_CHANNELS:
        what = f"{item.kind} '{item.name}'" if not item.field else f"this {item.kind}"
        yield Refusal(item.key, _where(item), f"you need MANAGE_CHANNELS to {item.action} {what}")


def _overwrite_item(standing: CallerStanding, guild: _Guild, plan: DeploymentPlan, item: PlanItem) -> Iterator[Refusal]:
    channel = guild.channel(guild.ids.get(item.owner)) if item.owner else None
    if not _permissions_where(standing, guild, channel) & MANAGE_ROLES:
        yield Refusal(item.key, _where(item), "you need MANAGE_ROLES (Manage Permissions) to change overwrites there")


def _permissions_where(standing: CallerStanding, guild: _Guild, channel: Channel | None) -> int:
    """The caller's permissions where an item acts: in its channel when it exists (an overwrite there may give or
    take them), else server-wide (a new channel)."""
    return standing.in_channel(guild.live, channel) if channel is not None else standing.permissions


# ---------------------------------------------------------------- per write: what is granted, what is moved


def _step_refusals(standing: CallerStanding, guild: _Guild, plan: DeploymentPlan) -> Iterator[Refusal]:
    for step in plan.steps:
        if isinstance(step, RoleStep):
            new = int(step.payload.get("permissions", 0))
            old = int(step.previous.get("permissions", 0))
            missing = from_bitfield(new & ~old & ~standing.permissions)  # a role may keep what the caller lacks
            if missing:
                field = step.field if step.field == "everyone_permissions" else f"{step.field}.permissions"
                yield Refusal(step.key, field, f"you do not hold {', '.join(missing)}")
        elif isinstance(step, ChannelStep):
            yield from _overwrite_grants(standing, guild, plan, step)
        elif isinstance(step, ReorderRoles):
            yield from _reorder_refusals(standing, guild, plan, step)


def _overwrite_grants(
    standing: CallerStanding, guild: _Guild, plan: DeploymentPlan, step: ChannelStep
) -> Iterator[Refusal]:
    """Every overwrite the step adds, changes or removes (a move's left-behind ones and a rollback's restored list
    included) needs MANAGE_ROLES there and may allow or deny only what the caller holds there: the bits it changes."""
    channel = guild.channel(step.channel_id)
    held = _permissions_where(standing, guild, channel)
    # By id, members' overwrites too: a target is a role, and no member's id is a role's (ids are unique).
    before = {o.id: (int(o.allow), int(o.deny)) for o in channel.permission_overwrites} if channel else {}
    written = step.payload.get("permission_overwrites")
    if written is not None:  # a rollback's list, whole
        after = {entry["id"]: (int(entry["allow"]), int(entry["deny"])) for entry in written}
    elif step.overwrites or step.replaces_overwrites:
        after = {entry["id"]: (int(entry["allow"]), int(entry["deny"])) for entry in step.base_overwrites}
    else:
        return  # the platform keeps the channel's overwrites as they are
    specs: dict[str, OverwriteSpec] = {}
    for spec in step.overwrites:
        target = plan.ids.get(spec.target, spec.target)
        after[target] = (spec.allow, spec.deny)
        specs[target] = spec
    for target in dict.fromkeys([*before, *after]):
        (old_allow, old_deny), (new_allow, new_deny) = before.get(target, (0, 0)), after.get(target, (0, 0))
        changed = (old_allow ^ new_allow) | (old_deny ^ new_deny)
        if not changed:
            continue
        wanted = specs.get(target)
        obj = f"overwrite:{step.key}:{wanted.target if wanted else target}"
        field = wanted.field if wanted else f"{step.field or KIND_GROUPS[step.kind]}.overwrites"
        if not held & MANAGE_ROLES:
            yield Refusal(obj, field, "you need MANAGE_ROLES (Manage Permissions) to change overwrites there")
        missing = from_bitfield(changed & ~held)
        if missing:
            yield Refusal(obj, field, f"you do not hold {', '.join(missing)} there")


def _reorder_refusals(
    standing: CallerStanding, guild: _Guild, plan: DeploymentPlan, step: ReorderRoles
) -> Iterator[Refusal]:
    """A role moves only from and to below the caller's highest role; compared where the roles stand when the
    reorder is sent: after the plan's creations, which the platform puts at the bottom (every existing role one
    place higher per created role), and its deletions (one place lower per deleted role below it)."""
    if not standing.holds(MANAGE_ROLES):
        yield Refusal(step.key, step.field, "you need MANAGE_ROLES to create, change, reorder or delete roles")
        return
    roles = guild.roles
    created = sum(1 for entry in step.positions if entry.ref not in roles)
    deleted = [
        roles[s.object_id].position
        for s in plan.steps
        if isinstance(s, DeleteStep) and s.kind == "role" and s.object_id in roles
    ]

    def placed(position: int) -> int:
        return position + created - sum(1 for gone in deleted if gone < position)

    ceiling = placed(standing.top_position)
    item_of = {plan.ids.get(item.key, item.key): item for item in plan.items if item.kind == "role"}
    for entry in step.positions:
        role = roles.get(entry.ref)
        before = placed(role.position) if role is not None else 0
        if before == entry.position:
            continue
        if max(before, entry.position) >= ceiling:
            item = item_of.get(entry.ref)
            field = _where(item) if item is not None else step.field
            name = role.name if role is not None else "a new role"
            yield Refusal(
                item.key if item is not None else entry.ref,
                f"{field}.position",
                f"cannot move {name}: only roles below your highest role move",
            )
