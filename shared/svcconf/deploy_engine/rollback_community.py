"""Undoing a deployment's v4 writes from its snapshot: the AutoMod rules it created are deleted, those it updated
or deleted are put back as the snapshot holds them, onboarding and the welcome screen are put back whole. Planned
after the roles and channels are restored (what they name exists again) and before what the deployment created is
deleted."""

from __future__ import annotations

from typing import Any

from svcconf.chat.community import AutomodRule, GuildOnboarding, WelcomeScreen
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import CommunityStep, PlanItem, Step

RULE_FIELDS = ("name", "event_type", "trigger_metadata", "actions", "enabled", "exempt_roles", "exempt_channels")


def rule_write(rule: AutomodRule) -> dict[str, Any]:
    """A rule as the platform's create body."""
    body = rule.model_dump(include={*RULE_FIELDS})
    return {**body, "trigger_type": rule.trigger_type}


def onboarding_write(onboarding: GuildOnboarding) -> dict[str, Any]:
    """Onboarding as the PUT body (an option's emoji goes as emoji_id/emoji_name/emoji_animated)."""
    prompts = []
    for prompt in onboarding.prompts:
        options = []
        for option in prompt.options:
            entry = option.model_dump(exclude={"emoji"})
            if option.emoji is not None:
                entry |= {"emoji_id": option.emoji.id, "emoji_name": option.emoji.name}
                entry["emoji_animated"] = option.emoji.animated
            options.append(entry)
        prompts.append({**prompt.model_dump(exclude={"options"}), "options": options})
    return {**onboarding.model_dump(exclude={"guild_id", "prompts"}), "prompts": prompts}


def plan_community_rollback(
    live: LiveGuild,
    before: dict[str, Any],
    created: dict[str, str],
    updated: dict[str, str],
    deleted: dict[str, str],
    items: list[PlanItem],
    steps: list[Step],
) -> None:
    """`before`: the snapshot's `automod_rules`, `onboarding`, `welcome_screen` (None: not held: nothing put back)."""
    live_rules = {rule.id: rule for rule in live.automod_rules or []}
    before_rules = {rule.id: rule for rule in before.get("automod_rules") or []}
    for key, rule_id in created.items():
        if key.startswith("automod:") and rule_id in live_rules:
            name = live_rules[rule_id].name
            items.append(PlanItem(kind="automod_rule", name=name, action="delete", id=rule_id, field="", key=key))
            steps.append(
                CommunityStep(op="delete_automod_rule", kind="automod_rule", key=key, name=name, object_id=rule_id)
            )
    for key, rule_id in updated.items():
        old = before_rules.get(rule_id)
        if key.startswith("automod:") and old is not None and rule_id in live_rules:
            payload = {k: v for k, v in rule_write(old).items() if k != "trigger_type"}
            items.append(PlanItem(kind="automod_rule", name=old.name, action="update", id=rule_id, field="", key=key))
            steps.append(
                CommunityStep(
                    op="update_automod_rule",
                    kind="automod_rule",
                    key=key,
                    name=old.name,
                    object_id=rule_id,
                    payload=payload,
                )
            )
    for key, rule_id in deleted.items():
        old = before_rules.get(rule_id)
        if key.startswith("automod:") and old is not None and rule_id not in live_rules:
            items.append(PlanItem(kind="automod_rule", name=old.name, action="create", field="", key=key))
            steps.append(
                CommunityStep(
                    op="create_automod_rule", kind="automod_rule", key=key, name=old.name, payload=rule_write(old)
                )
            )
    onboarding: GuildOnboarding | None = before.get("onboarding")
    if "onboarding" in updated and onboarding is not None:
        items.append(PlanItem(kind="onboarding", name="onboarding", action="update", field="", key="onboarding"))
        steps.append(
            CommunityStep(
                op="put_onboarding",
                kind="onboarding",
                key="onboarding",
                name="onboarding",
                payload=onboarding_write(onboarding),
            )
        )
    screen: WelcomeScreen | None = before.get("welcome_screen")
    if "welcome_screen" in updated and screen is not None:
        was_enabled = "WELCOME_SCREEN_ENABLED" in before.get("features", [])
        items.append(
            PlanItem(kind="welcome_screen", name="welcome screen", action="update", field="", key="welcome_screen")
        )
        steps.append(
            CommunityStep(
                op="modify_welcome_screen",
                kind="welcome_screen",
                key="welcome_screen",
                name="welcome screen",
                payload={**screen.model_dump(), "enabled": was_enabled},
            )
        )
