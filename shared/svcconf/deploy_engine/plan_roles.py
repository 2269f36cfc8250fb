"""The deploy plan's roles: @everyone's permissions, each configured role created or updated, and the one bulk
reorder that puts the configured roles in the configuration's order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svcconf.config import EVERYONE
from svcconf.deploy_engine.attributes import (
    everyone_stated_attributes,
    live_role_attributes,
    role_create_attributes,
    role_stated_attributes,
)
from svcconf.deploy_engine.plan_community import role_colours
from svcconf.deploy_engine.plan_state import PlanState
from svcconf.deploy_engine.steps import (
    Action,
    Change,
    PlanItem,
    ReorderRoles,
    RolePosition,
    RoleStep,
    role_key,
)

if TYPE_CHECKING:
    from svcconf.chat import Role as LiveRole
    from svcconf.config import Role as ConfigRole


class RolePlanner(PlanState):
    """The planner's roles phase."""

    def _role(self, index: int, role: ConfigRole) -> None:
        key, field = role_key(role.name), f"roles[{index}]"
        found = self.matches.roles.get(key)
        if found is None:
            payload = {
                "name": role.name,
                **role_create_attributes(role),
                **role_colours(self.live, self.warnings, field, role),
            }
            self.items.append(PlanItem(kind="role", name=role.name, action="create", field=field, key=key))
            self.steps.append(RoleStep(op="create_role", key=key, name=role.name, field=field, payload=payload))
            return
        self.ids[key] = found.id
        wanted = {
            "name": role.name,
            **role_stated_attributes(role),
            **role_colours(self.live, self.warnings, field, role),
        }
        self._role_update(key, role.name, field, found, wanted)

    def _everyone(self) -> None:
        """`everyone_permissions`: the @everyone role (its id is the guild's) updated like any role."""
        wanted = everyone_stated_attributes(self.config.everyone_permissions)
        if wanted:
            self._role_update(role_key(EVERYONE), EVERYONE, "everyone_permissions", self.live.everyone, wanted)

    def _role_update(self, key: str, name: str, field: str, found: LiveRole, wanted: dict[str, Any]) -> None:
        # Only what the configuration states is compared, so an omitted attribute never resets a live one.
        current = {"name": found.name, **live_role_attributes(found)}
        changes = [Change(field=n, old=current[n], new=v) for n, v in wanted.items() if current[n] != v]
        changes += self._role_position(found)
        action: Action = "update" if changes else "keep"
        self.items.append(
            PlanItem(kind="role", name=name, action=action, id=found.id, changes=changes, field=field, key=key)
        )
        written = [change for change in changes if change.field != "position"]  # the order is one bulk request
        if not written:
            return
        self.steps.append(
            RoleStep(
                op="update_role",
                key=key,
                name=name,
                field=field,
                role_id=found.id,
                payload={change.field: change.new for change in written},
                previous={change.field: change.old for change in written},
            )
        )

    def _role_position(self, found: LiveRole) -> list[Change]:
        """The role's rank from the top among the configured roles, when the bulk reorder changes it (@everyone and
        the roles the bot cannot move are not in it: they keep theirs)."""
        reorder = self.role_order
        if reorder is None:
            return []
        final = {entry.ref: entry.position for entry in reorder.positions}
        ref = found.id
        if final.get(ref, found.position) == found.position:
            return []
        return [Change(field="position", old=found.position, new=final[ref])]

    def _reorder(self) -> ReorderRoles | None:
        """One bulk move so the configured roles stand in the configuration's order (first = highest)."""
        # The order after the creations and deletions: each new role appears at position 1, pushing the others up.
        deleted = self.deletions.ids
        existing = sorted(
            (r for r in self.live.roles if not r.is_everyone(self.live.id) and r.id not in deleted),
            key=lambda r: r.position,
        )
        created = [role_key(role.name) for role in self.config.roles if role_key(role.name) not in self.matches.roles]
        bottom_up = [*reversed(created), *(role.id for role in existing)]
        movable = set(created) | {role.id for role in existing if self.live.bot_can_edit(role)}
        rank = {}
        for index, role in enumerate(self.config.roles):
            found = self.matches.roles.get(role_key(role.name))
            rank[found.id if found else role_key(role.name)] = index
        return reorder_within_slots(bottom_up, movable, rank)


def reorder_within_slots(bottom_up: list[str], movable: set[str], rank: dict[str, int]) -> ReorderRoles | None:
    """The bulk move that puts the ranked roles in rank order (0 = highest) within the slots they hold now, so
    roles without a rank stay where they are; None when they already stand so. `bottom_up` lists role refs
    from position 1 upwards; only `movable` ones (below the bot's highest role) take part."""
    slots = [position for position, ref in enumerate(bottom_up, start=1) if ref in movable and ref in rank]
    ranked = [ref for ref in bottom_up if ref in movable and ref in rank]
    wanted = sorted(ranked, key=lambda ref: rank[ref], reverse=True)
    if wanted == ranked:
        return None
    before = {ref: position for position, ref in enumerate(bottom_up, start=1) if ref in movable}
    final = before | dict(zip(wanted, slots, strict=True))
    # Every movable role with its position: a partial list would leave ties for the platform to break.
    return ReorderRoles(
        positions=[RolePosition(ref=ref, position=pos, previous=before[ref]) for ref, pos in sorted(final.items())]
    )
