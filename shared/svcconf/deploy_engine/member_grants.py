"""A restore's last step kind: members get back the roles the backup says they held (never one removed).

The backup names each member's roles by the ids its configuration holds; a role is found in the guild through the
restore's plan (the key of the configured role -> the id it matched or the id the restore created). For each member
of the backup, in user-id order, what they hold is taken from the member list, read page by page along the walk
(`member_reads.HeldRoles`: one list per plan or run; not in it: `left_server`; the list refused: each member read
alone), and each role they lack is granted with one `PUT /guilds/{id}/members/{user}/roles/{role}` at the
platform's pace (its own bucket: the client waits on its headers; a long wait re-queues the deployment). Only roles
strictly below the caller's highest and the bot's, by a caller holding MANAGE_ROLES (`grant_refusals`, checked
before anything is queued); a role that carries a dangerous permission only with
`acknowledge: ["member-dangerous-role"]`. Progress is a cursor over the members, so a resumed run goes on where the
last checkpoint left it, reading the list again from that member on (it holds what was granted: nothing twice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from svcconf.chat import ChatClient, MissingPermissions, UnknownMember, UnknownRole
from svcconf.config import ServerConfig
from svcconf.config.lint import DANGEROUS_PERMISSIONS, LintWarning
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.member_reads import HeldRoles
from svcconf.deploy_engine.steps import role_key
from svcconf.errors import FieldError

MEMBER_DANGEROUS_RULE = "member-dangerous-role"
CHECKPOINT_MEMBERS = 25  # members between two checkpoints of the cursor


class WantedRole(BaseModel):
    key: str
    name: str
    dangerous: list[str] = Field(default_factory=list)


class MemberWants(BaseModel):
    user_id: str
    roles: list[WantedRole]


class DangerousGrant(BaseModel):
    user_id: str
    role: str = Field(description="The role's name.")


class MembersPlan(BaseModel):
    """A restore's dry run, for members: grants it would make, members gone, and grants of a dangerous role."""

    planned: int = Field(0, description="Grants (member, role) the restore would make.")
    left_server: int = Field(0, description="Members of the backup no longer in the server.")
    dangerous: list[DangerousGrant] = Field(
        default_factory=list,
        description='Grants of a role with a dangerous permission: they need acknowledge ["member-dangerous-role"].',
    )


@dataclass(frozen=True)
class Reach:
    """How high the caller reaches: the position of their highest role (infinite for the owner), MANAGE_ROLES."""

    top_position: float
    manages_roles: bool


def wanted_roles(config: ServerConfig, members: Iterable[tuple[str, list[str]]]) -> list[MemberWants]:
    """Each member's roles as the backup's configuration names them, in user-id order (role ids the configuration
    does not hold, such as managed roles, are left out)."""
    by_id = {
        role.id: WantedRole(
            key=role_key(role.name),
            name=role.name,
            dangerous=[p for p in DANGEROUS_PERMISSIONS if p in role.permissions],
        )
        for role in config.roles
        if role.id
    }
    wants = [
        MemberWants(user_id=user_id, roles=[by_id[role_id] for role_id in dict.fromkeys(role_ids) if role_id in by_id])
        for user_id, role_ids in members
    ]
    return sorted((w for w in wants if w.roles), key=lambda w: int(w.user_id) if w.user_id.isdigit() else 0)


def grant_refusals(wants: list[MemberWants], live: LiveGuild, ids: Mapping[str, str], reach: Reach) -> list[FieldError]:
    """One detail per role the caller (or the bot) may not hand out: not strictly below their highest role."""
    roles = {role.id: role for role in live.roles}
    used = {role.key: role.name for want in wants for role in want.roles}
    if used and not reach.manages_roles:
        return [FieldError(field="members", message="you do not hold MANAGE_ROLES: members' roles cannot come back")]
    refusals = []
    for key, name in sorted(used.items()):
        live_role = roles.get(ids.get(key, ""))
        if live_role is None:
            continue  # made by the restore: its place is the plan's, checked with the plan
        if live_role.position >= reach.top_position:
            refusals.append(
                FieldError(
                    field=f"members.roles.{name}",
                    message=f"role '{name}' is not below your highest role: its members cannot get it back through you",
                )
            )
        elif live_role.position >= live.bot_top_position:
            refusals.append(FieldError(field=f"members.roles.{name}", message=f"role '{name}' is not below the bot's"))
    return refusals


def dangerous_refusals(wants: list[MemberWants]) -> list[FieldError]:
    """One detail per dangerous role the backup's members would get back (409 unless acknowledged)."""
    holders: dict[str, tuple[list[str], int]] = {}
    for want in wants:
        for role in want.roles:
            if role.dangerous:
                permissions, count = holders.get(role.name, (role.dangerous, 0))
                holders[role.name] = (permissions, count + 1)
    return [
        FieldError(
            field=f"members.roles.{name}",
            rule=MEMBER_DANGEROUS_RULE,
            message=f"role '{name}' carries {', '.join(permissions)}: giving it back to {count} "
            f'member{"s" if count != 1 else ""} needs acknowledge ["{MEMBER_DANGEROUS_RULE}"]',
        )
        for name, (permissions, count) in sorted(holders.items())
    ]


