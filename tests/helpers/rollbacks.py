"""Driving a deploy and its rollback in tests, and the guild as a person sees it (ids aside), to compare a guild
after a rollback with the one before. (PYTEST_DONT_REWRITE: helpers, no assertions of their own.)"""

from __future__ import annotations

from typing import Any

from tests.helpers.deploy_worker import USER, DeployQueue
from tests.helpers.handlers import bearer

# A small server with every kind of object a rollback restores: roles of several ranks, two categories, a private
# one, channels with topics and overwrites of their own.
BASE: dict[str, Any] = {
    "name": "Build Lab",
    "roles": [
        {"name": "Mods", "color": 0x3498DB, "hoist": True, "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]},
        {"name": "Crew", "permissions": ["SEND_MESSAGES"]},
        {"name": "Guests", "permissions": ["ADD_REACTIONS"]},
    ],
    "categories": [
        {
            "name": "Lobby",
            "channels": [
                {"name": "general", "topic": "Say hello"},
                {"name": "memes", "topic": "Only the good ones"},
            ],
        },
        {
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [
                {
                    "name": "announcements",
                    "topic": "News",
                    "overwrites": [{"role": "Guests", "deny": ["SEND_MESSAGES"]}],
                },
                {"name": "mod-log", "topic": "What the mods did"},
            ],
        },
    ],
}


def call(invoke: Any, body: dict[str, Any]) -> Any:
    return invoke("deployToChat", body, headers=bearer(USER))


def finished(invoke: Any, aws: Any) -> dict[str, Any]:
    DeployQueue(aws).drain()
    return call(invoke, {"action": "info", "project_id": "proj-1"}).body


def by_names(guild: dict[str, Any]) -> dict[str, Any]:
    """The guild as a person sees it, ids aside: the name, each role with its attributes and rank, each channel with
    its category, attributes, position and overwrites (by role name)."""
    roles = guild["roles"].values()
    names = {role["id"]: role["name"] for role in roles}
    channels = guild["channels"].values()
    categories = {channel["id"]: channel["name"] for channel in channels if channel["type"] == 4}
    return {
        "name": guild["name"],
        "roles": sorted(
            (r["name"], r["position"], str(r["permissions"]), r["color"], r["hoist"], r["mentionable"]) for r in roles
        ),
        "channels": sorted(
            (
                c["name"],
                c["type"],
                categories.get(c.get("parent_id") or ""),
                c["position"],
                c.get("topic") or None,
                tuple(sorted((names[o["id"]], str(o["allow"]), str(o["deny"])) for o in c["permission_overwrites"])),
            )
            for c in channels
        ),
    }
