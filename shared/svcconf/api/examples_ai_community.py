"""openapi.json's example of svcAiChat's first build of a gaming community with onboarding and AutoMod: the handler's
answer, captured from a run against the local AI model, with null fields left out and the `changes` of roles and
categories abridged to their names, as in examples.py.

Its request is not a request example of the document: the fuzz gate builds its cases from the document's examples,
and each one grown from this request is a whole community written at a real model's pace (~12 s). The request stays
here for tests/integration/test_examples_v4.py, which replays it so the answer cannot drift.
"""

from __future__ import annotations

from typing import Any

COMMUNITY_AI_CHAT_REQUESTS: dict[str, Any] = {
    "community": {
        "messages": [
            {
                "role": "user",
                "content": "A gaming community with anti-spam and onboarding questions that hand out region roles.",
            }
        ],
        "questionnaire_data": {"purpose": "gaming community", "server_name": "Night Raiders"},
    }
}
COMMUNITY_AI_CHAT_ANSWERS: dict[str, Any] = {
    "community": {
        "reply": 'I drafted "Night Raiders", a gaming server with 7 roles and 4 categories (15 channels, categories '
        "included). (Local model: deterministic answers for trying the service, no AI.)",
        "config": {
            "name": "Night Raiders",
            "description": "A gaming server drafted by the local model",
            "roles": [
                {
                    "name": "Admin",
                    "color": 15158332,
                    "hoist": True,
                    "mentionable": False,
                    "permissions": [
                        "MANAGE_GUILD",
                        "MANAGE_ROLES",
                        "MANAGE_CHANNELS",
                        "VIEW_AUDIT_LOG",
                        "KICK_MEMBERS",
                        "BAN_MEMBERS",
                        "MANAGE_MESSAGES",
                        "MODERATE_MEMBERS",
                        "MANAGE_THREADS",
                    ],
                },
                {
                    "name": "Moderator",
                    "color": 3447003,
                    "hoist": True,
                    "mentionable": True,
                    "permissions": [
                        "KICK_MEMBERS",
                        "BAN_MEMBERS",
                        "MANAGE_MESSAGES",
                        "MODERATE_MEMBERS",
                        "MANAGE_THREADS",
                    ],
                },
                {
                    "name": "Gamer",
                    "color": 3066993,
                    "hoist": False,
                    "mentionable": True,
                    "permissions": [
                        "SEND_MESSAGES",
                        "EMBED_LINKS",
                        "ATTACH_FILES",
                        "ADD_REACTIONS",
                        "CONNECT",
                        "SPEAK",
                    ],
                },
                {
                    "name": "Member",
                    "color": 9807270,
                    "hoist": False,
                    "mentionable": False,
                    "permissions": [
                        "SEND_MESSAGES",
                        "EMBED_LINKS",
                        "ATTACH_FILES",
                        "ADD_REACTIONS",
                        "CONNECT",
                        "SPEAK",
                    ],
                },
                {"name": "Minecraft", "color": 0, "hoist": False, "mentionable": True, "permissions": []},
                {"name": "Valorant", "color": 0, "hoist": False, "mentionable": True, "permissions": []},
                {"name": "Fortnite", "color": 0, "hoist": False, "mentionable": True, "permissions": []},
            ],
            "categories": [
                {
                    "name": "Information",
                    "overwrites": [{"role": "@everyone", "allow": [], "deny": ["SEND_MESSAGES"]}],
                    "channels": [
                        {"name": "rules", "type": "text", "nsfw": False, "overwrites": []},
                        {"name": "announcements", "type": "text", "nsfw": False, "overwrites": []},
                    ],
                },
                {
                    "name": "Community",
                    "overwrites": [],
                    "channels": [
                        {"name": "general", "type": "text", "nsfw": False, "overwrites": []},
                        {"name": "off-topic", "type": "text", "nsfw": False, "overwrites": []},
                        {"name": "Lounge", "type": "voice", "nsfw": False, "overwrites": []},
                    ],
                },
                {
                    "name": "Gaming",
                    "overwrites": [],
                    "channels": [
                        {
                            "name": "looking-for-group",
                            "type": "text",
                            "topic": "Find teammates",
                            "nsfw": False,
                            "overwrites": [],
                        },
                        {
                            "name": "clips",
                            "type": "text",
                            "topic": "Share your best plays",
                            "nsfw": False,
                            "overwrites": [],
                        },
                        {
                            "name": "events",
                            "type": "text",
                            "topic": "Tournaments and game nights",
                            "nsfw": False,
                            "overwrites": [],
                        },
                        {"name": "Squad Voice", "type": "voice", "nsfw": False, "user_limit": 10, "overwrites": []},
                    ],
                },
                {
                    "name": "Staff",
                    "overwrites": [
                        {"role": "@everyone", "allow": [], "deny": ["VIEW_CHANNEL"]},
                        {"role": "Admin", "allow": ["VIEW_CHANNEL"], "deny": []},
                        {"role": "Moderator", "allow": ["VIEW_CHANNEL"], "deny": []},
                    ],
                    "channels": [
                        {"name": "mod-chat", "type": "text", "nsfw": False, "overwrites": []},
                        {"name": "mod-log", "type": "text", "nsfw": False, "overwrites": []},
                    ],
                },
            ],
            "channels": [],
            "onboarding": {
                "enabled": True,
                "mode": "default",
                "default_channels": [
                    "rules",
                    "announcements",
                    "general",
                    "off-topic",
                    "looking-for-group",
                    "clips",
                    "events",
                ],
                "prompts": [
                    {
                        "title": "Which games do you play?",
                        "type": "multiple_choice",
                        "single_select": False,
                        "required": False,
                        "in_onboarding": True,
                        "options": [
                            {"title": "Minecraft", "roles": ["Minecraft"], "channels": ["looking-for-group"]},
                            {"title": "Valorant", "roles": ["Valorant"], "channels": []},
                            {"title": "Fortnite", "roles": ["Fortnite"], "channels": []},
                        ],
                    }
                ],
            },
            "automod": [
                {
                    "name": "Spam",
                    "trigger": "spam",
                    "enabled": True,
                    "actions": [{"type": "block"}],
                    "exempt_roles": [],
                    "exempt_channels": [],
                },
                {
                    "name": "Mention spam",
                    "trigger": "mention_spam",
                    "enabled": True,
                    "mention_limit": 5,
                    "mention_raid_protection": True,
                    "actions": [{"type": "block"}, {"type": "alert", "channel": "mod-log"}],
                    "exempt_roles": ["Admin", "Moderator"],
                    "exempt_channels": [],
                },
                {
                    "name": "Slurs",
                    "trigger": "keyword_preset",
                    "enabled": True,
                    "presets": ["slurs", "sexual_content"],
                    "actions": [{"type": "alert", "channel": "mod-log"}],
                    "exempt_roles": [],
                    "exempt_channels": [],
                },
                {
                    "name": "Invite links",
                    "trigger": "keyword",
                    "enabled": True,
                    "keywords": ["*discord.gg/*", "*discord.com/invite/*"],
                    "actions": [
                        {"type": "block", "message": "Invite links to other servers are not allowed here."},
                        {"type": "alert", "channel": "mod-log"},
                    ],
                    "exempt_roles": ["Admin", "Moderator"],
                    "exempt_channels": [],
                },
            ],
        },
        "quick_replies": [
            "Add a voice channel named Hangout",
            "Add a role named VIP",
            "Remove the channel off-topic",
            "Done",
        ],
        "suggested_templates": [
            {
                "id": "gaming-community",
                "name": "Gaming Community",
                "description": "A general gaming server: game chat, looking-for-group, clips and "
                "voice lobbies, with a moderation team.",
                "tags": ["gaming", "clan", "community", "voice", "lfg"],
            }
        ],
        "is_complete": False,
        "changes": [
            {"op": "add", "path": "roles[0]", "old": None, "new": {"name": "Admin"}},
            {"op": "add", "path": "roles[1]", "old": None, "new": {"name": "Moderator"}},
            {"op": "add", "path": "roles[2]", "old": None, "new": {"name": "Gamer"}},
            {"op": "add", "path": "roles[3]", "old": None, "new": {"name": "Member"}},
            {"op": "add", "path": "roles[4]", "old": None, "new": {"name": "Minecraft"}},
            {"op": "add", "path": "roles[5]", "old": None, "new": {"name": "Valorant"}},
            {"op": "add", "path": "roles[6]", "old": None, "new": {"name": "Fortnite"}},
            {"op": "add", "path": "categories[0]", "old": None, "new": {"name": "Information"}},
            {"op": "add", "path": "categories[1]", "old": None, "new": {"name": "Community"}},
            {"op": "add", "path": "categories[2]", "old": None, "new": {"name": "Gaming"}},
            {"op": "add", "path": "categories[3]", "old": None, "new": {"name": "Staff"}},
            {
                "op": "add",
                "path": "automod[0]",
                "old": None,
                "new": {
                    "name": "Spam",
                    "trigger": "spam",
                    "enabled": True,
                    "actions": [{"type": "block"}],
                    "exempt_roles": [],
                    "exempt_channels": [],
                },
            },
            {
                "op": "add",
                "path": "automod[1]",
                "old": None,
                "new": {
                    "name": "Mention spam",
                    "trigger": "mention_spam",
                    "enabled": True,
                    "mention_limit": 5,
                    "mention_raid_protection": True,
                    "actions": [{"type": "block"}, {"type": "alert", "channel": "mod-log"}],
                    "exempt_roles": ["Admin", "Moderator"],
                    "exempt_channels": [],
                },
            },
            {
                "op": "add",
                "path": "automod[2]",
                "old": None,
                "new": {
                    "name": "Slurs",
                    "trigger": "keyword_preset",
                    "enabled": True,
                    "presets": ["slurs", "sexual_content"],
                    "actions": [{"type": "alert", "channel": "mod-log"}],
                    "exempt_roles": [],
                    "exempt_channels": [],
                },
            },
            {
                "op": "add",
                "path": "automod[3]",
                "old": None,
                "new": {
                    "name": "Invite links",
                    "trigger": "keyword",
                    "enabled": True,
                    "keywords": ["*discord.gg/*", "*discord.com/invite/*"],
                    "actions": [
                        {"type": "block", "message": "Invite links to other servers are not allowed here."},
                        {"type": "alert", "channel": "mod-log"},
                    ],
                    "exempt_roles": ["Admin", "Moderator"],
                    "exempt_channels": [],
                },
            },
            {
                "op": "add",
                "path": "onboarding",
                "old": None,
                "new": {
                    "enabled": True,
                    "mode": "default",
                    "default_channels": [
                        "rules",
                        "announcements",
                        "general",
                        "off-topic",
                        "looking-for-group",
                        "clips",
                        "events",
                    ],
                    "prompts": [
                        {
                            "title": "Which games do you play?",
                            "type": "multiple_choice",
                            "single_select": False,
                            "required": False,
                            "in_onboarding": True,
                            "options": [
                                {"title": "Minecraft", "roles": ["Minecraft"], "channels": ["looking-for-group"]},
                                {"title": "Valorant", "roles": ["Valorant"], "channels": []},
                                {"title": "Fortnite", "roles": ["Fortnite"], "channels": []},
                            ],
                        }
                    ],
                },
            },
        ],
        "warnings": [],
        "attachments_used": [],
        "history_trimmed": 0,
    }
}
