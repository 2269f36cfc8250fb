"""What the platform would refuse of a plan's v4 steps, said before any write (the preflight's 409s):
- the bot's own permissions: MANAGE_GUILD for AutoMod, onboarding and the welcome screen, MANAGE_ROLES for
  onboarding, MODERATE_MEMBERS for a timeout action; a role an onboarding option hands out strictly below the bot's
  highest role (the platform lets a bot give only roles below its own);
- the welcome screen of a server without COMMUNITY;
- onboarding enabled with fewer default channels than the platform requires (7, of which 5 let @everyone send
  messages; in advanced mode the prompts' channels count too), judged with the server's own overwrites (and, for a
  channel the deploy creates, the overwrites it is created with);
- more AutoMod rules of a trigger than the platform allows, with the rules the deploy keeps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from svcconf.config import PERMISSION_BITS
from svcconf.config.community import (
    MAX_RULES_BY_TRIGGER,
    ONBOARDING_MIN_DEFAULT_CHANNELS,
    ONBOARDING_MIN_POSTABLE_CHANNELS,
    TRIGGER_TYPES,
)
from svcconf.config.vocabulary import COMMUNITY
from svcconf.deploy_engine.community import REF
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import EVERYONE_KEY, ChannelStep, CommunityStep, DeploymentPlan
from svcconf.errors import FieldError

MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]
MANAGE_ROLES = 1 << PERMISSION_BITS["MANAGE_ROLES"]
MODERATE_MEMBERS = 1 << PERMISSION_BITS["MODERATE_MEMBERS"]
VIEW_CHANNEL = 1 << PERMISSION_BITS["VIEW_CHANNEL"]
SEND_MESSAGES = 1 << PERMISSION_BITS["SEND_MESSAGES"]
ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
POSTING = VIEW_CHANNEL | SEND_MESSAGES
TEXT_LIKE = {0, 5, 15, 16}
TIMEOUT = 3
_TRIGGERS = {value: name for name, value in TRIGGER_TYPES.items()}


def community_problems(live: LiveGuild, plan: DeploymentPlan) -> Iterator[FieldError]:
    steps = [step for step in plan.steps if isinstance(step, CommunityStep)]
    if not steps:
        return
    yield from _bot_permissions(live, steps)
    for step in steps:
        if step.op == "modify_welcome_screen" and COMMUNITY not in live.features:
            yield FieldError(
                field=step.field,
                message="this server is not a Community server (feature COMMUNITY): the platform has no welcome"
                " screen for it",
            )
        if step.op == "put_onboarding" and step.payload.get("enabled"):
            yield from _onboarding_minimum(live, plan, step)
    yield from _rule_counts(live, steps)


def _bot_permissions(live: LiveGuild, steps: list[CommunityStep]) -> Iterator[FieldError]:
    held = live.bot_permissions
    if not held & MANAGE_GUILD:
        yield FieldError(
            field=steps[0].field or steps[0].kind,
            message="the bot needs MANAGE_GUILD in this server to change AutoMod, onboarding and the welcome screen",
        )
    for step in steps:
        if step.op == "put_onboarding" and not held & MANAGE_ROLES:
            yield FieldError(field=step.field, message="the bot needs MANAGE_ROLES in this server to change onboarding")
        if step.op == "put_onboarding":
            yield from _handed_out_above_the_bot(live, step)
        timeouts = [a for a in step.payload.get("actions", []) if a.get("type") == TIMEOUT]
        if timeouts and not held & MODERATE_MEMBERS:
            yield FieldError(
                field=f"{step.field}.actions",
                message="the bot needs MODERATE_MEMBERS in this server for a timeout action",
            )


def _handed_out_above_the_bot(live: LiveGuild, step: CommunityStep) -> Iterator[FieldError]:
    roles = {role.id: role for role in live.roles}
    handed = {r for p in step.payload.get("prompts", []) for o in p["options"] for r in o["role_ids"]}
    for role_id in sorted(handed):
        role = roles.get(role_id)  # a role the deploy creates (REF) is made below the bot
        if role is not None and role.position >= live.bot_top_position:
            yield FieldError(
                field=step.field,
                message=f"role '{role.name}' is not below the bot's highest role ('{live.bot_top_role_name}'): an "
                "onboarding option cannot hand it out",
            )


def _onboarding_minimum(live: LiveGuild, plan: DeploymentPlan, step: CommunityStep) -> Iterator[FieldError]:
    counted = list(step.payload.get("default_channel_ids", []))
    if step.payload.get("mode") == 1:
        counted += [c for p in step.payload.get("prompts", []) for o in p["options"] for c in o["channel_ids"]]
    created = {s.key: s for s in plan.steps if isinstance(s, ChannelStep) and s.op == "create_channel"}
    everyone = int(live.everyone.permissions)
    channels, postable = 0, 0
    for ref in dict.fromkeys(counted):
        if ref.startswith(REF):
            made = created.get(ref.removeprefix(REF))
            if made is None:
                continue
            channels += 1
            kind = made.payload.get("type", 0)
            allow = deny = 0
            for spec in made.overwrites:
                if spec.target == EVERYONE_KEY:
                    allow, deny = spec.allow, spec.deny
        else:
            channel = live.channel(ref)
            if channel is None:
                continue
            channels += 1
            kind = channel.type
            allow = deny = 0
            for overwrite in channel.permission_overwrites:
                if overwrite.id == live.id:
                    allow, deny = int(overwrite.allow), int(overwrite.deny)
        value = everyone if everyone & ADMINISTRATOR else (everyone & ~deny) | allow
        if kind in TEXT_LIKE and value & POSTING == POSTING:
            postable += 1
    if channels < ONBOARDING_MIN_DEFAULT_CHANNELS or postable < ONBOARDING_MIN_POSTABLE_CHANNELS:
        yield FieldError(
            field=f"{step.field}.default_channels",
            message=f"enabled onboarding needs at least {ONBOARDING_MIN_DEFAULT_CHANNELS} default channels of which"
            f" {ONBOARDING_MIN_POSTABLE_CHANNELS} let @everyone send messages; this server would have {channels},"
            f" {postable} of them open to @everyone",
        )


def _rule_counts(live: LiveGuild, steps: list[CommunityStep]) -> Iterator[FieldError]:
    deleted = {s.object_id for s in steps if s.op == "delete_automod_rule"}
    counts = Counter(rule.trigger_type for rule in live.automod_rules or [] if rule.id not in deleted)
    first: dict[int, str] = {}
    for step in steps:
        if step.op == "create_automod_rule":
            counts[step.payload["trigger_type"]] += 1
            first.setdefault(step.payload["trigger_type"], step.field)
    for trigger, count in counts.items():
        name = _TRIGGERS.get(trigger)
        if name is None or trigger not in first or count <= MAX_RULES_BY_TRIGGER[name]:
            continue
        yield FieldError(
            field=f"{first[trigger]}.trigger",
            message=f"the server would have {count} {name} rules with the ones this deploy keeps: the platform allows"
            f" at most {MAX_RULES_BY_TRIGGER[name]}",
        )
