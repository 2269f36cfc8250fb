"""The deploy plan's categories and channels: each created (with its parent, position and overwrites in the create
body) or updated (renamed, moved, its attributes and overwrites changed), and the overwrites as items of their own.

A channel's overwrites are its category's with the channel's own replacing them per role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from svcconf.config import CHANNEL_TYPES, EVERYONE, from_bitfield, to_bitfield
from svcconf.deploy_engine.attributes import (
    channel_after_create,
    channel_create_attributes,
    channel_stated_attributes,
    live_channel_attributes,
    with_tag_ids,
)
from svcconf.deploy_engine.live import platform_channel_name
from svcconf.deploy_engine.matching import config_channel_key
from svcconf.deploy_engine.plan_state import PlanState
from svcconf.deploy_engine.steps import (
    EVERYONE_KEY,
    ROLE_OVERWRITE,
    Action,
    Change,
    ChannelStep,
    OverwriteSpec,
    PlanItem,
    category_key,
    role_key,
)

if TYPE_CHECKING:
    from svcconf.chat import Channel as LiveChannel
    from svcconf.config import Category
    from svcconf.config import Channel as ConfigChannel
    from svcconf.config import Overwrite as ConfigOverwrite
    from svcconf.deploy_engine.order import GroupOrder


class ChannelPlanner(PlanState):
    """The planner's categories-and-channels phase."""

    def _order_of(self, key: str) -> GroupOrder:
        return self.orders.of(key)

    def _category(self, index: int, category: Category) -> None:
        key, field = category_key(category.name), f"categories[{index}]"
        found = self.matches.categories.get(key)
        desired = self._overwrites(_declared(category.overwrites, f"{field}.overwrites"))
        create = {"name": category.name, "type": CHANNEL_TYPES["category"]}
        self._channel_like("category", key, field, category.name, found, create, None, desired, None, category.name)

    def _channel(self, field: str, channel: ConfigChannel, category: Category | None) -> None:
        channel_type = CHANNEL_TYPES[channel.type]
        parent = category_key(category.name) if category else None
        key = config_channel_key(category.name if category else None, channel)
        found = self.matches.channels.get(key)
        category_field = field.rsplit(".channels", 1)[0]
        inherited = _declared(category.overwrites, f"{category_field}.overwrites") if category else {}
        desired = self._overwrites(inherited | _declared(channel.overwrites, f"{field}.overwrites"))
        create = {"name": channel.name, "type": channel_type, **channel_create_attributes(channel)}
        label = f"{category.name} / {channel.name}" if category else channel.name
        self._channel_like("channel", key, field, label, found, create, channel, desired, parent, channel.name)

    def _channel_like(
        self,
        kind: Literal["category", "channel"],
        key: str,
        field: str,
        label: str,
        found: LiveChannel | None,
        create: dict[str, Any],
        channel: ConfigChannel | None,
        desired: dict[str, OverwriteSpec],
        parent: str | None,
        name: str,
    ) -> None:
        order = self._order_of(key)
        if found is None:
            self.items.append(PlanItem(kind=kind, name=label, action="create", field=field, key=key))
            overwrite_keys = [self._overwrite_item(key, label, spec, "create") for spec in desired.values()]
            self.steps.append(
                ChannelStep(
                    op="create_channel",
                    kind=kind,
                    key=key,
                    name=label,
                    field=field,
                    parent=parent,
                    payload={**create, "position": order.placed[key]},
                    after_create=channel_after_create(channel) if channel else {},
                    overwrites=list(desired.values()),
                    overwrite_keys=overwrite_keys,
                )
            )
            return
        self.ids[key] = found.id
        current = {"name": found.name, **live_channel_attributes(found)}
        wanted = channel_stated_attributes(channel, found.flags) if channel else {}
        if found.name not in (name, platform_channel_name(name, found.type)):
            wanted = {"name": name, **wanted}
        changes = [Change(field=n, old=current.get(n), new=v) for n, v in wanted.items() if current.get(n) != v]
        payload = with_tag_ids({change.field: change.new for change in changes}, found)
        previous: dict[str, Any] = {change.field: change.old for change in changes}
        move_to = self._moved(found, parent)  # a category has no parent: it never moves
        if move_to is not None:
            old_parent = self.live.channel(found.parent_id)
            category_name = next((c.name for c in self.config.categories if category_key(c.name) == move_to), None)
            changes.append(Change(field="category", old=old_parent.name if old_parent else None, new=category_name))
            payload["position"] = order.placed[key]
            previous |= {"parent_id": found.parent_id, "position": found.position}
            if move_to == "-":
                payload["parent_id"] = None
        item_changes = [*changes]
        if key in order.shown and order.shown[key][0] != order.shown[key][1]:
            old_index, new_index = order.shown[key]
            item_changes.append(Change(field="position", old=old_index, new=new_index))
        action: Action = "update" if item_changes else "keep"
        self.items.append(
            PlanItem(kind=kind, name=label, action=action, id=found.id, changes=item_changes, field=field, key=key)
        )
        changed_overwrites, overwrite_keys = self._overwrite_changes(key, label, found, desired)
        rewritten_keys: list[str] = []
        base = [overwrite.model_dump() for overwrite in found.permission_overwrites]
        if move_to is not None:
            base = self._without_inherited(found, base, desired)
            rewritten_keys = self._left_behind(key, label, field, found, base)
        replaced = len(base) != len(found.permission_overwrites)
        if not changes and not changed_overwrites:
            return
        if changed_overwrites or replaced:  # journaled whole: the platform replaces the list whole
            previous["permission_overwrites"] = [overwrite.model_dump() for overwrite in found.permission_overwrites]
        self.steps.append(
            ChannelStep(
                op="update_channel",
                kind=kind,
                key=key,
                name=label,
                field=field,
                channel_id=found.id,
                parent=move_to if move_to not in (None, "-") else None,
                payload=payload,
                previous=previous,
                overwrites=changed_overwrites,
                base_overwrites=base,
                replaces_overwrites=replaced,
                overwrite_keys=overwrite_keys,
                rewritten_keys=rewritten_keys,
            )
        )

    def _without_inherited(
        self, found: LiveChannel, base: list[dict[str, Any]], desired: dict[str, OverwriteSpec]
    ) -> list[dict[str, Any]]:
        """A moved channel leaves behind what it had from its old category (an overwrite equal to the category's)
        unless its new place wants that role's overwrite too: it is private or public as its new category is."""
        old_parent = self.live.channel(found.parent_id)
        inherited = {(o.id, o.type, o.allow, o.deny) for o in old_parent.permission_overwrites} if old_parent else set()
        wanted = {self.ids.get(target) for target in desired}
        return [o for o in base if (o["id"], o["type"], o["allow"], o["deny"]) not in inherited or o["id"] in wanted]

    def _left_behind(
        self, owner_key: str, label: str, field: str, found: LiveChannel, base: list[dict[str, Any]]
    ) -> list[str]:
        """A move is an access change: each overwrite the channel leaves behind with its old category is an item
        of its own (`delete`), checked as an overwrite change (MANAGE_ROLES there, only what the caller holds)."""
        kept = {entry["id"] for entry in base}
        roles = {role.id: role.name for role in self.live.roles}
        keys = []
        for overwrite in found.permission_overwrites:
            if overwrite.id in kept:
                continue
            if overwrite.type == ROLE_OVERWRITE:
                target = EVERYONE if overwrite.id == self.live.id else roles.get(overwrite.id, overwrite.id)
            else:
                target = f"member {overwrite.id}"
            old = {"allow": from_bitfield(overwrite.allow), "deny": from_bitfield(overwrite.deny)}
            item_key = f"overwrite:{owner_key}:{overwrite.id}"
            self.items.append(
                PlanItem(
                    kind="overwrite",
                    name=f"{label} → {target}",
                    action="delete",
                    changes=[Change(field="permissions", old=old, new=None)],
                    field=f"{field}.overwrites",
                    note="the move leaves behind what the channel had from its old category",
                    key=item_key,
                    owner=owner_key,
                )
            )
            keys.append(item_key)
        return keys

    def _moved(self, found: LiveChannel, parent: str | None) -> str | None:
        """Where a matched channel moves: its new category's key, "-" for outside any, None when it stays."""
        if parent is None:
            return "-" if found.parent_id is not None else None
        category = self.matches.categories.get(parent)
        if category is not None and category.id == found.parent_id:
            return None
        return parent

    def _overwrites(self, declared: dict[str, tuple[ConfigOverwrite, str]]) -> dict[str, OverwriteSpec]:
        specs = {}
        for role_name, (overwrite, field) in declared.items():
            target = EVERYONE_KEY if role_name == EVERYONE else role_key(role_name)
            allow, deny = int(to_bitfield(overwrite.allow)), int(to_bitfield(overwrite.deny))
            specs[target] = OverwriteSpec(target=target, allow=allow, deny=deny, field=field)
        return specs

    def _overwrite_changes(
        self, owner_key: str, label: str, found: LiveChannel, desired: dict[str, OverwriteSpec]
    ) -> tuple[list[OverwriteSpec], list[str]]:
        live = {o.id: o for o in found.permission_overwrites if o.type == ROLE_OVERWRITE}
        changed, keys = [], []
        for target, spec in desired.items():
            current = live.get(self.ids.get(target, ""))
            if current is None and not (spec.allow or spec.deny):
                self._overwrite_item(owner_key, label, spec, "keep")  # no overwrite grants what a neutral one does
            elif current is None:
                keys.append(self._overwrite_item(owner_key, label, spec, "create"))
                changed.append(spec)
            elif (int(current.allow), int(current.deny)) != (spec.allow, spec.deny):
                old = {"allow": from_bitfield(current.allow), "deny": from_bitfield(current.deny)}
                new = {"allow": from_bitfield(spec.allow), "deny": from_bitfield(spec.deny)}
                change = Change(field="permissions", old=old, new=new)
                keys.append(self._overwrite_item(owner_key, label, spec, "update", change))
                changed.append(spec)
            else:
                self._overwrite_item(owner_key, label, spec, "keep")
        return changed, keys

    def _overwrite_item(
        self, owner_key: str, label: str, spec: OverwriteSpec, action: Action, change: Change | None = None
    ) -> str:
        role = self.role_names[spec.target]  # the schema refuses an overwrite of a role it does not define
        key = f"overwrite:{owner_key}:{spec.target}"
        name = f"{label} → {role}"
        changes = [change] if change else []
        self.items.append(
            PlanItem(
                kind="overwrite", name=name, action=action, changes=changes, field=spec.field, key=key, owner=owner_key
            )
        )
        return key


def _declared(overwrites: list[ConfigOverwrite], field: str) -> dict[str, tuple[ConfigOverwrite, str]]:
    return {overwrite.role: (overwrite, f"{field}[{index}]") for index, overwrite in enumerate(overwrites)}
