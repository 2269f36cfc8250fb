"""`GET /guilds/{guild_id}/members/{user_id}`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import bot_guild
from local.chat_sandbox.payloads import member_json
from local.chat_sandbox.protocol import Call, error

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState


def get_member(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    user_id = call.params["user_id"]
    if user_id not in state.users:
        raise error(404, 10013, "Unknown User")
    member = guild["members"].get(user_id)
    if member is None:
        raise error(404, 10007, "Unknown Member")
    return 200, member_json(member, state.users[user_id])
