"""A backup as one caller may see it: the channels they could not view are left out of the plans, diffs and
restores they ask for (docs/05-deploy-engine.md, "Restore"), with every reference to them.

A backup's channel is hidden from the caller when, under the backup's own overwrites (a channel's are its
category's with its own replacing them role by role, as a deploy writes them), their permissions now do not let them
view it; or when the guild has it now (by id) and hides it from them. The caller's roles are matched to the backup's
by id, else (a role the guild no longer has) by name. A category stays while it holds a channel they can view, as
the platform's client shows it. References to a left-out channel (the AFK and system channels, AutoMod alerts and
exemptions, onboarding's channels, the welcome screen's) are left out too, so nothing names it; a deploy keeps the
guild's own references to hidden channels as the server has them (`deploy_engine/hidden_refs.py`).
"""

from __future__ import annotations

from svcconf.caller_rights import CallerStanding, CallerView
from svcconf.config import EVERYONE, Category, ServerConfig
from svcconf.config.access import (
    VIEW_CHANNEL_BIT,
    OverwriteBits,
    Place,
    channel_permissions,
    channel_place,
    overwrite_bits,
)
from svcconf.deploy_engine.live import LiveGuild


def in_callers_view(config: ServerConfig, standing: CallerStanding, seen: CallerView) -> ServerConfig:
    """The backup's configuration without the channels hidden from the caller, and without what names them."""
    held = _held_roles(config, standing, seen.live)
    live_hidden = {channel.id for channel in seen.hidden}

    def sees(place: Place, object_id: str | None) -> bool:
        if object_id is not None and object_id in live_hidden:
            return False
        everyone = place.overwrites.get(EVERYONE)
        roles = [bits for name, bits in place.overwrites.items() if name in held]
        return bool(channel_permissions(standing.permissions, everyone, roles, voice=place.voice) & VIEW_CHANNEL_BIT)

    categories: list[Category] = []
    for category in config.categories:
        inherited: dict[str, OverwriteBits] = overwrite_bits(category.overwrites)
        shown = [ch for ch in category.channels if sees(channel_place(ch, inherited), ch.id)]
        if shown or sees(Place(False, inherited), category.id):
            categories.append(category.model_copy(update={"channels": shown}))
    channels = [ch for ch in config.channels if sees(channel_place(ch, {}), ch.id)]
    kept = config.model_copy(update={"categories": categories, "channels": channels})
    if _places(kept) == _places(config):
        return config
    return _without_references(kept)


def _places(config: ServerConfig) -> int:
    return sum(len(c.channels) + 1 for c in config.categories) + len(config.channels)


def _held_roles(config: ServerConfig, standing: CallerStanding, live: LiveGuild) -> set[str]:
    """The backup's roles (by name) the caller holds now: by id, else by name for a role the guild no longer has."""
    live_ids = {role.id for role in live.roles}
    held_names = {role.name for role in live.roles if role.id in standing.role_ids}
    return {
        role.name
        for role in config.roles
        if (role.id is not None and role.id in standing.role_ids)
        or ((role.id is None or role.id not in live_ids) and role.name in held_names)
    }


def _without_references(config: ServerConfig) -> ServerConfig:
    """The configuration without its references to channels it no longer holds (copied, not validated again: a rule
    whose one action alerted a hidden channel keeps its other fields)."""

    def present(name: str | None) -> bool:
        return name is not None and bool(config.find_channels(name))

    update: dict[str, object] = {}
    settings = config.settings
    if settings is not None:
        gone = {field: None for field in ("afk_channel", "system_channel") if not present(getattr(settings, field))}
        gone = {field: value for field, value in gone.items() if getattr(settings, field) is not None}
        if gone:
            update["settings"] = settings.model_copy(update=gone)
    if config.automod is not None:
        update["automod"] = [
            rule.model_copy(
                update={
                    "actions": [a for a in rule.actions if a.channel is None or present(a.channel)],
                    "exempt_channels": [name for name in rule.exempt_channels if present(name)],
                }
            )
            for rule in config.automod
        ]
    onboarding = config.onboarding
    if onboarding is not None:
        prompts = [
            prompt.model_copy(
                update={
                    "options": [
                        option.model_copy(update={"channels": [n for n in option.channels if present(n)]})
                        for option in prompt.options
                    ]
                }
            )
            for prompt in onboarding.prompts
        ]
        default_channels = [name for name in onboarding.default_channels if present(name)]
        update["onboarding"] = onboarding.model_copy(update={"prompts": prompts, "default_channels": default_channels})
    screen = config.welcome_screen
    if screen is not None:
        shown = [entry for entry in screen.channels if present(entry.channel)]
        update["welcome_screen"] = screen.model_copy(update={"channels": shown})
    return config.model_copy(update=update)
