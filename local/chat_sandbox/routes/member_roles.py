"""Members as a backup reads and a restore (or a second actor) changes them: the paged member list and one role
granted to or taken from a member (docs/04-chat-platform.md, "Members and the audit log").

- `GET /guilds/{id}/members?limit&after`: ascending user ids after `after`, `limit` 1–1000 (default 1). It needs
  the privileged GUILD_MEMBERS intent: a bot without it (the sandbox setting `guild_members_intent`, or a guild
  listed in `guild_members_intent_denied`) gets 403 50001 Missing Access [obs].
- `PUT`/`DELETE /guilds/{id}/members/{user}/roles/{role}`: 204 (granting a held role or taking one not held
  included); MANAGE_ROLES, an unknown role 404 10011, a user not in the guild 404 10007; then the hierarchy: a role at
  or above the caller's highest is 403 50013 whatever it is (observed; the owner outranks every role;
  ADMINISTRATOR does not bypass it), so the bot's own role, at its highest, is a 50013; a managed role below it
  (another integration's) or @everyone cannot be given or taken (400 50028, as the sandbox answers for managed roles
  elsewhere). The two routes share one bucket (`config.SHARED_BUCKETS`; observed 10 per window).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import actor_id, bot_guild, guild_role, require, require_below_bot
from local.chat_sandbox.payloads import member_json
from local.chat_sandbox.protocol import MANAGE_ROLES, Call, error, field_error, invalid_form, missing_access

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

MAX_MEMBER_PAGE = 1000


def _integer(call: Call, name: str, default: int, low: int, high: int | None) -> int:
    raw = call.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid_form({name: field_error("NUMBER_TYPE_COERCE", f'Value "{raw}" is not int.')}) from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise invalid_form(
            {name: field_error("NUMBER_TYPE_MIN" if value < low else "NUMBER_TYPE_MAX", f"must be {bound}")}
        )
    return value


def list_members(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    if call.caller.kind == "bot" and (
        not state.config.guild_members_intent or guild["id"] in state.config.guild_members_intent_denied
    ):
        raise missing_access()  # the privileged intent is off for this bot [obs: 403 50001]
    limit = _integer(call, "limit", 1, 1, MAX_MEMBER_PAGE)
    after = _integer(call, "after", 0, 0, None)
    ids = sorted(int(user_id) for user_id in guild["members"] if int(user_id) > after)[:limit]
    return 200, [member_json(guild["members"][str(user_id)], state.users[str(user_id)]) for user_id in ids]


def _member_and_role(state: SandboxState, call: Call) -> tuple[dict[str, Any], dict[str, Any], str]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_ROLES)
    role = guild_role(guild, call.params["role_id"])
    member = guild["members"].get(call.params["user_id"])
    if member is None:
        raise error(404, 10007, "Unknown Member")
    require_below_bot(state, guild, role["position"])  # the role's position, not the member's (docs #1036)
    if role.get("managed") or role["id"] == guild["id"]:
        raise error(400, 50028, "Invalid Role")
    return member, role, actor_id(state)


def add_member_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    member, role, _ = _member_and_role(state, call)
    if role["id"] not in member["roles"]:
        member["roles"].append(role["id"])
    return 204, None


def remove_member_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    member, role, _ = _member_and_role(state, call)
    member["roles"] = [role_id for role_id in member["roles"] if role_id != role["id"]]
    return 204, None
