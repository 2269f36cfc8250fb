"""`GET /users/@me` and `GET /users/@me/guilds`, for a user's OAuth token or the bot's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import permissions_of
from local.chat_sandbox.payloads import counts, user_json
from local.chat_sandbox.protocol import Call, field_error, invalid_form, truthy, unauthorized

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState


def get_me(state: SandboxState, call: Call) -> tuple[int, Any]:
    user = state.users[call.caller.user_id or state.bot["id"]]
    return 200, user_json(user, private=True, scopes=call.caller.scopes)


def get_my_guilds(state: SandboxState, call: Call) -> tuple[int, Any]:
    caller = call.caller
    if caller.kind == "user" and "guilds" not in caller.scopes:
        raise unauthorized()
    errors: dict[str, Any] = {}
    raw_limit = call.query.get("limit", "200")
    if not (raw_limit.isascii() and raw_limit.isdigit()) or not 1 <= int(raw_limit) <= 200:
        errors["limit"] = field_error("NUMBER_TYPE_MAX", "int value should be between 1 and 200.")
    for name in ("after", "before"):
        if name in call.query and not (call.query[name].isascii() and call.query[name].isdigit()):
            errors[name] = field_error("NUMBER_TYPE_COERCE", f'Value "{call.query[name]}" is not snowflake.')
    if errors:
        raise invalid_form(errors)
    limit = int(raw_limit)
    user_id = caller.user_id or state.bot["id"]
    mine = sorted((g for g in state.guilds.values() if user_id in g["members"]), key=lambda g: int(g["id"]))
    if "after" in call.query:
        mine = [g for g in mine if int(g["id"]) > int(call.query["after"])]
    if "before" in call.query:
        mine = [g for g in mine if int(g["id"]) < int(call.query["before"])][-limit:]
    with_counts = truthy(call.query.get("with_counts"))
    answer = []
    for guild in mine[:limit]:
        item = {
            "id": guild["id"],
            "name": guild["name"],
            "icon": guild.get("icon"),
            "banner": None,
            "owner": guild["owner_id"] == user_id,
            "permissions": str(permissions_of(guild, user_id)),
            "features": list(guild.get("features", [])),
        }
        if with_counts:
            item.update(counts(guild))
        answer.append(item)
    return 200, answer
