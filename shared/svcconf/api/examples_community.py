"""openapi.json's examples of configuration v4 (onboarding, AutoMod, the welcome screen, role colours): deployToChat's
deploy of a Community server and its dry run (svcAiChat's first build of one: examples_ai_community.py).

The dry run's answer is the handler's own, captured from a run against moto and the chat-platform sandbox (Alice's
Build Lab: COMMUNITY without ENHANCED_ROLE_COLORS, hence the warning), with null fields left out as in examples.py.
"""

from __future__ import annotations

from typing import Any

from svcconf.api.examples import GUILD_ID, _counts

COMMUNITY_CONFIG: dict[str, Any] = {
    "name": "Night Owls",
    "roles": [
        {
            "name": "Moderator",
            "colors": {"primary": "#3498DB", "secondary": "#9B59B6"},
            "hoist": True,
            "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES", "MODERATE_MEMBERS"],
        },
        {"name": "EU"},
        {"name": "NA"},
    ],
    "categories": [
        {
            "name": "Community",
            "channels": [
                {"name": "general"},
                {"name": "lfg"},
                {"name": "clips"},
                {"name": "memes"},
                {"name": "off-topic"},
                {"name": "events"},
                {"name": "feedback"},
            ],
        },
        {
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Moderator", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": "mod-log"}],
        },
    ],
    "automod": [
        {
            "name": "Invite links",
            "trigger": "keyword",
            "keywords": ["discord.gg/*", "*discord.com/invite*"],
            "actions": [
                {"type": "block", "message": "Invites are not allowed here"},
                {"type": "alert", "channel": "mod-log"},
            ],
            "exempt_roles": ["Moderator"],
        },
        {"name": "Spam", "trigger": "spam", "actions": [{"type": "block"}]},
        {
            "name": "Mention raids",
            "trigger": "mention_spam",
            "mention_limit": 10,
            "mention_raid_protection": True,
            "actions": [
                {"type": "block"},
                {"type": "timeout", "seconds": 600},
                {"type": "alert", "channel": "mod-log"},
            ],
        },
    ],
    "onboarding": {
        "enabled": True,
        "default_channels": ["general", "lfg", "clips", "memes", "off-topic", "events", "feedback"],
        "prompts": [
            {
                "title": "Where do you play?",
                "single_select": True,
                "options": [
                    {"title": "Europe", "emoji": "🇪🇺", "roles": ["EU"]},
                    {"title": "Americas", "emoji": "🌎", "roles": ["NA"], "channels": ["lfg"]},
                ],
            }
        ],
    },
    "welcome_screen": {
        "description": "Night Owls: late-night gaming",
        "channels": [
            {"channel": "general", "description": "Say hello", "emoji": "👋"},
            {"channel": "lfg", "description": "Find a squad", "emoji": "🎮"},
        ],
    },
}

_DEPLOY: dict[str, Any] = {
    "action": "deploy",
    "guild_id": GUILD_ID,
    "project_id": "night-owls",
    "project_name": "Night Owls",
    "config": COMMUNITY_CONFIG,
}
COMMUNITY_DEPLOY_REQUESTS: dict[str, Any] = {
    "deployCommunity": _DEPLOY,
    "dryRunCommunity": {**_DEPLOY, "dry_run": True},
}


def _create(kind: str, name: str, field: str) -> dict[str, Any]:
    return {"kind": kind, "name": name, "action": "create", "changes": [], "field": field}


COMMUNITY_PLAN: list[dict[str, Any]] = [
    _create("role", "Moderator", "roles[0]"),
    _create("role", "EU", "roles[1]"),
    _create("role", "NA", "roles[2]"),
    _create("category", "Community", "categories[0]"),
    _create("category", "Staff", "categories[1]"),
    _create("overwrite", "Staff → @everyone", "categories[1].overwrites[0]"),
    _create("overwrite", "Staff → Moderator", "categories[1].overwrites[1]"),
    _create("channel", "Community / general", "categories[0].channels[0]"),
    _create("channel", "Community / lfg", "categories[0].channels[1]"),
    _create("channel", "Community / clips", "categories[0].channels[2]"),
    _create("channel", "Community / memes", "categories[0].channels[3]"),
    _create("channel", "Community / off-topic", "categories[0].channels[4]"),
    _create("channel", "Community / events", "categories[0].channels[5]"),
    _create("channel", "Community / feedback", "categories[0].channels[6]"),
    _create("channel", "Staff / mod-log", "categories[1].channels[0]"),
    _create("overwrite", "Staff / mod-log → @everyone", "categories[1].overwrites[0]"),
    _create("overwrite", "Staff / mod-log → Moderator", "categories[1].overwrites[1]"),
    {
        "kind": "settings",
        "name": "server settings",
        "action": "update",
        "changes": [{"field": "name", "old": "Alice's Build Lab", "new": "Night Owls"}],
        "field": "settings",
    },
    _create("automod_rule", "Invite links", "automod[0]"),
    _create("automod_rule", "Spam", "automod[1]"),
    _create("automod_rule", "Mention raids", "automod[2]"),
    {
        "kind": "onboarding",
        "name": "onboarding",
        "action": "update",
        "changes": [
            {"field": "enabled", "old": False, "new": True},
            {
                "field": "default_channels",
                "old": [],
                "new": ["general", "lfg", "clips", "memes", "off-topic", "events", "feedback"],
            },
            {
                "field": "prompts",
                "old": [],
                "new": [
                    {
                        "title": "Where do you play?",
                        "type": "multiple_choice",
                        "single_select": True,
                        "required": False,
                        "in_onboarding": True,
                        "options": [
                            {"title": "Europe", "emoji": "🇪🇺", "roles": ["EU"], "channels": []},
                            {"title": "Americas", "emoji": "🌎", "roles": ["NA"], "channels": ["lfg"]},
                        ],
                    }
                ],
            },
        ],
        "field": "onboarding",
    },
    {
        "kind": "welcome_screen",
        "name": "welcome screen",
        "action": "update",
        "changes": [
            {"field": "enabled", "old": False, "new": True},
            {"field": "description", "old": None, "new": "Night Owls: late-night gaming"},
            {
                "field": "channels",
                "old": [],
                "new": [
                    {"channel": "general", "description": "Say hello", "emoji": "👋"},
                    {"channel": "lfg", "description": "Find a squad", "emoji": "🎮"},
                ],
            },
        ],
        "field": "welcome_screen",
    },
]
COMMUNITY_DEPLOY_ANSWERS: dict[str, Any] = {
    "dryRunCommunity": {
        "ok": True,
        "status": "planned",
        "steps": {
            "roles": _counts(3),
            "categories": _counts(2),
            "channels": _counts(8),
            "overwrites": _counts(4),
            "settings": _counts(1),
            "automod": _counts(3),
            "onboarding": _counts(1),
            "welcome_screen": _counts(1),
            "errors": [],
        },
        "plan": COMMUNITY_PLAN,
        "plan_id": "plan_6d51508b705cebfd8a6c117bd2439b5b",
        "warnings": [
            {
                "field": "roles[0].colors",
                "rule": "gradient-unavailable",
                "message": "role 'Moderator': this server lacks the feature ENHANCED_ROLE_COLORS, so it gets its "
                "primary colour only",
            }
        ],
    }
}
