"""The preflight: what the platform would refuse halfway through a deploy, found before anything is queued.

Pure: the live guild and the plan in, one problem per refusal out, each naming the configuration path it
comes from. The platform refuses a bot that grants a permission it lacks, that edits a role at or above its
own highest role, that passes its caps, that creates a channel type the guild's features do not allow, that
changes settings without MANAGE_GUILD, or that sets what needs a feature the guild lacks (ROLE_ICONS, COMMUNITY).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from svcconf.config import (
    CHANNEL_TYPES,
    MAX_CHANNELS,
    MAX_CHANNELS_PER_CATEGORY,
    MAX_OVERWRITES,
    MAX_ROLES,
    PERMISSION_BITS,
    from_bitfield,
)
from svcconf.config.vocabulary import COMMUNITY, ROLE_ICONS
from svcconf.deploy_engine.live import ADMINISTRATOR, LiveGuild
from svcconf.deploy_engine.preflight_community import community_problems
from svcconf.deploy_engine.steps import (
    ChannelStep,
    DeleteStep,
    DeploymentPlan,
    GuildStep,
    ReorderChannels,
    ReorderRoles,
    RoleStep,
    Step,
)
from svcconf.errors import FieldError

MANAGE_ROLES = 1 << PERMISSION_BITS["MANAGE_ROLES"]
MANAGE_CHANNELS = 1 << PERMISSION_BITS["MANAGE_CHANNELS"]
MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]
VOICE = CHANNEL_TYPES["voice"]
MIN_GUILD_NAME_LENGTH = 2
# Channel types (the platform's numbers) that need a guild feature.
FEATURE_OF_TYPE = {5: ("NEWS", "announcement"), 13: ("COMMUNITY", "stage")}


def _problem(field: str, message: str) -> FieldError:
    return FieldError(field=field, message=message)


def _missing(live: LiveGuild, bits: int) -> list[str]:
    return from_bitfield(bits & ~live.bot_permissions)


def _role_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    roles = {role.id: role for role in live.roles}
    for step in plan.steps:
        if not isinstance(step, RoleStep):
            continue
        if step.payload.get("unicode_emoji") and ROLE_ICONS not in live.features:
            yield _problem(f"{step.field}.emoji", f"role emoji need the server feature {ROLE_ICONS}")
        everyone = step.role_id == live.id  # any bot with MANAGE_ROLES may edit @everyone
        if step.role_id is not None and not everyone and not live.bot_can_edit(roles[step.role_id]):
            yield _problem(
                step.field,
                f"role '{step.name}' is at or above the bot's highest role ('{live.bot_top_role_name}') or managed by"
                " an integration, so the bot cannot change it: move the bot's role above it, or leave it out",
            )
            continue
        new = int(step.payload.get("permissions", 0))
        old = int(step.previous.get("permissions", 0))
        missing = _missing(live, new & ~old)  # a role may keep permissions the bot lacks; it may not gain them
        if missing:
            field = step.field if everyone else f"{step.field}.permissions"
            yield _problem(field, f"grants {', '.join(missing)}, which the bot does not hold")


def _overwrite_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    reported: set[str] = set()
    for step in plan.steps:
        if not isinstance(step, ChannelStep):
            continue
        for spec in step.overwrites:
            if spec.field in reported:
                continue  # a category's overwrite reaches each of its channels: one problem is enough
            missing = _missing(live, spec.allow | spec.deny)
            if (spec.allow | spec.deny) & MANAGE_ROLES and not live.bot_permissions & ADMINISTRATOR:
                reported.add(spec.field)
                yield _problem(
                    spec.field, "sets MANAGE_ROLES, which only a bot with ADMINISTRATOR may put in an overwrite"
                )
            elif missing:
                reported.add(spec.field)
                yield _problem(spec.field, f"sets {', '.join(missing)}, which the bot does not hold")
        if step.op == "create_channel" and len(step.overwrites) > MAX_OVERWRITES:
            yield _problem(
                f"{step.field}.overwrites",
                f"{len(step.overwrites)} overwrites with its category's; the platform takes at most {MAX_OVERWRITES}",
            )


def _type_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    for step in plan.steps:
        if isinstance(step, ChannelStep) and step.op == "create_channel":
            feature, name = FEATURE_OF_TYPE.get(step.payload.get("type", -1), (None, ""))
            if feature and feature not in live.features:
                yield _problem(f"{step.field}.type", f"{name} channels need the server feature {feature}")


def _settings_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    for step in plan.steps:
        if not isinstance(step, GuildStep):
            continue
        if not live.bot_permissions & MANAGE_GUILD:
            yield _problem(step.field, "the bot needs MANAGE_GUILD in this server to change its name and settings")
        if "name" in step.payload and len(step.payload["name"]) < MIN_GUILD_NAME_LENGTH:
            yield _problem("name", f"the platform's server names have {MIN_GUILD_NAME_LENGTH} to 100 characters")
        if step.payload.get("description") and COMMUNITY not in live.features:
            yield _problem(f"{step.field}.description", f"a server description needs the server feature {COMMUNITY}")
        afk = live.channel(plan.ids.get(step.channels.get("afk_channel_id", "")))
        if afk is not None and afk.type != VOICE:
            yield _problem(f"{step.field}.afk_channel", f"names channel '{afk.name}', which is not a voice channel")


def _cap_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    """The caps as the deploy leaves the server: what it creates counts, what it deletes (first, when the caps need
    the room: the planner orders it so) does not."""
    creates = [step for step in plan.steps if step.op in ("create_role", "create_channel")]
    deleted = Counter(step.kind == "role" for step in plan.steps if isinstance(step, DeleteStep))
    new_roles = sum(1 for step in creates if step.op == "create_role")
    if len(live.roles) + new_roles - deleted[True] > MAX_ROLES:
        yield _problem(
            "roles",
            f"the server has {len(live.roles)} roles and the deploy would create {new_roles}"
            f" (and delete {deleted[True]}): at most {MAX_ROLES}",
        )
    new_channels = [step for step in creates if isinstance(step, ChannelStep)]
    if len(live.channels) + len(new_channels) - deleted[False] > MAX_CHANNELS:
        yield _problem(
            "channels",
            f"the server has {len(live.channels)} channels and categories and the deploy would create"
            f" {len(new_channels)} (and delete {deleted[False]}): at most {MAX_CHANNELS}",
        )
    yield from _category_problems(live, plan)


def _category_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    """50 channels per category, counting what stays in it, what the deploy creates there and what it moves in."""
    leaving = {step.object_id for step in plan.steps if isinstance(step, DeleteStep)}
    arriving: Counter[str] = Counter()
    fields: dict[str, str] = {}
    for step in plan.steps:
        if not isinstance(step, ChannelStep) or step.kind != "channel":
            continue
        moving = step.op == "update_channel" and (step.parent is not None or "parent_id" in step.payload)
        if moving and step.channel_id:
            leaving.add(step.channel_id)
        if step.parent is not None and (step.op == "create_channel" or moving):
            arriving[step.parent] += 1
            fields.setdefault(step.parent, step.field.rsplit(".channels", 1)[0])
    for category_key, count in arriving.items():
        existing_id = plan.ids.get(category_key)
        staying = [c for c in live.children_of(existing_id) if c.id not in leaving] if existing_id else []
        if len(staying) + count > MAX_CHANNELS_PER_CATEGORY:
            yield _problem(
                f"{fields[category_key]}.channels",
                f"the category holds {len(staying)} channels and the deploy would add {count}:"
                f" at most {MAX_CHANNELS_PER_CATEGORY}",
            )


def _sets_overwrites(step: Step) -> bool:
    return isinstance(step, ChannelStep) and (bool(step.overwrites) or step.replaces_overwrites)


def _capability_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    needs_roles = [
        s
        for s in plan.steps
        if isinstance(s, RoleStep | ReorderRoles)
        or _sets_overwrites(s)
        or (isinstance(s, DeleteStep) and s.kind == "role")
    ]
    needs_channels = [
        s
        for s in plan.steps
        if isinstance(s, ChannelStep | ReorderChannels) or (isinstance(s, DeleteStep) and s.kind != "role")
    ]
    if needs_roles and not live.bot_permissions & MANAGE_ROLES:
        yield _problem(needs_roles[0].field, "the bot needs MANAGE_ROLES in this server to change roles and overwrites")
    if needs_channels and not live.bot_permissions & MANAGE_CHANNELS:
        yield _problem(needs_channels[0].field, "the bot needs MANAGE_CHANNELS in this server to change channels")


def preflight_problems(live: LiveGuild, plan: DeploymentPlan) -> list[FieldError]:
    """Every reason the platform would refuse part of this plan, one per configuration path."""
    capabilities = list(_capability_problems(live, plan))
    if capabilities:
        return capabilities  # without them every step fails: the details below would only repeat it
    return [
        *_cap_problems(live, plan),
        *_role_problems(live, plan),
        *_overwrite_problems(live, plan),
        *_type_problems(live, plan),
        *_settings_problems(live, plan),
        *community_problems(live, plan),  # v4: AutoMod, onboarding, the welcome screen
    ]
