"""Undoing a deployment: the guild's snapshot taken before its first write, and the plan that returns to it.

Pure like the deploy plan: the live guild, the snapshot and the deployment's journal (the ids it created, the
objects it updated) in; the steps out: the guild's settings first (so none names a channel about to go), then
delete what the deployment created and is still there (channels, then categories, then roles), restore the
attributes and overwrites of what it updated from the snapshot, and one bulk move when the surviving roles no
longer stand in the snapshot's order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from svcconf.chat import Channel, Role
from svcconf.deploy_engine.attributes import GuildSettings, attributes_of_type, live_role_attributes, with_tag_ids
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.plan import reorder_within_slots
from svcconf.deploy_engine.steps import (
    SETTINGS_KEY,
    ChannelStep,
    DeleteStep,
    DeploymentPlan,
    GuildStep,
    Kind,
    PlanItem,
    ReorderRoles,
    RoleStep,
    Step,
)


class GuildSnapshot(BaseModel):
    """The guild's settings, roles, categories, channels and overwrites at one moment, as the platform returned them."""

    guild_id: str
    guild_name: str
    taken_at: datetime
    settings: GuildSettings | None = None  # None: a snapshot from before settings were recorded
    roles: list[Role]
    channels: list[Channel]

    @classmethod
    def of(cls, live: LiveGuild, taken_at: datetime) -> GuildSnapshot:
        return cls(
            guild_id=live.id,
            guild_name=live.name,
            taken_at=taken_at,
            settings=live.settings,
            roles=live.roles,
            channels=live.channels,
        )

    def backup_data(self, deployment_id: str) -> dict[str, Any]:
        """The manageBackup store's form: roles, categories and channels in lists of their own."""
        channels = [c.model_dump(mode="json") for c in self.channels if not c.is_category]
        return {
            "kind": "deployment-snapshot",
            "deployment_id": deployment_id,
            "guild": {"id": self.guild_id, "name": self.guild_name},
            "taken_at": self.taken_at.isoformat(),
            "settings": self.settings.model_dump() if self.settings else None,
            "roles": [role.model_dump(mode="json") for role in self.roles],
            "categories": [c.model_dump(mode="json") for c in self.channels if c.is_category],
            "channels": channels,
        }

    @classmethod
    def from_backup_data(cls, data: dict[str, Any]) -> GuildSnapshot:
        return cls(
            guild_id=data["guild"]["id"],
            guild_name=data["guild"]["name"],
            taken_at=data["taken_at"],
            settings=data.get("settings"),
            roles=data["roles"],
            channels=[*data["categories"], *data["channels"]],
        )


def role_state(role: Role) -> dict[str, Any]:
    return live_role_attributes(role)


def _overwrites(channel: Channel) -> list[dict[str, Any]]:
    return sorted((o.model_dump() for o in channel.permission_overwrites), key=lambda o: (o["type"], o["id"]))


def channel_state(channel: Channel) -> dict[str, Any]:
    state: dict[str, Any] = {"permission_overwrites": _overwrites(channel)}
    if not channel.is_category:
        state |= attributes_of_type(channel)
    return state


def _kind_of(key: str) -> str:
    return key.split(":", 1)[0]


def _in_deletion_order(created: dict[str, str]) -> list[tuple[str, str]]:
    # Channels before their categories (no orphan moment), roles last.
    order = {"channel": 0, "category": 1, "role": 2}
    return sorted(created.items(), key=lambda pair: order[_kind_of(pair[0])])


