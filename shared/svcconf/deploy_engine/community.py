"""Onboarding, AutoMod rules and the welcome screen (v4) between the configuration's form and the platform's.

To the platform: a configured object's request body, its roles and channels given by `RefOf` (a live id, or
`REF + key` for an object this deploy creates, resolved when the step is applied). From the platform: the live
object in the configuration's form, roles and channels named through the maps an export or a plan holds; a
reference to an object those maps lack (a channel the caller cannot see, a managed role) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from svcconf.chat.community import AutomodRule as LiveRule
from svcconf.chat.community import GuildOnboarding, WelcomeScreen
from svcconf.config import EVERYONE
from svcconf.config.community import (
    ACTION_TYPES,
    ONBOARDING_MODES,
    PRESETS,
    PROMPT_TYPES,
    TRIGGER_EVENTS,
    TRIGGER_TYPES,
    AutomodRule,
    Onboarding,
)
from svcconf.config.community import WelcomeScreen as ConfigWelcomeScreen
from svcconf.deploy_engine.live import LiveGuild

REF = "@ref:"  # a plan's reference to an object the deploy creates: its key follows
RefOf = Callable[[str], str]  # a configured name -> a live id or REF + key

_NAMES = {value: name for name, value in TRIGGER_TYPES.items()}
_ACTIONS = {value: name for name, value in ACTION_TYPES.items()}
_PRESETS = {value: name for name, value in PRESETS.items()}
_PROMPT_TYPES = {value: name for name, value in PROMPT_TYPES.items()}
_MODES = {value: name for name, value in ONBOARDING_MODES.items()}
# trigger_metadata's keys -> the rule's fields
METADATA_KEYS = {
    "keyword_filter": "keywords",
    "regex_patterns": "regex",
    "allow_list": "allow",
    "presets": "presets",
    "mention_total_limit": "mention_limit",
    "mention_raid_protection_enabled": "mention_raid_protection",
}


# -- AutoMod ----------------------------------------------------------------------------------------------------------


def rule_body(rule: AutomodRule, role: RefOf, channel: RefOf) -> dict[str, Any]:
    """A configured rule as the platform's create body (the metadata it states, its actions, its exemptions)."""
    metadata: dict[str, Any] = {}
    for key, field in METADATA_KEYS.items():
        value = getattr(rule, field)
        if value is not None:
            metadata[key] = [PRESETS[p] for p in value] if field == "presets" else value
    actions = []
    for action in rule.actions:
        action_metadata: dict[str, Any] = {}
        if action.channel is not None:
            action_metadata["channel_id"] = channel(action.channel)
        if action.seconds is not None:
            action_metadata["duration_seconds"] = action.seconds
        if action.message is not None:
            action_metadata["custom_message"] = action.message
        actions.append({"type": ACTION_TYPES[action.type], "metadata": action_metadata})
    return {
        "name": rule.name,
        "event_type": TRIGGER_EVENTS[rule.trigger],
        "trigger_type": TRIGGER_TYPES[rule.trigger],
        "trigger_metadata": metadata,
        "actions": actions,
        "enabled": rule.enabled,
        "exempt_roles": [role(name) for name in rule.exempt_roles],
        "exempt_channels": [channel(name) for name in rule.exempt_channels],
    }


def rule_differences(wanted: Mapping[str, Any], live: LiveRule) -> list[str]:
    """The body's keys (metadata keys by themselves) whose value the live rule does not have: what an update sends.
    Only the metadata the configuration states is compared; exemptions as sets."""
    differ = []
    for key in ("name", "event_type", "enabled"):
        if wanted[key] != getattr(live, key):
            differ.append(key)
    for key, value in wanted["trigger_metadata"].items():
        if value != live.trigger_metadata.get(key):
            differ.append(key)
    live_actions = [{"type": a.type, "metadata": dict(a.metadata)} for a in live.actions]
    if wanted["actions"] != live_actions:
        differ.append("actions")
    for key in ("exempt_roles", "exempt_channels"):
        if sorted(wanted[key]) != sorted(getattr(live, key)):
            differ.append(key)
    return differ


def field_of(key: str) -> str:
    """The configuration's field a body key (or metadata key) writes."""
    return METADATA_KEYS.get(key, "trigger" if key == "event_type" else key)


