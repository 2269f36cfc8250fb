"""The deploy plan: a pure function of the live guild and a configuration, shared by the dry run, the worker
and its resume after a crash.

Converge, never delete. Objects are matched by name: roles by name, categories by name, channels by name, type
and category (text-like names as the platform stores them). A missing object is created; a named object whose
attributes differ from the ones the configuration gives is updated; everything else is left alone, so a second
deploy of the same configuration plans no write at all.

Steps come in the order the platform needs: @everyone's permissions, roles (with explicit permissions: a role
created without them copies @everyone's), categories with their overwrites, channels with their parent and
overwrites in the create body (no request per overwrite), the guild's settings in one request (after the
channels, so the AFK and system channels it names exist), then one bulk role reorder if the configured roles'
relative order differs.
A channel's overwrites are its category's with the channel's own replacing them per role, so a channel in a
private category is private from its first moment whatever the platform copies. A neutral overwrite (nothing
allowed or denied) is sent with a new channel (so the platform copies nothing in its place) and left unwritten on a
channel that has none: both grant the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from svcconf.chat import Channel as LiveChannel
from svcconf.chat import Role as LiveRole
from svcconf.config import CHANNEL_TYPES, EVERYONE, Category, ServerConfig, from_bitfield, to_bitfield
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
from svcconf.deploy_engine.steps import (
    EVERYONE_KEY,
    ROLE_OVERWRITE,
    SETTINGS_KEY,
    Action,
    Change,
    ChannelStep,
    DeleteStep,
    DeploymentPlan,
    GuildStep,
    OverwriteSpec,
    PlanItem,
    ReorderRoles,
    RolePosition,
    RoleStep,
    category_key,
    channel_key,
    role_key,
)
from svcconf.errors import BadRequest, FieldError

# What the planners' callers use; the plan's data lives in svcconf.deploy_engine.steps.
__all__ = ["DeploymentPlan", "PlanItem", "plan_deployment", "reorder_within_slots"]

# ---------------------------------------------------------------- matching


def _by_name[T: (LiveRole, LiveChannel)](candidates: list[T], name: str) -> T | None:
    """The live object of that name: exact first, then ignoring case; the highest, then the oldest, wins."""
    ranked = sorted(candidates, key=lambda item: (-item.position, int(item.id)))
    exact = [item for item in ranked if item.name == name]
    if exact:
        return exact[0]
    folded = [item for item in ranked if (item.name or "").casefold() == name.casefold()]
    return folded[0] if folded else None


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
            yield f"categories[{c}].channels[{n}]", _config_channel_key(category, channel), f"channel '{channel.name}'"
    for n, channel in enumerate(config.channels):
        yield f"channels[{n}]", _config_channel_key(None, channel), f"channel '{channel.name}'"


def _config_channel_key(category: Category | None, channel: ConfigChannel) -> str:
    channel_type = CHANNEL_TYPES[channel.type]
    parent = category_key(category.name) if category else None
    return channel_key(parent, channel_type, platform_channel_name(channel.name, channel_type))


# ---------------------------------------------------------------- the planner


class _Planner:
    def __init__(self, live: LiveGuild, config: ServerConfig):
        self.live = live
        self.config = config
        self.items: list[PlanItem] = []
        self.steps: list[RoleStep | ChannelStep | GuildStep | ReorderRoles | DeleteStep] = []
        self.ids: dict[str, str] = {EVERYONE_KEY: live.everyone.id}
        self.role_names = {role_key(role.name): role.name for role in config.roles}
        self.created_roles: list[str] = []  # keys, in creation order

    def plan(self) -> DeploymentPlan:
        self._everyone()
        for index, role in enumerate(self.config.roles):
            self._role(index, role)
        for index, category in enumerate(self.config.categories):
            self._category(index, category)
        for index, category in enumerate(self.config.categories):
            parent = self.ids.get(category_key(category.name))
            for n, channel in enumerate(category.channels):
                self._channel(f"categories[{index}].channels[{n}]", channel, category, parent)
        for n, channel in enumerate(self.config.channels):
            self._channel(f"channels[{n}]", channel, None, None)
        self._settings()  # after the channels: the AFK and system channels may be new
        reorder = self._reorder()
        if reorder is not None:
            self.steps.append(reorder)
        return DeploymentPlan(items=self.items, steps=self.steps, ids=self.ids)

    # -- roles --------------------------------------------------------------------------------------------

    def _role(self, index: int, role: ConfigRole) -> None:
        key, field = role_key(role.name), f"roles[{index}]"
        live_roles = [r for r in self.live.roles if not r.is_everyone(self.live.id)]
        found = _by_name(live_roles, role.name)
        if found is None:
            payload = {"name": role.name, **role_create_attributes(role)}
            self.items.append(PlanItem(kind="role", name=role.name, action="create", field=field, key=key))
            self.steps.append(RoleStep(op="create_role", key=key, name=role.name, field=field, payload=payload))
            self.created_roles.append(key)
            return
        self.ids[key] = found.id
        self._role_update(key, role.name, field, found, role_stated_attributes(role))

    def _everyone(self) -> None:
        """`everyone_permissions`: the @everyone role (its id is the guild's) updated like any role."""
        wanted = everyone_stated_attributes(self.config.everyone_permissions)
        if wanted:
            self._role_update(role_key(EVERYONE), EVERYONE, "everyone_permissions", self.live.everyone, wanted)

    def _role_update(self, key: str, name: str, field: str, found: LiveRole, wanted: dict[str, Any]) -> None:
        # Only what the configuration states is compared, so an omitted attribute never resets a live one.
        current = live_role_attributes(found)
        changes = [Change(field=n, old=current[n], new=v) for n, v in wanted.items() if current[n] != v]
        action: Action = "update" if changes else "keep"
        self.items.append(PlanItem(kind="role", name=name, action=action, changes=changes, field=field, key=key))
        if not changes:
            return
        self.steps.append(
            RoleStep(
                op="update_role",
                key=key,
                name=name,
                field=field,
                role_id=found.id,
                payload={change.field: change.new for change in changes},
                previous={change.field: change.old for change in changes},
            )
        )

    def _reorder(self) -> ReorderRoles | None:
        """One bulk move so the configured roles stand in the configuration's order (first = highest)."""
        # The order after the creations: each new role appears at position 1, pushing the others up.
        existing = sorted((r for r in self.live.roles if not r.is_everyone(self.live.id)), key=lambda r: r.position)
        bottom_up = [*reversed(self.created_roles), *(role.id for role in existing)]
        movable = set(self.created_roles) | {role.id for role in existing if self.live.bot_can_edit(role)}
        rank = {self.ids.get(role_key(role.name), role_key(role.name)): i for i, role in enumerate(self.config.roles)}
        return reorder_within_slots(bottom_up, movable, rank)

    # -- categories and channels ----------------------------------------------------------------------------

    def _category(self, index: int, category: Category) -> None:
        key, field = category_key(category.name), f"categories[{index}]"
        found = _by_name(self.live.categories, category.name)
        desired = self._overwrites(_declared(category.overwrites, f"{field}.overwrites"))
        self._channel_like("category", key, field, category.name, found, {}, None, desired, parent=None)

    def _channel(self, field: str, channel: ConfigChannel, category: Category | None, parent_id: str | None) -> None:
        channel_type = CHANNEL_TYPES[channel.type]
        stored_name = platform_channel_name(channel.name, channel_type)
        parent = category_key(category.name) if category else None
        key = channel_key(parent, channel_type, stored_name)
        # A channel of a category that does not exist yet cannot exist yet either.
        siblings = self.live.children_of(parent_id) if parent_id or not parent else []
        found = _by_name([c for c in siblings if c.type == channel_type], stored_name)
        category_field = field.rsplit(".channels", 1)[0]
        inherited = _declared(category.overwrites, f"{category_field}.overwrites") if category else {}
        desired = self._overwrites(inherited | _declared(channel.overwrites, f"{field}.overwrites"))
        create = {"name": channel.name, "type": channel_type, **channel_create_attributes(channel)}
        label = f"{category.name} / {channel.name}" if category else channel.name
        self._channel_like("channel", key, field, label, found, create, channel, desired, parent)

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
    ) -> None:
        if found is None:
            self.items.append(PlanItem(kind=kind, name=label, action="create", field=field, key=key))
            overwrite_keys = [self._overwrite_item(key, label, spec, "create") for spec in desired.values()]
            payload = create or {"name": label, "type": CHANNEL_TYPES["category"]}
            self.steps.append(
                ChannelStep(
                    op="create_channel",
                    kind=kind,
                    key=key,
                    name=label,
                    field=field,
                    parent=parent,
                    payload=payload,
                    after_create=channel_after_create(channel) if channel else {},
                    overwrites=list(desired.values()),
                    overwrite_keys=overwrite_keys,
                )
            )
            return
        self.ids[key] = found.id
        current = live_channel_attributes(found)
        wanted = channel_stated_attributes(channel, found.flags) if channel else {}
        changes = [Change(field=n, old=current.get(n), new=v) for n, v in wanted.items() if current.get(n) != v]
        action: Action = "update" if changes else "keep"
        self.items.append(PlanItem(kind=kind, name=label, action=action, changes=changes, field=field, key=key))
        changed_overwrites, overwrite_keys = self._overwrite_changes(key, label, found, desired)
        if not changes and not changed_overwrites:
            return
        self.steps.append(
            ChannelStep(
                op="update_channel",
                kind=kind,
                key=key,
                name=label,
                field=field,
                channel_id=found.id,
                payload=with_tag_ids({change.field: change.new for change in changes}, found),
                previous={change.field: change.old for change in changes},
                overwrites=changed_overwrites,
                base_overwrites=[overwrite.model_dump() for overwrite in found.permission_overwrites],
                overwrite_keys=overwrite_keys,
            )
        )

    # -- the guild's settings ---------------------------------------------------------------------------------

    def _settings(self) -> None:
        """One item, its changes field by field in the configuration's names; one PATCH when any differ."""
        stated = stated_settings(self.config.settings)
        if not stated:
            return
        live = self.live.settings
        changes, payload, channels, previous = [], {}, {}, {}
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
            self.steps.append(GuildStep(payload=payload, channels=channels, previous=previous))

    def _configured_channel_key(self, name: str, kind: str) -> str:
        """The key of the configuration's channel of that name and type (the schema makes it exactly one)."""
        channel_type = CHANNEL_TYPES[kind]
        wanted = platform_channel_name(name, channel_type)
        places = [(c, ch) for c in self.config.categories for ch in c.channels]
        for category, channel in [*places, *((None, ch) for ch in self.config.channels)]:
            if channel.type == kind and platform_channel_name(channel.name, channel_type) == wanted:
                return _config_channel_key(category, channel)
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
        role = EVERYONE if spec.target == EVERYONE_KEY else self.role_names.get(spec.target, spec.target)
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
    final = {ref: position for position, ref in enumerate(bottom_up, start=1) if ref in movable}
    final |= dict(zip(wanted, slots, strict=True))
    # Every movable role with its position: a partial list would leave ties for the platform to break.
    return ReorderRoles(positions=[RolePosition(ref=ref, position=pos) for ref, pos in sorted(final.items())])


def plan_deployment(live: LiveGuild, config: ServerConfig) -> DeploymentPlan:
    """What deploying `config` to `live` would create, update and keep, and the writes that do it, in order."""
    problems = _duplicates(config)
    if problems:
        raise BadRequest("The configuration names some objects twice.", details=problems)
    return _Planner(live, config).plan()
