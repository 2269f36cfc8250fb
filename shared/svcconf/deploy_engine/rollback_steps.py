"""The steps that put one role, or the server's settings, back as a snapshot had them: only the fields that differ,
each with the value it replaces (a step's `previous`), and a plan item even when nothing differs.
"""

from __future__ import annotations

from typing import Any

from svcconf.chat import Role
from svcconf.deploy_engine.journal import role_fields
from svcconf.deploy_engine.restore import Recreation
from svcconf.deploy_engine.steps import SETTINGS_KEY, GuildStep, PlanItem, RoleStep, Step


def fields_to_restore(current: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in before.items() if current.get(name) != value}


def restore_role(items: list[PlanItem], steps: list[Step], key: str, now: Role, before: Role) -> None:
    payload = fields_to_restore(role_fields(now), role_fields(before))
    action = "update" if payload else "keep"
    items.append(PlanItem(kind="role", name=before.name, action=action, id=now.id, field="", key=key))
    if payload:
        previous = {name: role_fields(now)[name] for name in payload}
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


def restore_settings(
    items: list[PlanItem], steps: list[Step], now: dict[str, Any], before: dict[str, Any], recreation: Recreation
) -> None:
    """The server's name and settings (`journal.guild_fields`) back as they were, in one request; an AFK or
    system channel the deployment deleted is named by its re-creation's key."""
    payload = fields_to_restore(now, before)
    channels = {}
    for field in ("afk_channel_id", "system_channel_id"):
        if recreation.is_recreated(payload.get(field)):
            channels[field] = recreation.ref(payload.pop(field))
    action = "update" if payload or channels else "keep"
    items.append(PlanItem(kind="settings", name="server settings", action=action, field="", key=SETTINGS_KEY))
    if payload or channels:
        previous = {name: now[name] for name in [*payload, *channels]}
        steps.append(GuildStep(field="", payload=payload, channels=channels, previous=previous))
