"""`GET /invites/{code}`: a guild invite, anonymous or with the bot token."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local.chat_sandbox.payloads import counts, user_json
from local.chat_sandbox.protocol import Call, error, iso, truthy

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState


def get_invite(state: SandboxState, call: Call) -> tuple[int, Any]:
    invite = state.invites.get(call.params["code"])  # codes are case-sensitive
    if invite is None or (invite["expires_at"] is not None and invite["expires_at"] <= state.now()):
        raise error(404, 10006, "Unknown Invite")
    guild = state.guilds[invite["guild_id"]]
    channel = guild["channels"][invite["channel_id"]]
    body: dict[str, Any] = {
        "type": 0,
        "code": invite["code"],
        "expires_at": None if invite["expires_at"] is None else iso(invite["expires_at"]),
        "guild": {
            "id": guild["id"],
            "name": guild["name"],
            "splash": None,
            "banner": None,
            "description": guild.get("description"),
            "icon": guild.get("icon"),
            "features": list(guild.get("features", [])),
            "verification_level": 0,
            "vanity_url_code": None,
            "nsfw_level": 0,
            "nsfw": False,
            "premium_subscription_count": 0,
        },
        "guild_id": guild["id"],
        "channel": {"id": channel["id"], "type": channel["type"], "name": channel["name"]},
    }
    if invite.get("inviter_id") in state.users:
        body["inviter"] = user_json(state.users[invite["inviter_id"]])
    if truthy(call.query.get("with_counts")):
        body.update(counts(guild))
    return 200, body
