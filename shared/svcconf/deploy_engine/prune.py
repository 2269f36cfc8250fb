"""Deleting what a configuration does not name (`prune: true`), and what is never deleted.

Pure: the live guild and what the configuration matched in, the delete items and steps out. Never deleted:
@everyone, managed roles (the platform gives and takes them), roles at or above the bot's highest (the platform
refuses), the Community rules and updates channels (the platform refuses: 50074), and channels of a type a
configuration cannot name. Those the deploy would have deleted are kept with a warning. A deploy that runs after
its plan was confirmed deletes only what that plan listed (`confirmed`): an object someone made since is kept; and
one whose fingerprint (`confirmed_fingerprint`: name, category, attributes and overwrites, not its position) is no
longer the one confirmed, because a person renamed or repurposed it meanwhile (a deploy waiting for the platform's
quota resumes up to two days later), is kept too and named (`Deletions.kept`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from svcconf.config import CHANNEL_TYPES, MAX_CHANNELS, MAX_CHANNELS_PER_CATEGORY, MAX_ROLES, LintWarning, ServerConfig
from svcconf.deploy_engine.journal import Fingerprint, changed_fields, channel_fields, fingerprint, role_fields
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.matching import Matches, config_channel_key, placed_channels
from svcconf.deploy_engine.steps import DeleteStep, Kind, PlanItem, category_key, role_key

PRUNABLE_TYPES = frozenset(CHANNEL_TYPES.values())  # what a configuration can name: categories and its channel types
MESSAGES_LOST = "its messages are deleted with it and cannot come back"


@dataclass
class Deletions:
    items: list[PlanItem] = field(default_factory=list)
    steps: list[DeleteStep] = field(default_factory=list)  # channels, then categories, then roles
    warnings: list[LintWarning] = field(default_factory=list)
    kept: list[PlanItem] = field(default_factory=list)  # confirmed, but changed since: kept, its `note` says why

    @property
    def ids(self) -> set[str]:
        return {step.object_id for step in self.steps}


def delete_key(object_id: str) -> str:
    return f"delete:{object_id}"


def _fields(live: LiveGuild, object_id: str, confirmed: Collection[str]) -> dict[str, Any] | None:
    """The fields a confirmed deletion's fingerprint covers (the overwrites of the roles the plan deletes aside:
    they go with those roles, a deploy's own change)."""
    role = next((r for r in live.roles if r.id == object_id), None)
    if role is not None:
        return role_fields(role)
    channel = live.channel(object_id)
    return channel_fields(channel, confirmed) if channel is not None else None


def confirmed_fingerprints(live: LiveGuild, confirmed: Collection[str]) -> dict[str, Fingerprint]:
    """The fingerprint of each object a confirmed plan deletes, as it is when the deploy is asked for."""
    prints = {}
    for object_id in confirmed:
        fields = _fields(live, object_id, confirmed)
        if fields is not None:
            prints[object_id] = fingerprint(fields)
    return prints