def rule_config(live: LiveRule, role_names: Mapping[str, str], channel_names: Mapping[str, str]) -> dict[str, Any]:
    """A live rule in the configuration's form; exemptions and alerts naming what the maps lack are left out."""
    trigger = _NAMES.get(live.trigger_type)
    item: dict[str, Any] = {"name": live.name, "trigger": trigger, "enabled": live.enabled}
    for key, field in METADATA_KEYS.items():
        value = live.trigger_metadata.get(key)
        if value in (None, [], False) or (key == "mention_total_limit" and trigger != "mention_spam"):
            continue
        item[field] = [_PRESETS[p] for p in value if p in _PRESETS] if field == "presets" else value
    actions = []
    for action in live.actions:
        kind = _ACTIONS.get(action.type)
        if kind is None:
            continue
        entry: dict[str, Any] = {"type": kind}
        if kind == "alert":
            name = channel_names.get(str(action.metadata.get("channel_id")))
            if name is None:
                continue  # an alert channel the caller cannot see (or gone): a deploy keeps it as the server has it
            entry["channel"] = name
        if kind == "timeout":
            entry["seconds"] = action.metadata.get("duration_seconds", 0)
        if kind == "block" and action.metadata.get("custom_message"):
            entry["message"] = action.metadata["custom_message"]
        actions.append(entry)
    item["actions"] = actions
    item["exempt_roles"] = [role_names[r] for r in live.exempt_roles if r in role_names]
    item["exempt_channels"] = [channel_names[c] for c in live.exempt_channels if c in channel_names]
    return item


# -- onboarding -------------------------------------------------------------------------------------------------------


def onboarding_body(
    onboarding: Onboarding, live: GuildOnboarding | None, role: RefOf, channel: RefOf
) -> dict[str, Any]:
    """The PUT body: prompts and options keep the live ids of the ones matched by title; a new prompt gets a
    snowflake the guild does not have (the platform wants one)."""
    live_prompts = {p.title.casefold(): p for p in (live.prompts if live else [])}
    prompts = []
    for index, prompt in enumerate(onboarding.prompts):
        found = live_prompts.get(prompt.title.casefold())
        live_options = {o.title.casefold(): o for o in (found.options if found else [])}
        options = []
        for option in prompt.options:
            same = live_options.get(option.title.casefold())
            entry: dict[str, Any] = {
                "title": option.title,
                "description": option.description,
                "emoji_name": option.emoji,
                "role_ids": [role(name) for name in option.roles],
                "channel_ids": [channel(name) for name in option.channels],
            }
            if same is not None:
                entry["id"] = same.id
            options.append(entry)
        prompts.append(
            {
                "id": found.id if found else str(index + 1),
                "title": prompt.title,
                "options": options,
                "single_select": prompt.single_select,
                "required": prompt.required,
                "in_onboarding": prompt.in_onboarding,
                "type": PROMPT_TYPES[prompt.type],
            }
        )
    return {
        "prompts": prompts,
        "default_channel_ids": [channel(name) for name in onboarding.default_channels],
        "enabled": onboarding.enabled,
        "mode": ONBOARDING_MODES[onboarding.mode],
    }


def onboarding_differences(wanted: Mapping[str, Any], live: GuildOnboarding) -> list[str]:
    differ = [key for key in ("enabled", "mode") if wanted[key] != getattr(live, key)]
    if sorted(wanted["default_channel_ids"]) != sorted(live.default_channel_ids):
        differ.append("default_channel_ids")
    if _prompts_shape(wanted["prompts"]) != _prompts_shape([p.model_dump() for p in live.prompts]):
        differ.append("prompts")
    return differ


def _prompts_shape(prompts: list[dict[str, Any]]) -> list[Any]:
    def option(o: dict[str, Any]) -> tuple[Any, ...]:
        emoji = o.get("emoji_name") if "emoji_name" in o else (o.get("emoji") or {}).get("name")
        return (o["title"], o.get("description") or "", emoji, sorted(o["role_ids"]), sorted(o["channel_ids"]))

    return [
        (
            p["title"],
            p["type"],
            p["single_select"],
            p["required"],
            p["in_onboarding"],
            [option(o) for o in p["options"]],
        )
        for p in prompts
    ]


