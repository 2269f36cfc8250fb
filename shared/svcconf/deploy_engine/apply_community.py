"""Applying the plan's v4 steps: AutoMod rules, onboarding and the welcome screen (one platform request each).

A role or channel the deploy was to create and could not is left out of a list that names it; an alert channel
that could not be created fails its rule, with the reason."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svcconf.chat.errors import ChatError
from svcconf.deploy_engine.community import REF

if TYPE_CHECKING:
    from svcconf.chat import ChatClient
    from svcconf.deploy_engine.steps import CommunityStep

UNKNOWN_RULE = 10066


class Unresolved(Exception):
    """A reference the step cannot do without (an alert's channel) names an object that was not created."""


def resolve(value: Any, ids: dict[str, str], *, required: bool = False) -> Any:
    """The payload with each `REF + key` replaced by the id the deploy gave it; list entries not created are left
    out, a required one (a dict's value) raises `Unresolved`."""
    if isinstance(value, str) and value.startswith(REF):
        found = ids.get(value.removeprefix(REF))
        if found is None and required:
            raise Unresolved(value.removeprefix(REF))
        return found
    if isinstance(value, dict):
        return {key: resolve(item, ids, required=True) for key, item in value.items()}
    if isinstance(value, list):
        resolved = [resolve(item, ids) for item in value]
        return [item for item in resolved if item is not None]
    return value


def apply_community(
    client: ChatClient, guild_id: str, step: CommunityStep, ids: dict[str, str], reason: str
) -> tuple[str, str]:
    """Sends the step: what it did ("created", "updated" or "deleted") and the object's id (the guild's for onboarding
    and the welcome screen). `Unresolved` before any request when what it needs was not created."""
    payload = resolve(step.payload, ids)
    if step.op == "create_automod_rule":
        return "created", client.create_automod_rule(guild_id, payload, reason=reason).id
    if step.op == "update_automod_rule":
        assert step.object_id is not None
        client.modify_automod_rule(guild_id, step.object_id, payload, reason=reason)
        return "updated", step.object_id
    if step.op == "delete_automod_rule":
        assert step.object_id is not None
        try:
            client.delete_automod_rule(guild_id, step.object_id, reason=reason)
        except ChatError as error:
            if error.platform_code != UNKNOWN_RULE:  # already gone: what was wanted
                raise
        return "deleted", step.object_id
    if step.op == "put_onboarding":
        client.put_onboarding(guild_id, payload, reason=reason)
        return "updated", guild_id
    client.modify_welcome_screen(guild_id, payload, reason=reason)
    return ("updated" if step.previous else "created"), guild_id
