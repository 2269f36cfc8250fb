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
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any, Literal

from svcconf.chat import Channel as LiveChannel
from svcconf.chat import Role as LiveRole
from svcconf.config import (
    CHANNEL_TYPES,
    EVERYONE,
    Category,
    ServerConfig,
    from_bitfield,
    to_bitfield,
)
from svcconf.config import Channel as ConfigChannel
from svcconf.config import Overwrite as ConfigOverwrite
from svcconf.config import Role as ConfigRole
from svcconf.deploy_engine.attributes import (
    CHANNEL_SETTINGS,
    SETTING_FIELDS,
    channel_after_create,
    channel_create_attributes,
    channel_stated_attributes,
    everyone_stated_attributes,
    live_channel_attributes,
    live_role_attributes,
    role_create_attributes,
    role_stated_attributes,
    stated_settings,
    with_tag_ids,
)
from svcconf.deploy_engine.live import LiveGuild, platform_channel_name
from svcconf.deploy_engine.matching import Matches, config_channel_key, match_objects, placed_channels
from svcconf.deploy_engine.order import GroupOrder, plan_orders
from svcconf.deploy_engine.prune import Deletions, deletions_first, plan_deletions
from svcconf.deploy_engine.steps import (
    EVERYONE_KEY,
    ROLE_OVERWRITE,
    SETTINGS_KEY,
    Action,
    Change,
    ChannelStep,
    DeploymentPlan,
    GuildStep,
    OverwriteSpec,
    PlanItem,
    ReorderChannels,
    ReorderRoles,
    RolePosition,
    RoleStep,
    Step,
    category_key,
    role_key,
)
from svcconf.errors import BadRequest, FieldError

# What the planners' callers use; the plan's data lives in svcconf.deploy_engine.steps.
__all__ = ["DeploymentPlan", "PlanItem", "plan_deployment", "reorder_within_slots"]

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


class _Planner:
    def __init__(self, live: LiveGuild, config: ServerConfig, deletions: Deletions, matches: Matches):
        self.live = live
        self.config = config
        self.matches = matches
        self.deletions = deletions
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
        if not room_channels:
            self.steps += [step for step in self.deletions.steps if step.kind != "role"]
        if not room_roles:
            self.steps += [step for step in self.deletions.steps if step.kind == "role"]
        self.items += self.deletions.items
        if self.role_order is not None:
            self.steps.append(self.role_order)
        return DeploymentPlan(
            guild_id=self.live.id, items=self.items, steps=self.steps, ids=self.ids, warnings=self.deletions.warnings
        )

    # -- roles --------------------------------------------------------------------------------------------

    def _role(self, index: int, role: ConfigRole) -> None:
        key, field = role_key(role.name), f"roles[{index}]"
        found = self.matches.roles.get(key)
        if found is None:
            payload = {"name": role.name, **role_create_attributes(role)}
            self.items.append(PlanItem(kind="role", name=role.name, action="create", field=field, key=key))
            self.steps.append(RoleStep(op="create_role", key=key, name=role.name, field=field, payload=payload))
            return
        self.ids[key] = found.id
        self._role_update(key, role.name, field, found, {"name": role.name, **role_stated_attributes(role)})

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

    # -- categories and channels ----------------------------------------------------------------------------

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
        base = [overwrite.model_dump() for overwrite in found.permission_overwrites]
        if move_to is not None:
            base = self._without_inherited(found, base, desired)
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

    def _moved(self, found: LiveChannel, parent: str | None) -> str | None:
        """Where a matched channel moves: its new category's key, "-" for outside any, None when it stays."""
        if parent is None:
            return "-" if found.parent_id is not None else None
        category = self.matches.categories.get(parent)
        if category is not None and category.id == found.parent_id:
            return None
        return parent

    # -- the guild's settings ---------------------------------------------------------------------------------

    def _settings(self) -> None:
        """One item, its changes field by field in the configuration's names (the server's name first); one PATCH
        when any differ."""
        stated = stated_settings(self.config.settings)
        live = self.live.settings
        changes: list[Change] = []
        payload: dict[str, Any] = {}
        channels: dict[str, str] = {}
        previous: dict[str, Any] = {}
        if self.config.name != self.live.name:
            changes.append(Change(field="name", old=self.live.name, new=self.config.name))
            payload["name"], previous["name"] = self.config.name, self.live.name
        for name, value in stated.items():
            if name in CHANNEL_SETTINGS:
                platform, kind = CHANNEL_SETTINGS[name]
                channel_key = self._configured_channel_key(value, kind)
                current_id = getattr(live, platform)
                if current_id is not None and self.ids.get(channel_key) == current_id:
                    continue
                current = self.live.channel(current_id)
                changes.append(Change(field=name, old=current.name if current else None, new=value))
                channels[platform], previous[platform] = channel_key, current_id
                continue
            setting = SETTING_FIELDS[name]
            wanted, current_value = setting.to_platform(value), getattr(live, setting.platform)
            if wanted != current_value:
                changes.append(Change(field=name, old=setting.to_config(current_value), new=value))
                payload[setting.platform], previous[setting.platform] = wanted, current_value
        action: Action = "update" if changes else "keep"
        self.items.append(
            PlanItem(
                kind="settings",
                name="server settings",
                action=action,
                changes=changes,
                field="settings",
                key=SETTINGS_KEY,
            )
        )
        if changes:
            field = "name" if [change.field for change in changes] == ["name"] else "settings"
            self.steps.append(GuildStep(field=field, payload=payload, channels=channels, previous=previous))

    def _configured_channel_key(self, name: str, kind: str) -> str:
        """The key of the configuration's channel of that name and type (the schema makes it exactly one)."""
        channel_type = CHANNEL_TYPES[kind]
        wanted = platform_channel_name(name, channel_type)
        places = [(c, ch) for c in self.config.categories for ch in c.channels]
        for category, channel in [*places, *((None, ch) for ch in self.config.channels)]:
            if channel.type == kind and platform_channel_name(channel.name, channel_type) == wanted:
                return config_channel_key(category.name if category else None, channel)
        raise ValueError(f"no {kind} channel named {name!r}")  # the schema refuses such a configuration

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


# ---------------------------------------------------------------- helpers


def _declared(overwrites: list[ConfigOverwrite], field: str) -> dict[str, tuple[ConfigOverwrite, str]]:
    return {overwrite.role: (overwrite, f"{field}[{index}]") for index, overwrite in enumerate(overwrites)}


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


def plan_deployment(
    live: LiveGuild, config: ServerConfig, *, prune: bool = False, confirmed_deletes: Collection[str] | None = None
) -> DeploymentPlan:
    """What deploying `config` to `live` would create, update, keep and (with `prune`) delete, and the writes that
    do it, in order. `confirmed_deletes`: the ids a confirmed plan listed; nothing else is deleted."""
    problems = _duplicates(config)
    if problems:
        raise BadRequest("The configuration names some objects twice.", details=problems)
    matches = match_objects(live, config)
    deletions = plan_deletions(live, matches, confirmed_deletes) if prune else Deletions()
    return _Planner(live, config, deletions, matches).plan()