def onboarding_config(
    live: GuildOnboarding, role_names: Mapping[str, str], channel_names: Mapping[str, str]
) -> dict[str, Any]:
    prompts = []
    for prompt in live.prompts:
        options = []
        for option in prompt.options:
            entry: dict[str, Any] = {"title": option.title}
            if option.description:
                entry["description"] = option.description
            if option.emoji is not None and option.emoji.id is None and option.emoji.name:
                entry["emoji"] = option.emoji.name
            entry["roles"] = [role_names[r] for r in option.role_ids if r in role_names]
            entry["channels"] = [channel_names[c] for c in option.channel_ids if c in channel_names]
            options.append(entry)
        prompts.append(
            {
                "title": prompt.title,
                "type": _PROMPT_TYPES.get(prompt.type, "multiple_choice"),
                "single_select": prompt.single_select,
                "required": prompt.required,
                "in_onboarding": prompt.in_onboarding,
                "options": options,
            }
        )
    return {
        "enabled": live.enabled,
        "mode": _MODES.get(live.mode, "default"),
        "default_channels": [channel_names[c] for c in live.default_channel_ids if c in channel_names],
        "prompts": prompts,
    }


# -- the welcome screen -----------------------------------------------------------------------------------------------


def welcome_body(screen: ConfigWelcomeScreen, channel: RefOf) -> dict[str, Any]:
    return {
        "enabled": screen.enabled,
        "description": screen.description,
        "welcome_channels": [
            {
                "channel_id": channel(entry.channel),
                "description": entry.description,
                "emoji_id": None,
                "emoji_name": entry.emoji,
            }
            for entry in screen.channels
        ],
    }


def welcome_differences(wanted: Mapping[str, Any], live: WelcomeScreen, enabled: bool) -> list[str]:
    differ = ["enabled"] if wanted["enabled"] != enabled else []
    if wanted["description"] != live.description:
        differ.append("description")
    if wanted["welcome_channels"] != [c.model_dump() for c in live.welcome_channels]:
        differ.append("welcome_channels")
    return differ


def welcome_config(live: WelcomeScreen, enabled: bool, channel_names: Mapping[str, str]) -> dict[str, Any]:
    channels = []
    for entry in live.welcome_channels:
        name = channel_names.get(entry.channel_id)
        if name is None:
            continue
        item: dict[str, Any] = {"channel": name, "description": entry.description}
        if entry.emoji_id is None and entry.emoji_name:
            item["emoji"] = entry.emoji_name
        channels.append(item)
    screen: dict[str, Any] = {"enabled": enabled, "channels": channels}
    if live.description:
        screen["description"] = live.description
    return screen


def export_community(
    live: LiveGuild,
    role_names: dict[str, str],
    channel_names: dict[str, tuple[str, str]],
    warn: Callable[[str, str, str], None],
) -> dict[str, Any]:
    """v4: the AutoMod rules, onboarding and welcome screen the bot could read, naming the roles and channels the
    export kept (what it left out, a channel the caller cannot see among them, is left out of them too)."""
    channels = {channel_id: name for channel_id, (_, name) in channel_names.items()}
    roles = {role_id: name for role_id, name in role_names.items() if name != EVERYONE}
    exempt_roles = {**roles, live.everyone.id: EVERYONE}
    data: dict[str, Any] = {}
    if live.automod_rules:
        rules = []
        for rule in live.automod_rules:
            item = rule_config(rule, exempt_roles, channels)
            if item["trigger"] is None or not item["actions"]:
                warn(
                    "automod",
                    "unrepresentable",
                    f"AutoMod rule '{rule.name}' has a trigger or actions a configuration cannot say",
                )
                continue
            rules.append(item)
        data["automod"] = rules
    if live.onboarding is not None and (live.onboarding.enabled or live.onboarding.prompts):
        data["onboarding"] = onboarding_config(live.onboarding, roles, channels)
    if live.welcome_screen is not None and (live.welcome_screen.welcome_channels or live.welcome_screen.description):
        enabled = "WELCOME_SCREEN_ENABLED" in live.features
        data["welcome_screen"] = welcome_config(live.welcome_screen, enabled, channels)
    return data