def plan_rollback(
    live: LiveGuild, snapshot: GuildSnapshot, created: dict[str, str], updated: dict[str, str]
) -> DeploymentPlan:
    """`created` and `updated`: object key -> id, from the journal of the deployment being undone."""
    live_roles = {role.id: role for role in live.roles}
    live_channels = {channel.id: channel for channel in live.channels}
    items: list[PlanItem] = []
    steps: list[Step] = []
    if SETTINGS_KEY in updated and snapshot.settings is not None:
        _restore_settings(items, steps, live.settings, snapshot.settings)
    deleted_roles: set[str] = set()
    for key, object_id in _in_deletion_order(created):
        if key.startswith("role:"):
            role = live_roles.get(object_id)
            if role is not None:
                deleted_roles.add(object_id)
                items.append(PlanItem(kind="role", name=role.name, action="delete", field="", key=key))
                steps.append(DeleteStep(op="delete_role", kind="role", key=key, name=role.name, object_id=object_id))
            continue
        channel = live_channels.get(object_id)
        if channel is not None:
            kind: Kind = "category" if channel.is_category else "channel"
            name = channel.name or object_id
            items.append(PlanItem(kind=kind, name=name, action="delete", field="", key=key))
            steps.append(DeleteStep(op="delete_channel", kind=kind, key=key, name=name, object_id=object_id))
    before_roles = {role.id: role for role in snapshot.roles}
    before_channels = {channel.id: channel for channel in snapshot.channels}
    for key, object_id in updated.items():
        updated_kind = _kind_of(key)
        if updated_kind == "role" and object_id in live_roles and object_id in before_roles:
            _restore_role(items, steps, key, live_roles[object_id], before_roles[object_id])
        elif updated_kind in ("channel", "category") and object_id in live_channels and object_id in before_channels:
            _restore_channel(items, steps, key, live_channels[object_id], before_channels[object_id])
    reorder = _restore_order(live, snapshot, deleted_roles)
    if reorder is not None:
        steps.append(reorder)
    return DeploymentPlan(items=items, steps=steps, ids={})


def _differences(current: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in before.items() if current.get(name) != value}


def _restore_role(items: list[PlanItem], steps: list[Step], key: str, now: Role, before: Role) -> None:
    payload = _differences(role_state(now), role_state(before))
    action = "update" if payload else "keep"
    items.append(PlanItem(kind="role", name=before.name, action=action, field="", key=key))
    if payload:
        previous = {name: role_state(now)[name] for name in payload}
        steps.append(
            RoleStep(
                op="update_role",
                key=key,
                name=before.name,
                field="",
                role_id=now.id,
                payload=payload,
                previous=previous,
            )
        )


def _restore_channel(items: list[PlanItem], steps: list[Step], key: str, now: Channel, before: Channel) -> None:
    kind: Kind = "category" if before.is_category else "channel"
    payload = with_tag_ids(_differences(channel_state(now), channel_state(before)), now)
    name = before.name or before.id
    items.append(PlanItem(kind=kind, name=name, action="update" if payload else "keep", field="", key=key))
    if payload:
        steps.append(
            ChannelStep(
                op="update_channel", kind=kind, key=key, name=name, field="", channel_id=now.id, payload=payload
            )
        )


def _restore_settings(items: list[PlanItem], steps: list[Step], now: GuildSettings, before: GuildSettings) -> None:
    payload = _differences(now.model_dump(), before.model_dump())
    action = "update" if payload else "keep"
    items.append(PlanItem(kind="settings", name="server settings", action=action, field="", key=SETTINGS_KEY))
    if payload:
        previous = {name: getattr(now, name) for name in payload}
        steps.append(GuildStep(field="", payload=payload, previous=previous))


def _restore_order(live: LiveGuild, snapshot: GuildSnapshot, deleted: set[str]) -> ReorderRoles | None:
    survivors = sorted(
        (r for r in live.roles if r.id not in deleted and not r.is_everyone(live.id)), key=lambda r: r.position
    )
    movable = {role.id for role in survivors if live.bot_can_edit(role)}
    rank_before = sorted((r for r in snapshot.roles if not r.is_everyone(snapshot.guild_id)), key=lambda r: -r.position)
    rank = {role.id: index for index, role in enumerate(rank_before)}
    return reorder_within_slots([role.id for role in survivors], movable, rank)
