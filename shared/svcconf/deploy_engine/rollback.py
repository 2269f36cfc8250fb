"""Undoing a deployment: the guild's snapshot taken before its first write, and the plan that returns to it.

Pure like the deploy plan: the live guild, the snapshot and the deployment's journal (the ids it created, the
objects it updated, the fingerprint each write left) in; the steps out: the guild's settings first (so none names
a channel about to go), the attributes and overwrites of what it updated restored from the snapshot, then delete
what it created and is still there (channels, then categories, then roles), and one bulk move when the surviving
roles no longer stand in the snapshot's order. It never touches what it did not do: an object anyone changed
since the deployment's write (`svcconf.deploy_engine.journal`) is left as it is and named, and a category it made
that still holds other channels is kept.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from svcconf.chat import Channel, Role
from svcconf.deploy_engine.apply import ItemError
from svcconf.deploy_engine.attributes import GuildSettings, with_tag_ids
from svcconf.deploy_engine.journal import (
    Fingerprint,
    changed_fields,
    channel_fields,
    field_was,
    guild_fields,
    role_fields,
)
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.plan_roles import reorder_within_slots
from svcconf.deploy_engine.restore import Recreation
from svcconf.deploy_engine.rollback_community import plan_community_rollback
from svcconf.deploy_engine.rollback_steps import fields_to_restore, restore_role, restore_settings
from svcconf.deploy_engine.snapshot import GuildSnapshot
from svcconf.deploy_engine.steps import (
    ROLE_OVERWRITE,
    SETTINGS_KEY,
    Action,
    ChannelPosition,
    ChannelStep,
    DeleteStep,
    DeploymentPlan,
    Kind,
    OverwriteSpec,
    PlanItem,
    ReorderChannels,
    ReorderRoles,
    Step,
)


def _kind_of(key: str) -> str:
    return key.split(":", 1)[0]


class RollbackJournal(BaseModel):
    """What the deployment being undone journaled: object key -> id of what it created and what it updated, and
    the fingerprint of each object as its last write left it."""

    created: dict[str, str] = Field(default_factory=dict)
    updated: dict[str, str] = Field(default_factory=dict)
    deleted: dict[str, str] = Field(default_factory=dict)
    after: dict[str, Fingerprint] = Field(default_factory=dict)
    done: dict[str, str] = Field(default_factory=dict)  # the rollback's own creations so far (a resumed run)


class RollbackPlan(BaseModel):
    plan: DeploymentPlan
    left: list[ItemError] = Field(default_factory=list)  # what anyone changed since: left as it is, named


def plan_rollback(live: LiveGuild, snapshot: GuildSnapshot, journal: RollbackJournal) -> RollbackPlan:
    return _RollbackPlanner(live, snapshot, journal).plan()


class _RollbackPlanner:
    """Re-creates first what the deployment deleted (`restore.Recreation`), then restores the settings and what it
    updated (names, categories, attributes, overwrites: from the snapshot), then deletes what it created (channels,
    categories, roles: no orphan moment, and a channel's overwrites are restored before the roles they name go),
    then the order of roles and channels. Each object only if it is as the deployment left it."""

    def __init__(self, live: LiveGuild, snapshot: GuildSnapshot, journal: RollbackJournal):
        self.live, self.snapshot, self.journal = live, snapshot, journal
        self.live_roles = {role.id: role for role in live.roles}
        self.live_channels = {channel.id: channel for channel in live.channels}
        self.items: list[PlanItem] = []
        self.steps: list[Step] = []
        self.left: list[ItemError] = []
        self.deleted: set[str] = set()
        self.deleted_roles = set(journal.deleted.values())  # their overwrites went with them
        self.recreation = Recreation(
            live, snapshot.roles, snapshot.channels, deleted=journal.deleted, done=journal.done
        )

    def plan(self) -> RollbackPlan:
        self.recreation.plan(self.items, self.steps)
        if SETTINGS_KEY in self.journal.updated and self.snapshot.settings is not None:
            self._settings(self.snapshot.settings)
        else:
            cleared = self._cleared_by_deletion()
            if cleared is not None:
                now = guild_fields(self.live.name, self.live.settings)
                restore_settings(self.items, self.steps, now, guild_fields(self.live.name, cleared), self.recreation)
        before_roles = {role.id: role for role in self.snapshot.roles}
        before_channels = {channel.id: channel for channel in self.snapshot.channels}
        for key, object_id in self.journal.updated.items():
            if _kind_of(key) == "role":
                self._restore(key, object_id, self.live_roles.get(object_id), before_roles.get(object_id))
            elif _kind_of(key) in ("channel", "category") and object_id in before_channels:
                before = self.recreation.as_now(before_channels[object_id])
                self._restore(key, object_id, self.live_channels.get(object_id), before)
        self._reattach_overwrites()
        held: dict[str, Any] = self.snapshot.model_dump(include={"features"}) | {
            "automod_rules": self.snapshot.automod_rules,
            "onboarding": self.snapshot.onboarding,
            "welcome_screen": self.snapshot.welcome_screen,
        }
        journal = self.journal
        plan_community_rollback(
            self.live, held, journal.created, journal.updated, journal.deleted, self.items, self.steps
        )
        for key, object_id in _in_deletion_order(self.journal.created):
            self._delete(key, object_id)
        for reorder in (self._role_order(), self._channel_order()):
            if reorder is not None:
                self.steps.append(reorder)
        plan = DeploymentPlan(guild_id=self.live.id, items=self.items, steps=self.steps, ids=self.recreation.ids)
        return RollbackPlan(plan=plan, left=self.left)

    def _changed_since(self, key: str, kind: Kind, name: str, fields: dict[str, Any], object_id: str) -> bool:
        """Whether anyone changed the object since the deployment's last write of it: if so it is named."""
        changed = changed_fields(fields, self.journal.after.get(key))
        if changed:
            self.items.append(PlanItem(kind=kind, name=name, action="keep", id=object_id, field="", key=key))
            what = ", ".join(changed)
            message = f"changed since the deployment ({what}): left as it is"
            self.left.append(ItemError(kind=kind, name=name, message=message))
        return bool(changed)

    def _settings(self, settings_before: GuildSettings) -> None:
        """The server's name and settings back as the snapshot has them, field by field: a field someone else changed
        since is left as it is and named; an AFK or system channel the platform cleared because the deployment
        deleted its channel is nobody else's change (the rollback re-creates the channel and names it again)."""
        now = guild_fields(self.live.name, self.live.settings)
        before = guild_fields(self.snapshot.guild_name, settings_before)
        after = self.journal.after.get(SETTINGS_KEY)
        deleted = set(self.journal.deleted.values())
        others = [
            field
            for field in changed_fields(now, after)
            if not (
                now.get(field) is None
                and before.get(field) in deleted
                and field_was(now, after, field, before.get(field))
            )
        ]
        if others == ["its attributes"]:  # a fingerprint that cannot name its fields: the whole is left
            others = list(now)
        kept = {field: now[field] for field in others if field in now}
        wanted = before | kept
        if now == wanted:
            if kept:
                self._left_settings(others)
            return  # as the snapshot had them (a resumed rollback restored them already)
        if kept:
            self._left_settings(others)
        restore_settings(self.items, self.steps, now, wanted, self.recreation)

    def _left_settings(self, fields: list[str]) -> None:
        what = ", ".join(sorted(fields))
        message = f"changed since the deployment ({what}): left as it is"
        self.left.append(ItemError(kind="settings", name="server settings", message=message))

    def _cleared_by_deletion(self) -> GuildSettings | None:
        """The snapshot's settings where they only named channels the deployment deleted (and the platform cleared
        them): a deployment that changed no setting changed those all the same."""
        if self.snapshot.settings is None:
            return None
        deleted = set(self.journal.deleted.values())
        now = guild_fields(self.live.name, self.live.settings)
        before = guild_fields(self.snapshot.guild_name, self.snapshot.settings)
        cleared = {
            field: before[field]
            for field in ("afk_channel_id", "system_channel_id")
            if before.get(field) in deleted and now.get(field) is None
        }
        if not cleared:
            return None
        return self.live.settings.model_copy(update=cleared)

    def _restore(self, key: str, object_id: str, now: Role | Channel | None, before: Role | Channel | None) -> None:
        kind: Kind = "role" if isinstance(before, Role) else _channel_kind(before)
        name = (before.name if before else None) or object_id
        if now is None:
            self.left.append(ItemError(kind=kind, name=name, message="deleted since the deployment: not restored"))
            return
        if isinstance(now, Role) and isinstance(before, Role):
            if role_fields(now) != role_fields(before) and not self._changed_since(
                key, kind, name, role_fields(now), object_id
            ):
                restore_role(self.items, self.steps, key, now, before)
        elif isinstance(now, Channel) and isinstance(before, Channel):
            changed = channel_fields(now) != channel_fields(before)
            if changed and not self._changed_since(key, kind, name, channel_fields(now, self.deleted_roles), object_id):
                self._restore_channel(key, now, before)

    def _delete(self, key: str, object_id: str) -> None:
        if _kind_of(key) == "role":
            role = self.live_roles.get(object_id)
            if role is None or self._changed_since(key, "role", role.name, role_fields(role), object_id):
                return
            self.deleted.add(object_id)
            self.items.append(PlanItem(kind="role", name=role.name, action="delete", id=object_id, field="", key=key))
            self.steps.append(DeleteStep(op="delete_role", kind="role", key=key, name=role.name, object_id=object_id))
            return
        channel = self.live_channels.get(object_id)
        if channel is None:
            return
        kind, name = _channel_kind(channel), channel.name or object_id
        if self._changed_since(key, kind, name, channel_fields(channel, self.deleted_roles), object_id):
            return
        if channel.is_category:
            staying = [c for c in self.live.children_of(object_id) if c.id not in self.deleted]
            if staying:
                self.items.append(PlanItem(kind=kind, name=name, action="keep", id=object_id, field="", key=key))
                message = f"kept: it holds {_channels(len(staying))} the deployment did not make or that changed since"
                self.left.append(ItemError(kind=kind, name=name, message=message))
                return
        self.deleted.add(object_id)
        self.items.append(PlanItem(kind=kind, name=name, action="delete", id=object_id, field="", key=key))
        self.steps.append(DeleteStep(op="delete_channel", kind=kind, key=key, name=name, object_id=object_id))

    def _restore_channel(self, key: str, now: Channel, before: Channel) -> None:
        """Name, category, attributes and overwrites back as the snapshot has them; a category or a role the
        deployment deleted is named by its re-creation's key."""
        kind: Kind = "category" if before.is_category else "channel"
        differences = fields_to_restore(channel_fields(now), channel_fields(before))
        parent = None
        if "parent_id" in differences and self.recreation.is_recreated(before.parent_id):
            parent = self.recreation.ref(before.parent_id or "")
            del differences["parent_id"]
        specs, base, overwrite_keys = [], [], []
        if "permission_overwrites" in differences:
            targets = {o.id for o in before.permission_overwrites}
            if any(self.recreation.is_recreated(target) for target in targets):
                del differences["permission_overwrites"]
                specs = self.recreation.overwrites(before)
                name = before.name or before.id
                base = [o.model_dump() for o in before.permission_overwrites if o.type != ROLE_OVERWRITE]
                for spec in specs:
                    overwrite_key = f"overwrite:{key}:{spec.target}"
                    self.items.append(
                        PlanItem(
                            kind="overwrite",
                            name=before.name or "",
                            action="update",
                            id=now.id,
                            field="",
                            key=overwrite_key,
                            owner=key,
                        )
                    )
                    overwrite_keys.append(overwrite_key)
        name = before.name or before.id
        rewritten_keys = []
        if "permission_overwrites" in differences:  # the list goes back whole: each overwrite it changes, an item
            rewritten_keys = self._restored_overwrites(key, name, now, before)
        self.items.append(PlanItem(kind=kind, name=name, action="update", id=now.id, field="", key=key))
        self.steps.append(
            ChannelStep(
                op="update_channel",
                kind=kind,
                key=key,
                name=name,
                field="",
                channel_id=now.id,
                parent=parent,
                payload=with_tag_ids(differences, now),
                overwrites=specs,
                base_overwrites=base,
                overwrite_keys=overwrite_keys,
                rewritten_keys=rewritten_keys,
            )
        )

    def _restored_overwrites(self, key: str, name: str, now: Channel, before: Channel) -> list[str]:
        """The overwrites a restored list creates, changes or removes, each an item of its own (checked as a deploy's
        overwrite changes are)."""
        was = {o.id: o for o in now.permission_overwrites}
        wanted = {o.id: o for o in before.permission_overwrites}
        roles = {role.id: role.name for role in [*self.snapshot.roles, *self.live.roles]}
        keys = []
        for target in dict.fromkeys([*was, *wanted]):
            old, new = was.get(target), wanted.get(target)
            if old is not None and new is not None and (old.allow, old.deny) == (new.allow, new.deny):
                continue
            action: Action = "create" if old is None else "delete" if new is None else "update"
            who = "@everyone" if target == self.live.id else roles.get(target, target)
            overwrite_key = f"overwrite:{key}:{target}"
            self.items.append(
                PlanItem(
                    kind="overwrite",
                    name=f"{name} → {who}",
                    action=action,
                    id=now.id,
                    field="",
                    key=overwrite_key,
                    owner=key,
                )
            )
            keys.append(overwrite_key)
        return keys

    def _reattach_overwrites(self) -> None:
        """A role the deployment deleted took its overwrites with it from every channel, written by the deployment
        or not: its re-creation gets them back wherever the snapshot had them (and nothing else changes there)."""
        restored = {step.channel_id for step in self.steps if isinstance(step, ChannelStep)}
        made_again = self.recreation.made_again()
        for snapshot_channel in self.snapshot.channels:
            now = self.live_channels.get(snapshot_channel.id)
            if now is None or now.id in restored:
                continue
            present = {o.id for o in now.permission_overwrites}
            before = self.recreation.as_now(snapshot_channel)
            lost = [o for o in before.permission_overwrites if o.id in made_again and o.id not in present]
            if not lost:
                continue
            key, name = f"overwrites:restore:{now.id}", now.name or now.id
            specs = [
                OverwriteSpec(target=self.recreation.ref(o.id), allow=int(o.allow), deny=int(o.deny), field="")
                for o in lost
            ]
            overwrite_keys = [f"overwrite:{key}:{spec.target}" for spec in specs]
            self.items.append(
                PlanItem(kind=_channel_kind(now), name=name, action="update", id=now.id, field="", key=key)
            )
            self.items += [
                PlanItem(kind="overwrite", name=name, action="create", field="", key=overwrite_key, owner=key)
                for overwrite_key in overwrite_keys
            ]
            self.steps.append(
                ChannelStep(
                    op="update_channel",
                    kind=_channel_kind(now),
                    key=key,
                    name=name,
                    field="",
                    channel_id=now.id,
                    payload={},
                    overwrites=specs,
                    base_overwrites=[o.model_dump() for o in now.permission_overwrites],
                    overwrite_keys=overwrite_keys,
                )
            )

    def _role_order(self) -> ReorderRoles | None:
        """The surviving and re-created roles in the snapshot's order, within the slots they hold (a new role
        appears at the bottom, just above @everyone)."""
        live, snapshot, recreation = self.live, self.snapshot, self.recreation
        survivors = sorted(
            (r for r in live.roles if r.id not in self.deleted and not r.is_everyone(live.id)), key=lambda r: r.position
        )
        new = [recreation.refs[role.id] for role in recreation.roles if recreation.refs[role.id] not in recreation.ids]
        bottom_up = [*reversed(new), *(role.id for role in survivors)]
        movable = {role.id for role in survivors if live.bot_can_edit(role)} | set(new)
        ranked = sorted((r for r in snapshot.roles if not r.is_everyone(snapshot.guild_id)), key=lambda r: -r.position)
        rank = {role.id: index for index, role in enumerate(ranked)}
        rank |= {recreation.refs[old]: rank[old] for old in recreation.refs if old in rank}
        rank |= {new_id: rank[old] for new_id, old in recreation.old_id_of.items() if old in rank}
        return reorder_within_slots(bottom_up, movable, rank)

    def _channel_order(self) -> ReorderChannels | None:
        """The snapshot's positions for the channels it held that stand elsewhere now, and the re-created ones."""
        live_channels, recreation = self.live_channels, self.recreation
        moved = [
            ChannelPosition(ref=c.id, position=c.position, previous=live_channels[c.id].position)
            for c in self.snapshot.channels
            if c.id in live_channels and c.id not in self.deleted and live_channels[c.id].position != c.position
        ]
        if not moved:
            return None
        made = [ChannelPosition(ref=recreation.refs[c.id], position=c.position) for c in recreation.channels]
        return ReorderChannels(positions=[*moved, *made])


def _channel_kind(channel: Channel | None) -> Kind:
    return "category" if channel is not None and channel.is_category else "channel"


def _channels(count: int) -> str:
    return f"{count} channel" if count == 1 else f"{count} channels"


def _in_deletion_order(created: dict[str, str]) -> list[tuple[str, str]]:
    # Channels before their categories (no orphan moment), roles last.
    order = {"channel": 0, "category": 1, "role": 2}
    mine = [pair for pair in created.items() if _kind_of(pair[0]) in order]  # v4's: rollback_community.py
    return sorted(mine, key=lambda pair: order[_kind_of(pair[0])])
