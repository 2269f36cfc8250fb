"""What the bot may see and do in a guild: the platform's permission and hierarchy rules.

- a guild the bot is not in looks like one that does not exist (10004); a channel there is Missing Access;
- an action needs its permission (MANAGE_ROLES, MANAGE_CHANNELS), ADMINISTRATOR or ownership holding all;
- the bot may edit, delete or move only roles strictly below its own highest role;
- it may grant only permissions it holds, in role permissions (the bits being added) and in overwrites
  (allow and deny); MANAGE_ROLES in an overwrite needs ADMINISTRATOR (the platform's guild docs).
All of them answer 403 50013 Missing Permissions.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from local.chat_sandbox.protocol import ADMINISTRATOR, MANAGE_ROLES, error, missing_access, missing_permissions
from svcconf.config.permissions import ALL_PERMISSIONS

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

Guild = dict[str, Any]


def permissions_of(guild: Guild, user_id: str) -> int:
    """A member's guild-level permissions: @everyone's and their roles' (all of them for the owner and admins)."""
    if guild["owner_id"] == user_id:
        return ALL_PERMISSIONS
    member = guild["members"].get(user_id)
    if member is None:
        return 0
    value = int(guild["roles"][guild["id"]]["permissions"])
    for role_id in member["roles"]:
        value |= int(guild["roles"].get(role_id, {}).get("permissions", 0))
    return ALL_PERMISSIONS if value & ADMINISTRATOR else value


def top_position(guild: Guild, user_id: str) -> float:
    """The position of the member's highest role (infinite for the owner, who outranks every role)."""
    if guild["owner_id"] == user_id:
        return math.inf
    member = guild["members"].get(user_id, {"roles": []})
    return max(
        (guild["roles"][role_id]["position"] for role_id in member["roles"] if role_id in guild["roles"]), default=0
    )


def actor_id(state: SandboxState) -> str:
    """Who is making the request being answered: a person acting with their own token (tests' second actor,
    local/chat_sandbox/actors.py), or the bot. The rules below are the same for both."""
    acting: str | None = getattr(state, "acting_id", None)
    return acting or str(state.bot["id"])


def bot_guild(state: SandboxState, guild_id: str) -> Guild:
    guild = state.guilds.get(guild_id)
    if guild is None or actor_id(state) not in guild["members"]:
        raise error(404, 10004, "Unknown Guild")  # not in it and non-existent look the same
    return guild


def bot_channel(state: SandboxState, channel_id: str) -> tuple[Guild, dict[str, Any]]:
    guild_id = state.channel_guild.get(channel_id)
    if guild_id is None:
        raise error(404, 10003, "Unknown Channel")
    guild = state.guilds[guild_id]
    if actor_id(state) not in guild["members"]:
        raise missing_access()
    return guild, guild["channels"][channel_id]


def guild_role(guild: Guild, role_id: str) -> dict[str, Any]:
    role: dict[str, Any] | None = guild["roles"].get(role_id)
    if role is None:
        raise error(404, 10011, "Unknown Role")
    return role


def require(state: SandboxState, guild: Guild, *flags: int) -> int:
    """The bot's permissions in the guild, if they include every flag."""
    permissions = permissions_of(guild, actor_id(state))
    if any(not permissions & flag for flag in flags):
        raise missing_permissions()
    return permissions


def require_below_bot(state: SandboxState, guild: Guild, position: int) -> None:
    if position >= top_position(guild, actor_id(state)):
        raise missing_permissions()


def require_grantable(bot_permissions: int, *values: int) -> None:
    for value in values:
        if value & ~bot_permissions:
            raise missing_permissions()


def require_grantable_overwrites(bot_permissions: int, overwrites: list[dict[str, Any]]) -> None:
    for overwrite in overwrites:
        allow, deny = int(overwrite["allow"]), int(overwrite["deny"])
        if (allow | deny) & MANAGE_ROLES and not bot_permissions & ADMINISTRATOR:
            raise missing_permissions()
        require_grantable(bot_permissions, allow, deny)
