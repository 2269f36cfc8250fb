"""References to channels the caller cannot view, kept as the server has them (docs/05-deploy-engine.md).

A caller's export leaves out the channels they cannot view, and so the AutoMod exemptions and alerts, onboarding's
default and option channels and the welcome screen's channels that name one. The platform writes these objects whole
(PUT onboarding, PATCH a rule's `exempt_channels`/`actions`, PATCH the welcome screen), so a body built from the
caller's configuration alone would drop what they could not name. Each body here gets the live references to hidden
channels back, at their live places, before it is compared with the live object: a configuration that leaves them
out plans no change for them, and a write keeps them.

Pure; `hidden` is the caller's hidden channel ids (`LiveGuild.hidden_channel_ids`; empty for the bot's own view).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen

ALERT = 2  # the platform's alert action: its metadata names a channel


def _kept_in_place[T](wanted: list[T], live: list[T], hidden_at: list[int]) -> list[T]:
    """`wanted` with the live entries at `hidden_at` put back where they were (clamped to the list's end)."""
    merged = list(wanted)
    for index in hidden_at:
        merged.insert(min(index, len(merged)), live[index])
    return merged


def _hidden_ids(wanted: list[str], live: list[str], hidden: Collection[str]) -> list[str]:
    return [*wanted, *(ref for ref in live if ref in hidden and ref not in wanted)]


def rule_keeping_hidden(body: dict[str, Any], live: AutomodRule, hidden: Collection[str]) -> dict[str, Any]:
    """A rule's body with the live rule's hidden exempt channels and its alerts to hidden channels kept."""
    if not hidden:
        return body
    live_actions: list[dict[str, Any]] = [{"type": a.type, "metadata": dict(a.metadata)} for a in live.actions]
    hidden_at = [
        index
        for index, action in enumerate(live.actions)
        if action.type == ALERT and str(action.metadata.get("channel_id")) in hidden
    ]
    return {
        **body,
        "actions": _kept_in_place(body["actions"], live_actions, hidden_at),
        "exempt_channels": _hidden_ids(body["exempt_channels"], live.exempt_channels, hidden),
    }


def onboarding_keeping_hidden(body: dict[str, Any], live: GuildOnboarding, hidden: Collection[str]) -> dict[str, Any]:
    """Onboarding's PUT body with the hidden default channels and the hidden channels of each option the
    configuration keeps (matched by its prompt's and its own title) kept."""
    if not hidden:
        return body
    live_options = {
        (prompt.title.casefold(), option.title.casefold()): option.channel_ids
        for prompt in live.prompts
        for option in prompt.options
    }
    prompts = []
    for prompt in body["prompts"]:
        options = []
        for option in prompt["options"]:
            found = live_options.get((prompt["title"].casefold(), option["title"].casefold()), [])
            options.append({**option, "channel_ids": _hidden_ids(option["channel_ids"], found, hidden)})
        prompts.append({**prompt, "options": options})
    default_channels = _hidden_ids(body["default_channel_ids"], live.default_channel_ids, hidden)
    return {**body, "prompts": prompts, "default_channel_ids": default_channels}


def welcome_keeping_hidden(body: dict[str, Any], live: WelcomeScreen, hidden: Collection[str]) -> dict[str, Any]:
    """The welcome screen's body with its hidden channels (and their descriptions) kept where they were."""
    if not hidden:
        return body
    live_channels = [channel.model_dump() for channel in live.welcome_channels]
    hidden_at = [index for index, channel in enumerate(live_channels) if channel["channel_id"] in hidden]
    return {**body, "welcome_channels": _kept_in_place(body["welcome_channels"], live_channels, hidden_at)}
