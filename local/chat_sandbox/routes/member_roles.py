"""`PUT` and `DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}`: one role granted to or taken from one
member, as the platform does it (its guild docs, "Add Guild Member Role").

The bot needs MANAGE_ROLES (ADMINISTRATOR or ownership hold it) and the role strictly below its own highest (the
role's position is compared, not the member's; ADMINISTRATOR does not lift it): else 403 50013. A managed role
(a bot's, an integration's) or @everyone cannot be assigned: 400 50028 [obs]. An unknown role: 404 10011; a user
not in the guild: 404 10007. Both answer 204 with no body, granting a role the member holds or taking one they do
not hold included. The routes have their own bucket (`config.MEMBER_ROLE_LIMITS`: observed 10 per window).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import bot_guild, guild_role, require, require_below_bot
from local.chat_sandbox.protocol import MANAGE_ROLES, Call, error

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState


def _member_and_role(state: SandboxState, call: Call) -> tuple[dict[str, Any], str]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_ROLES)
    role = guild_role(guild, call.params["role_id"])
    member = guild["members"].get(call.params["user_id"])
    if member is None:
        raise error(404, 10007, "Unknown Member")
    require_below_bot(state, guild, role["position"])
    if role.get("managed") or role["id"] == guild["id"]:
        raise error(400, 50028, "Invalid Role")
    return member, role["id"]


def add_member_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    member, role_id = _member_and_role(state, call)
    if role_id not in member["roles"]:
        member["roles"].append(role_id)
    return 204, None


def remove_member_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    member, role_id = _member_and_role(state, call)
    member["roles"] = [held for held in member["roles"] if held != role_id]
    return 204, None
