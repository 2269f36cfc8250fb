"""Sample configurations for trying the service locally, the end-to-end tests and the benchmarks."""

from __future__ import annotations

from typing import Any

# The sample project of `make run`: its sample code, the banner's demo code and the seeded deployment carry it.
SAMPLE_PROJECT_ID = "local-sample-project"
SAMPLE_PROJECT_NAME = "Local sample project"
SAMPLE_CONFIGURATION: dict[str, Any] = {
    "name": "Local Sample Server",
    "description": "Minted by make run",
    "roles": [
        {
            "name": "Moderator",
            "color": "#3498DB",
            "hoist": True,
            "mentionable": True,
            "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"],
        }
    ],
    "categories": [
        {
            "name": "Community",
            "overwrites": [],
            "channels": [
                {"name": "welcome", "type": "text", "topic": "Say hello", "overwrites": []},
                {"name": "lounge", "type": "voice", "user_limit": 10, "overwrites": []},
            ],
        }
    ],
    "channels": [],
}

# Permission sets the sample roles cycle through: what community servers give their staff and members.
ROLE_PERMISSIONS = (
    ["KICK_MEMBERS", "MANAGE_MESSAGES", "MUTE_MEMBERS", "MODERATE_MEMBERS"],
    ["SEND_MESSAGES", "ATTACH_FILES", "EMBED_LINKS"],
    ["MANAGE_THREADS", "PIN_MESSAGES"],
    ["CONNECT", "SPEAK", "STREAM"],
    ["VIEW_AUDIT_LOG", "MANAGE_NICKNAMES"],
)


def large_community(roles: int = 40, categories: int = 8, channels: int = 120) -> dict[str, Any]:
    """A community server of `roles` roles and `categories` private categories holding `channels` channels in
    all, each category open to one role, some channels with overwrites of their own."""
    per_category = channels // categories
    role_names = [f"Team {index + 1:02d}" for index in range(roles)]
    config: dict[str, Any] = {
        "name": "Large Community",
        "description": f"{roles} roles, {categories} categories, {channels} channels",
        "roles": [
            {
                "name": name,
                "color": (index * 2654435761) % 0xFFFFFF,
                "hoist": index % 4 == 0,
                "mentionable": index % 3 == 0,
                "permissions": ROLE_PERMISSIONS[index % len(ROLE_PERMISSIONS)],
            }
            for index, name in enumerate(role_names)
        ],
        "categories": [],
    }
    for c in range(categories):
        owner = role_names[c % roles]
        category: dict[str, Any] = {
            "name": f"Area {c + 1}",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": owner, "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [],
        }
        for n in range(per_category):
            if n % 5 == 4:
                channel: dict[str, Any] = {"name": f"Voice {c + 1}-{n + 1}", "type": "voice", "user_limit": 10 + n}
            else:
                channel = {
                    "name": f"area {c + 1} room {n + 1}",
                    "type": "text",
                    "topic": f"Room {n + 1} of area {c + 1}",
                }
            if n % 3 == 0:  # the category's owner, read-only here: its own overwrite keeps VIEW_CHANNEL
                channel["overwrites"] = [{"role": owner, "allow": ["VIEW_CHANNEL"], "deny": ["SEND_MESSAGES"]}]
            category["channels"].append(channel)
        config["categories"].append(category)
    return config
