"""The lint's v4 rules: an AutoMod alert channel no staff role can view, a rule exempting @everyone, onboarding that
hands out a role with a dangerous permission; a configuration without them says nothing of the sort."""

from __future__ import annotations

from typing import Any

from svcconf.config import LINT_RULES, ServerConfig, lint_config

V4_RULES = ["automod-alert-hidden", "automod-exempts-everyone", "onboarding-dangerous-role"]


def config(**parts: Any) -> ServerConfig:
    body = {
        "name": "Arcade",
        "roles": [
            {"name": "Mods", "permissions": ["MANAGE_MESSAGES"]},
            {"name": "EU"},
            {"name": "Boss", "permissions": ["BAN_MEMBERS"]},
        ],
        "channels": [
            {"name": "general"},
            {"name": "mod-log", "overwrites": [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}]},
            {
                "name": "staff",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                ],
            },
        ],
        **parts,
    }
    return ServerConfig.model_validate(body)


def v4_warnings(config: ServerConfig) -> list[tuple[str, str]]:
    return [(w.field, w.rule) for w in lint_config(config) if w.rule in V4_RULES]


def alert(channel: str, **rule: Any) -> dict[str, Any]:
    return {
        "name": "Links",
        "trigger": "keyword",
        "keywords": ["x"],
        "actions": [{"type": "alert", "channel": channel}],
        **rule,
    }


def test_the_v4_rules_are_registered_with_their_summaries() -> None:
    summaries = {rule.id: rule.summary for rule in LINT_RULES}
    assert summaries["automod-alert-hidden"] == "An AutoMod alert channel no staff role can view."
    assert summaries["automod-exempts-everyone"] == "An AutoMod rule exempts @everyone."
    assert summaries["onboarding-dangerous-role"] == "Onboarding hands out a role with one of those permissions."


def test_an_alert_channel_staff_cannot_view_is_named_and_one_they_can_is_not() -> None:
    assert v4_warnings(config(automod=[alert("mod-log")])) == [
        ("automod[0].actions[0].channel", "automod-alert-hidden")
    ]
    assert v4_warnings(config(automod=[alert("staff")])) == []
    assert v4_warnings(config(automod=[alert("general")])) == []


def test_a_rule_exempting_everyone_is_named() -> None:
    found = lint_config(config(automod=[alert("staff", exempt_roles=["Mods", "@everyone"])]))
    assert [(w.field, w.rule, w.message) for w in found if w.rule in V4_RULES] == [
        (
            "automod[0].exempt_roles[1]",
            "automod-exempts-everyone",
            "AutoMod rule 'Links' exempts @everyone, so it applies to no one: exempt staff roles instead.",
        )
    ]


def test_onboarding_handing_out_a_dangerous_role_is_named() -> None:
    options = [{"title": "EU", "roles": ["EU"]}, {"title": "Boss", "roles": ["EU", "Boss"]}]
    onboarding = {"prompts": [{"title": "Who?", "options": options}]}
    found = [w for w in lint_config(config(onboarding=onboarding)) if w.rule in V4_RULES]
    assert [(w.field, w.rule) for w in found] == [
        ("onboarding.prompts[0].options[1].roles[1]", "onboarding-dangerous-role")
    ]
    assert "grants BAN_MEMBERS" in found[0].message