def _missing(want: MemberWants, held: set[str], ids: Mapping[str, str]) -> Iterator[WantedRole]:
    for role in want.roles:
        if ids.get(role.key) not in held:
            yield role


def plan_members(
    client: ChatClient, live: LiveGuild, wants: list[MemberWants], ids: Mapping[str, str]
) -> tuple[MembersPlan, list[LintWarning]]:
    """The dry run's members as the member list holds them now (the roles the restore creates are lacked by
    everyone), and its warning when the list was refused and each member was read alone."""
    plan = MembersPlan()
    reads = HeldRoles(client, live.id)
    for want in wants:
        held = reads.of(want.user_id)
        if held is None:
            plan.left_server += 1
            continue
        for role in _missing(want, held, ids):
            plan.planned += 1
            if role.dangerous:
                plan.dangerous.append(DangerousGrant(user_id=want.user_id, role=role.name))
    return plan, reads.warnings()


class Making(Protocol):
    """The roles a restore's steps are making beside its grants (`deploy_engine.scheduler.AwaitedIds`)."""

    def made(self, key: str) -> bool:
        """Whether the role's id can be read now (made, or not made by the steps at all)."""

    def wait_any(self, keys: list[str]) -> None:
        """Returns once one of the roles is made, or the steps stopped."""


@dataclass
class GrantProgress:
    cursor: int
    planned: int = 0
    granted: int = 0
    left_server: int = 0
    failed: int = 0


def grant_members(
    client: ChatClient,
    guild_id: str,
    wants: list[MemberWants],
    ids: Mapping[str, str],
    progress: GrantProgress,
    *,
    made: list[tuple[str, str]],
    checkpoint: Callable[[GrantProgress], None],
    has_time: Callable[[], bool],
    reason: str,
    making: Making | None = None,
) -> bool:
    """Grants from `progress.cursor` on, appending each grant to `made`; False when time ran out first. What each
    member holds comes from the member list, read from the cursor's member on (`HeldRoles`).

    A role the restore's steps are still `making` beside the grants is granted once it is made, and the members
    after go first meanwhile, so the grants' bucket does not idle while a grant could go. The cursor stays at the
    first member with a grant still to make, so a resumed run reads the list again from there (what was granted
    is held: nothing twice)."""
    made_yet = making.made if making is not None else lambda key: True
    since = 0
    reads = HeldRoles(client, guild_id)
    later: dict[int, tuple[list[WantedRole], set[str]]] = {}  # member index -> roles not made yet, what they hold
    waiting: dict[str, list[int]] = {}  # a role not made yet -> the members waiting for it
    walked = progress.cursor

    def grant(user_id: str, roles: list[WantedRole], held: set[str]) -> bool:
        return _grant(client, guild_id, user_id, roles, held, ids, progress, made, reason)

    try:
        while walked < len(wants) or later:
            if not has_time():
                return False
            for key in [key for key in waiting if made_yet(key)]:  # roles made since: their members' grants
                for index in (index for index in waiting.pop(key) if index in later):
                    roles, holds = later[index]
                    ready, left = [r for r in roles if r.key == key], [r for r in roles if r.key != key]
                    if grant(wants[index].user_id, ready, holds) and left:
                        later[index] = (left, holds)  # in its place: `later` keeps the walk's order
                    else:
                        del later[index]
            if walked < len(wants):
                want = wants[walked]
                held = reads.of(want.user_id)
                if held is None:
                    progress.left_server += 1
                else:
                    unmade = [role for role in want.roles if not made_yet(role.key)]
                    ready = [role for role in want.roles if role not in unmade]
                    if grant(want.user_id, ready, held) and unmade:
                        later[walked] = (unmade, held)
                        for role in unmade:
                            waiting.setdefault(role.key, []).append(walked)
                walked += 1
            elif making is not None:  # the walk is over: wait until one of the roles waited for is made
                making.wait_any(list(waiting))
            progress.cursor = next(iter(later), walked)  # members enter `later` in the walk's order
            since += 1
            if since >= CHECKPOINT_MEMBERS:
                checkpoint(progress)
                since = 0
    finally:  # a pause (the platform asks to wait) keeps what was granted so far: a resumed run re-reads the member
        checkpoint(progress)
    return True


def _grant(
    client: ChatClient,
    guild_id: str,
    user_id: str,
    roles: list[WantedRole],
    held: set[str],
    ids: Mapping[str, str],
    progress: GrantProgress,
    made: list[tuple[str, str]],
    reason: str,
) -> bool:
    """Grants the member each of `roles` they lack; False when they left the server meanwhile."""
    for role in roles:
        role_id = ids.get(role.key)
        if role_id in held:
            continue
        if role_id is None:  # its creation failed: nothing to grant
            progress.planned += 1
            progress.failed += 1
            continue
        try:
            client.add_member_role(guild_id, user_id, role_id, reason=reason)
        except UnknownMember:  # left between the read and the grant
            progress.left_server += 1
            return False
        except (MissingPermissions, UnknownRole):
            progress.planned += 1
            progress.failed += 1
            continue
        progress.planned += 1
        progress.granted += 1
        made.append((user_id, role_id))
        held.add(role_id)  # the list's set: the same member listed twice in the backup is not granted it again
    return True
