"""The people's edits of a server that a deploy must converge in place, shared by the integration and end-to-end
tests: a starting configuration, and the edits of its export (renames, a move, reversed orders, removals, a new
server name)."""

from __future__ import annotations

import copy
from typing import Any

START: dict[str, Any] = {
    "name": "Alice's Build Lab",
    "roles": [
        {"name": "Mods", "color": 3447003, "hoist": True, "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]},
        {"name": "Helpers", "permissions": ["MANAGE_MESSAGES"]},
        {"name": "Members", "permissions": ["SEND_MESSAGES"]},
    ],
    "categories": [
        {
            "name": "Community",
            "channels": [
                {"name": "general", "topic": "Say hello"},
                {"name": "memes", "topic": "Funny only"},
                {"name": "Lounge", "type": "voice"},
                {"name": "Gaming", "type": "voice"},
            ],
        },
        {
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": "mod-log"}, {"name": "announcements", "topic": "For the team"}],
        },
        {"name": "Archive", "channels": [{"name": "old-news"}]},
    ],
    "channels": [{"name": "rules"}, {"name": "faq"}],
}


def category(config: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in config["categories"] if c["name"] == name)


def edited(config: dict[str, Any]) -> dict[str, Any]:
    """Rename a channel and a role, move a channel, reverse the orders, remove a channel and a role, rename the
    server."""
    config = copy.deepcopy(config)
    config["name"] = "Alice's Lab, renamed"
    community, staff = category(config, "Community"), category(config, "Staff")
    community["channels"][0]["name"] = "lobby"  # general
    config["roles"][0]["name"] = "Moderators"  # Mods
    community["channels"].insert(1, staff["channels"].pop())  # announcements moves from Staff to Community
    community["channels"] = [c for c in community["channels"] if c["name"] != "memes"]
    config["roles"] = [role for role in config["roles"] if role["name"] != "Helpers"]
    for overwrite in staff["overwrites"]:
        overwrite["role"] = "Moderators" if overwrite["role"] == "Mods" else overwrite["role"]
    config["roles"].reverse()
    config["categories"].reverse()
    config["channels"].reverse()
    text = [c for c in community["channels"] if c["type"] != "voice"]
    voice = [c for c in community["channels"] if c["type"] == "voice"]
    community["channels"] = [*reversed(text), *reversed(voice)]
    return config
