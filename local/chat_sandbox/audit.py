"""The audit log: an entry for each change made through the sandbox's HTTP API, by whoever made it (the bot, or a
person acting with their own token), and `GET /guilds/{id}/audit-logs` to read them (docs/04-chat-platform.md,
"Members and the audit log").

`before(state, call)` keeps what a change will overwrite; `record(...)` writes the entry once the change
succeeded: the action type, the actor's user id, the target, the changed keys (`old_value`/`new_value`; a
member's roles as `$add`/`$remove` with `[{id, name}]`), the overwrite's `options`, and the request's
`X-Audit-Log-Reason`. Reorders (`PATCH .../roles`, `PATCH .../channels`) write no entry here. Entries are kept 45
days on the sandbox's clock.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import actor_id, bot_guild, require
from local.chat_sandbox.payloads import user_json
from local.chat_sandbox.protocol import Call, field_error, invalid_form
from svcconf.config.permissions import PERMISSION_BITS

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

VIEW_AUDIT_LOG = 1 << PERMISSION_BITS["VIEW_AUDIT_LOG"]
RETENTION_SECONDS = 45 * 86400
GUILD_KEYS = (
    "name",
    "description",
    "verification_level",
    "default_message_notifications",
    "explicit_content_filter",
    "afk_channel_id",
    "afk_timeout",
    "system_channel_id",
    "system_channel_flags",
    "preferred_locale",
)
ROLE_KEYS = ("name", "permissions", "color", "hoist", "mentionable", "unicode_emoji")
CHANNEL_KEYS = ("name", "type", "topic", "nsfw", "rate_limit_per_user", "bitrate", "user_limit", "parent_id")
OVERWRITE_ROUTE = "/channels/{channel_id}/permissions/{overwrite_id}"
MEMBER_ROLE_ROUTE = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"
ACTIONS = {  # (method, route) -> action type; overwrites' create or update is told by what was there before
    ("PATCH", "/guilds/{guild_id}"): 1,
    ("POST", "/guilds/{guild_id}/channels"): 10,
    ("PATCH", "/channels/{channel_id}"): 11,
    ("DELETE", "/channels/{channel_id}"): 12,
    ("PUT", OVERWRITE_ROUTE): 13,
    ("DELETE", OVERWRITE_ROUTE): 15,
    ("PUT", MEMBER_ROLE_ROUTE): 25,
    ("DELETE", MEMBER_ROLE_ROUTE): 25,
    ("POST", "/guilds/{guild_id}/roles"): 30,
    ("PATCH", "/guilds/{guild_id}/roles/{role_id}"): 31,
    ("DELETE", "/guilds/{guild_id}/roles/{role_id}"): 32,
}


def _guild_of(state: SandboxState, call: Call) -> dict[str, Any] | None:
    guild_id = call.params.get("guild_id") or state.channel_guild.get(call.params.get("channel_id", ""))
    return state.guilds.get(guild_id or "")


def before(state: SandboxState, call: Call) -> dict[str, Any] | None:
    """What the change is about to overwrite (None for a route that writes no entry)."""
    if (call.method, call.route) not in ACTIONS:
        return None
    guild = _guild_of(state, call)
    if guild is None:
        return None
    kept: dict[str, Any] = {"guild_id": guild["id"]}
    if call.route == "/guilds/{guild_id}":
        kept["object"] = {key: guild.get(key) for key in GUILD_KEYS}
    elif "role_id" in call.params and call.route != MEMBER_ROLE_ROUTE:
        kept["object"] = copy.deepcopy(guild["roles"].get(call.params["role_id"]))
    elif "channel_id" in call.params:
        channel = guild["channels"].get(call.params["channel_id"])
        kept["object"] = copy.deepcopy(channel)
        if call.route == OVERWRITE_ROUTE and channel is not None:
            target = call.params["overwrite_id"]
            kept["overwrite"] = next((dict(o) for o in channel["permission_overwrites"] if o["id"] == target), None)
    elif call.route == MEMBER_ROLE_ROUTE:
        member = guild["members"].get(call.params["user_id"])
        kept["roles"] = list(member["roles"]) if member else []
    return kept


def _changes(old: dict[str, Any] | None, new: dict[str, Any] | None, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    changes = []
    for key in keys:
        was, now = (old or {}).get(key), (new or {}).get(key)
        if was == now:
            continue
        change: dict[str, Any] = {"key": key}
        if now is not None:
            change["new_value"] = now
        if was is not None:
            change["old_value"] = was
        changes.append(change)
    return changes


def record(
    state: SandboxState, call: Call, status: int, answer: Any, kept: dict[str, Any] | None, reason: str | None
) -> None:
    """The entry for a change that succeeded (`kept` is what `before` returned)."""
    if kept is None or status >= 300:
        return
    action = ACTIONS[(call.method, call.route)]
    guild = state.guilds.get(kept["guild_id"])
    if guild is None:
        return
    entry: dict[str, Any] = {"id": state.next_id(), "action_type": action, "user_id": actor_id(state)}
    old = kept.get("object")
    if call.route == "/guilds/{guild_id}":
        entry["target_id"] = guild["id"]
        entry["changes"] = _changes(old, {key: guild.get(key) for key in GUILD_KEYS}, GUILD_KEYS)
    elif call.route == MEMBER_ROLE_ROUTE:
        role = guild["roles"][call.params["role_id"]]
        entry["target_id"] = call.params["user_id"]
        member = guild["members"].get(call.params["user_id"], {"roles": []})
        if (role["id"] in member["roles"]) == (role["id"] in kept["roles"]):
            return  # nothing changed: the member held it already, or did not hold it
        key = "$add" if call.method == "PUT" else "$remove"
        entry["changes"] = [{"key": key, "new_value": [{"id": role["id"], "name": role["name"]}]}]
    elif call.route == OVERWRITE_ROUTE:
        entry |= _overwrite_entry(guild, call, kept)
    elif action in (30, 31, 32):
        new = None if action == 32 else answer
        entry["target_id"] = (answer or old or {}).get("id") if action != 32 else call.params["role_id"]
        entry["changes"] = _changes(old if action != 30 else None, new, ROLE_KEYS)
    else:  # channels
        new = None if action == 12 else answer
        entry["target_id"] = call.params.get("channel_id") or (answer or {}).get("id")
        entry["changes"] = _changes(old if action != 10 else None, new, CHANNEL_KEYS)
    if reason:
        entry["reason"] = reason[:512]
    guild.setdefault("audit_log", []).append({**entry, "time": state.clock()})


def _overwrite_entry(guild: dict[str, Any], call: Call, kept: dict[str, Any]) -> dict[str, Any]:
    channel = guild["channels"].get(call.params["channel_id"]) or kept.get("object") or {}
    target = call.params["overwrite_id"]
    now = next((dict(o) for o in channel.get("permission_overwrites", []) if o["id"] == target), None)
    was = kept.get("overwrite")
    action = 15 if call.method == "DELETE" else (14 if was else 13)
    overwrite = now or was or {"type": 0}
    options = {"id": target, "type": str(overwrite.get("type", 0))}
    if str(options["type"]) == "0" and target in guild["roles"]:
        options["role_name"] = guild["roles"][target]["name"]
    keys = ("id", "type", "allow", "deny")
    return {
        "action_type": action,
        "target_id": channel.get("id", call.params["channel_id"]),
        "options": options,
        "changes": _changes(was if action != 13 else None, now, keys),
    }


# -- reading it --------------------------------------------------------------------------------------------


def _query_int(call: Call, name: str, low: int, high: int | None) -> int | None:
    raw = call.query.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise invalid_form({name: field_error("NUMBER_TYPE_COERCE", f'Value "{raw}" is not int.')}) from None
    if value < low or (high is not None and value > high):
        raise invalid_form({name: field_error("NUMBER_TYPE_MAX" if value > low else "NUMBER_TYPE_MIN", "out of range")})
    return value


def list_audit_log(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, VIEW_AUDIT_LOG)
    limit = _query_int(call, "limit", 1, 100) or 50
    before_id, after_id = _query_int(call, "before", 0, None), _query_int(call, "after", 0, None)
    action_type, user_id = _query_int(call, "action_type", 1, None), call.query.get("user_id")
    target_id = call.query.get("target_id")
    oldest = state.clock() - RETENTION_SECONDS
    entries = [
        entry
        for entry in guild.get("audit_log", [])
        if entry["time"] > oldest
        and (action_type is None or entry["action_type"] == action_type)
        and (user_id is None or entry["user_id"] == user_id)
        and (target_id is None or entry.get("target_id") == target_id)
        and (before_id is None or int(entry["id"]) < before_id)
        and (after_id is None or int(entry["id"]) > after_id)
    ]
    ascending = after_id is not None and before_id is None  # `after`: oldest first; otherwise newest first
    entries.sort(key=lambda entry: int(entry["id"]), reverse=not ascending)
    page = [{key: value for key, value in entry.items() if key != "time"} for entry in entries[:limit]]
    users = sorted({entry["user_id"] for entry in page if entry["user_id"] in state.users})
    return 200, {
        "audit_log_entries": page,
        "users": [user_json(state.users[user]) for user in users],
        "integrations": [],
        "webhooks": [],
        "guild_scheduled_events": [],
        "threads": [],
        "application_commands": [],
        "auto_moderation_rules": [],
    }
