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


# The platform's caps on one guild: 250 roles (@everyone and the bot's own among them) and 500 channels (categories
# among them), at most 50 channels in a category.
CAPS_ROLES, CAPS_CATEGORIES, CAPS_CHANNELS = 248, 10, 490


def caps_community() -> dict[str, Any]:
    """`large_community` at the caps, four channels in five with an overwrite of their own besides the category's,
    naming a role spread over the whole list (so some channels wait for a role made late in the deploy)."""
    config = large_community(CAPS_ROLES, CAPS_CATEGORIES, CAPS_CHANNELS)
    names = [role["name"] for role in config["roles"]][CAPS_CATEGORIES:]  # not a category's owner: one per role
    ordinal = 0
    for category in config["categories"]:
        for index, channel in enumerate(category["channels"]):
            if index % 5 != 4:
                named = names[(ordinal * 97) % len(names)]
                channel["overwrites"] = [*channel.get("overwrites", []), {"role": named, "allow": ["VIEW_CHANNEL"]}]
                ordinal += 1
    return config


def forum_library(body_bytes: int = 1_000_000, seed: int = 7) -> dict[str, Any]:
    """Forums with long topics, as many as a request of about `body_bytes` holds (at most 250 in 5 categories):
    each topic varied prose (seeded words of random syllables) that compresses about as badly as a real one."""
    import json
    import random

    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zen", "dor", "pha", "qui", "bel", "ost", "ur"]
    words = ["".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(4000)]

    def topic(length: int) -> str:
        text = ""
        while len(text) < length:
            text += " ".join(rng.choices(words, k=12)).capitalize() + ". "
        return text[:length].rstrip()

    config: dict[str, Any] = {"name": "Forum Library", "roles": [], "categories": []}
    for c in range(5):
        forums = []
        for n in range(50):
            tags = [{"name": f"tag {t + 1}"} for t in range(5)]
            forums.append({"name": f"shelf-{c + 1}-{n + 1}", "type": "forum", "topic": "", "tags": tags})
        config["categories"].append({"name": f"Wing {c + 1}", "channels": forums})
    skeleton = len(json.dumps({"action": "deploy", "config": config, "project_id": "p", "project_name": "p"}))
    per_topic = min(4096, (body_bytes - skeleton) // 250)
    for category in config["categories"]:
        for forum in category["channels"]:
            forum["topic"] = topic(per_topic)
    return config
