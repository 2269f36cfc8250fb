"""Re-creating what a deployment deleted, from the snapshot taken before it: roles with their permissions, colour
and position (a new id, without their members), categories, then channels with their topic, overwrites, category
and position (their messages cannot come back).

The new objects get ids only when they are made, so everything the rollback writes refers to objects by key:
`<kind>:restore:<old id>` for one re-created here, `existing:<id>` for one still there; the applier resolves both.
A resumed rollback does not make again what its own journal says it made.
"""

from __future__ import annotations

from typing import Any

from svcconf.chat import Channel, Role
from svcconf.deploy_engine.attributes import attributes_of_type, live_role_attributes
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import (
    EVERYONE_KEY,
    ROLE_OVERWRITE,
    ChannelStep,
    Kind,
    OverwriteSpec,
    PlanItem,
    RoleStep,
    Step,
)

EXISTING_PREFIX = "existing:"


def restore_key(kind: Kind, old_id: str) -> str:
    return f"{kind}:restore:{old_id}"


class Recreation:
    """What of the snapshot a deployment deleted and is still gone, and the steps that make it again."""

    def __init__(self, live: LiveGuild, snapshot_roles: list[Role], snapshot_channels: list[Channel], **journal: Any):
        deleted: dict[str, str] = journal["deleted"]  # the deployment's: plan key -> the id it deleted
        done: dict[str, str] = journal["done"]  # the rollback's own creations so far: key -> new id
        present = {role.id for role in live.roles} | {channel.id for channel in live.channels}
        gone = set(deleted.values()) - present
        self.live = live
        self.roles = [role for role in snapshot_roles if role.id in gone]
        self.channels = sorted(
            (channel for channel in snapshot_channels if channel.id in gone),
            key=lambda c: (not c.is_category, c.position),
        )
        self.refs: dict[str, str] = {role.id: restore_key("role", role.id) for role in self.roles}
        self.refs |= {channel.id: restore_key(_kind(channel), channel.id) for channel in self.channels}
        self.ids: dict[str, str] = {EVERYONE_KEY: live.id}
        self.ids |= {key: new_id for key, new_id in done.items() if key in self.refs.values()}
        self.old_id_of = {new_id: old_id for old_id, key in self.refs.items() if (new_id := self.ids.get(key))}

    def ref(self, object_id: str) -> str:
        """The key the applier turns into the object's id when the step runs."""
        if object_id == self.live.id:
            return EVERYONE_KEY
        if object_id in self.refs:
            return self.refs[object_id]
        self.ids[EXISTING_PREFIX + object_id] = object_id
        return EXISTING_PREFIX + object_id

    def as_now(self, channel: Channel) -> Channel:
        """The snapshot's channel with the ids of what a resumed rollback already made again in place of the old
        ones, so that it compares equal with a channel restored before."""
        new = {old_id: new_id for new_id, old_id in self.old_id_of.items()}
        overwrites = [o.model_copy(update={"id": new.get(o.id, o.id)}) for o in channel.permission_overwrites]
        parent = new.get(channel.parent_id or "", channel.parent_id)
        return channel.model_copy(update={"permission_overwrites": overwrites, "parent_id": parent})

    def made_again(self) -> set[str]:
        """The ids, old and new, of the roles and channels this rollback makes again."""
        return set(self.refs) | set(self.old_id_of)

    def is_recreated(self, object_id: str | None) -> bool:
        return object_id is not None and object_id in self.refs

    def plan(self, items: list[PlanItem], steps: list[Step]) -> None:
        """Roles first (the channels' overwrites name them), then categories, then channels."""
        for role in self.roles:
            key = self.refs[role.id]
            items.append(PlanItem(kind="role", name=role.name, action="create", field="", key=key))
            if key not in self.ids:
                attributes = {name: value for name, value in live_role_attributes(role).items() if value is not None}
                payload = {"name": role.name, **attributes}
                steps.append(RoleStep(op="create_role", key=key, name=role.name, field="", payload=payload))
        for channel in self.channels:
            self._channel(channel, items, steps)

    def overwrites(self, channel: Channel) -> list[OverwriteSpec]:
        return [
            OverwriteSpec(target=self.ref(o.id), allow=int(o.allow), deny=int(o.deny), field="")
            for o in channel.permission_overwrites
            if o.type == ROLE_OVERWRITE
        ]

    def _channel(self, channel: Channel, items: list[PlanItem], steps: list[Step]) -> None:
        key, kind, name = self.refs[channel.id], _kind(channel), channel.name or channel.id
        items.append(PlanItem(kind=kind, name=name, action="create", field="", key=key))
        if key in self.ids:
            return
        specs = self.overwrites(channel)
        overwrite_keys = []
        for spec in specs:
            overwrite_key = f"overwrite:{key}:{spec.target}"
            items.append(PlanItem(kind="overwrite", name=name, action="create", field="", key=overwrite_key, owner=key))
            overwrite_keys.append(overwrite_key)
        payload: dict[str, Any] = {"name": name, "type": channel.type, "position": channel.position}
        after_create: dict[str, Any] = {}
        if not channel.is_category:
            attributes = {n: v for n, v in attributes_of_type(channel).items() if v is not None}
            if attributes.pop("flags", 0):
                after_create["flags"] = channel.flags  # the platform takes channel flags only on modify
            payload |= attributes
        steps.append(
            ChannelStep(
                op="create_channel",
                kind=kind,
                key=key,
                name=name,
                field="",
                parent=self.ref(channel.parent_id) if channel.parent_id else None,
                payload=payload,
                after_create=after_create,
                overwrites=specs,
                overwrite_keys=overwrite_keys,
            )
        )


def _kind(channel: Channel) -> Kind:
    return "category" if channel.is_category else "channel"
