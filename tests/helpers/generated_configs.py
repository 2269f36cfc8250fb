"""Hypothesis strategies for server configurations shaped like what real servers do with access: categories with and
without overwrites (private ones, @everyone denies), channels with more, fewer and neutral overwrites than their
category, voice rooms, channels outside any category, @everyone's base stated or not."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from svcconf.config import EVERYONE, ServerConfig

ROLE_NAMES = ("Moderator", "Member", "Muted", "Guest Star")
ROLE_PERMISSIONS = ("VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT", "SPEAK", "ADD_REACTIONS", "KICK_MEMBERS")
OVERWRITE_PERMISSIONS = ("VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT", "SPEAK", "ADD_REACTIONS", "EMBED_LINKS")


@st.composite
def overwrites(draw: st.DrawFn, roles: list[str]) -> list[dict[str, Any]]:
    """Overwrites for some of the roles and @everyone: allows, denies, both, or neutral (neither)."""
    targets = draw(st.lists(st.sampled_from([EVERYONE, *roles]), unique=True, max_size=len(roles) + 1))
    found = []
    for role in targets:
        allow = draw(st.lists(st.sampled_from(OVERWRITE_PERMISSIONS), unique=True, max_size=3))
        deny = draw(st.lists(st.sampled_from([p for p in OVERWRITE_PERMISSIONS if p not in allow]), unique=True))
        found.append({"role": role, "allow": allow, "deny": deny[:3]})
    return found


@st.composite
def channels(draw: st.DrawFn, roles: list[str], prefix: str) -> list[dict[str, Any]]:
    kinds = draw(st.lists(st.sampled_from(["text", "voice"]), max_size=3))
    return [
        {"name": f"{prefix} Room {n}", "type": kind, "overwrites": draw(overwrites(roles))}
        for n, kind in enumerate(kinds)
    ]


@st.composite
def configurations(draw: st.DrawFn, min_categories: int = 0) -> ServerConfig:
    roles = draw(st.lists(st.sampled_from(ROLE_NAMES), unique=True, min_size=1, max_size=3))
    everyone = draw(st.none() | st.lists(st.sampled_from(ROLE_PERMISSIONS), unique=True))
    categories = [
        {"name": f"Area {c}", "overwrites": draw(overwrites(roles)), "channels": draw(channels(roles, f"A{c}"))}
        for c in range(draw(st.integers(min_categories, 3)))
    ]
    return ServerConfig.model_validate(
        {
            "name": "Generated",
            "everyone_permissions": everyone,
            "roles": [{"name": r, "permissions": draw(st.lists(st.sampled_from(ROLE_PERMISSIONS)))} for r in roles],
            "categories": categories,
            "channels": draw(channels(roles, "Top")),
        }
    )