def plan_deletions(
    live: LiveGuild,
    matches: Matches,
    confirmed: Collection[str] | None = None,
    confirmed_fingerprint: Mapping[str, Fingerprint] | None = None,
) -> Deletions:
    """Delete items and steps for every object the configuration does not name and the bot may delete; with
    `confirmed`, only those, and (with `confirmed_fingerprint`) only while each is as it was confirmed."""
    deletions = Deletions()

    def delete(kind: Kind, object_id: str, name: str, note: str | None = None) -> None:
        if confirmed is not None and object_id not in confirmed:
            return
        if confirmed is not None and confirmed_fingerprint is not None and object_id in confirmed_fingerprint:
            fields = _fields(live, object_id, confirmed) or {}
            changed = changed_fields(fields, confirmed_fingerprint[object_id])
            if changed:
                why = f"changed since its deletion was confirmed ({', '.join(changed)}): kept"
                deletions.kept.append(
                    PlanItem(
                        kind=kind, name=name, action="keep", id=object_id, field="", key=delete_key(object_id), note=why
                    )
                )
                return
        op = "delete_role" if kind == "role" else "delete_channel"
        key = delete_key(object_id)
        deletions.items.append(
            PlanItem(kind=kind, name=name, action="delete", id=object_id, field="", key=key, note=note)
        )
        deletions.steps.append(DeleteStep(op=op, kind=kind, key=key, name=name, object_id=object_id))

    protected = set(live.community_channel_ids)
    unnamed = [c for c in live.channels if c.id not in matches.claimed and c.type in PRUNABLE_TYPES]
    categories = {c.id: c.name or c.id for c in live.categories}
    for channel in sorted((c for c in unnamed if not c.is_category), key=lambda c: (c.position, int(c.id))):
        label = f"{categories[channel.parent_id]} / {channel.name}" if channel.parent_id in categories else channel.name
        if channel.id in protected:
            message = f"channel '{label}' is kept: the platform keeps a Community server's rules and updates channels"
            deletions.warnings.append(LintWarning(field="channels", rule="kept", message=message))
            continue
        delete("channel", channel.id, label or channel.id, MESSAGES_LOST)
    for category in sorted((c for c in unnamed if c.is_category), key=lambda c: (c.position, int(c.id))):
        delete("category", category.id, category.name or category.id)
    for role in sorted(live.roles, key=lambda r: -r.position):
        if role.id in matches.claimed_roles or role.is_everyone(live.id) or role.managed:
            continue
        if not live.bot_can_edit(role):
            message = f"role '{role.name}' is kept: it is at or above the bot's highest role, which cannot delete it"
            deletions.warnings.append(LintWarning(field="roles", rule="kept", message=message))
            continue
        delete("role", role.id, role.name)
    return deletions


def deletion_warnings(items: list[PlanItem], member_counts: Mapping[str, int] | None) -> list[LintWarning]:
    """What a person must know before confirming: the channels whose messages go, and who loses each role."""
    warnings = []
    channels = [item.name for item in items if item.action == "delete" and item.kind == "channel"]
    if channels:
        noun = "channel" if len(channels) == 1 else "channels"
        message = f"{len(channels)} {noun} and all their messages will be deleted: {', '.join(channels)}"
        warnings.append(LintWarning(field="channels", rule="delete", message=message))
    for item in items:
        if item.action != "delete" or item.kind != "role":
            continue
        held = None if member_counts is None else member_counts.get(item.id or "", 0)
        if held is None:
            holders = "an unknown number of members hold it and lose it"
        elif held == 1:
            holders = "1 member holds it and loses it"
        else:
            holders = f"{held} members hold it and lose it"
        message = f"role '{item.name}' will be deleted: {holders}"
        warnings.append(LintWarning(field="roles", rule="delete", message=message))
    return warnings


def deletions_first(live: LiveGuild, config: ServerConfig, matches: Matches) -> tuple[bool, bool]:
    """(roles, channels): whether that kind's deletions go before the creations, because the platform's cap (250
    roles; 500 channels; 50 in a category) would be passed before them otherwise (with none, moving none is the
    same plan)."""
    new_roles = sum(1 for role in config.roles if role_key(role.name) not in matches.roles)
    roles = len(live.roles) + new_roles > MAX_ROLES
    placed = [
        (category, config_channel_key(category.name if category else None, ch))
        for _, category, ch in placed_channels(config)
    ]
    created = sum(1 for _, key in placed if key not in matches.channels)
    created += sum(1 for c in config.categories if category_key(c.name) not in matches.categories)
    channels = len(live.channels) + created > MAX_CHANNELS
    # Within a category: what it holds now, and what the deploy creates in it or moves into it.
    arriving: Counter[str] = Counter()
    for category, key in placed:
        home = matches.categories.get(category_key(category.name)) if category else None
        found = matches.channels.get(key)
        if home is not None and (found is None or found.parent_id != home.id):
            arriving[home.id] += 1
    if any(len(live.children_of(home_id)) + count > MAX_CHANNELS_PER_CATEGORY for home_id, count in arriving.items()):
        channels = True
    return roles, channels
