"""The compact form of a server configuration: what the AI writes for a first build, expanded by the service.

It is the schema with defaults left out and three shorthands, so everything it can say the schema can say:
- a role's `permissions` may be a preset name (`admin`, `moderator`, `member`, `none`) or a list that mixes
  preset names and permission names;
- a channel may be a plain string: a text channel of that name with every default;
- a category or channel may say `private_to: [roles]` (@everyone denied VIEW_CHANNEL, each role allowed it) or
  `read_only: true` (@everyone denied SEND_MESSAGES), before its own `overwrites`.
A neutral overwrite (nothing allowed or denied) is its role alone, `{"role": "Moderator"}`: on a channel it keeps
its category's overwrite for that role off (the lint and the docs call it that too).
`expand(compact)` gives the ServerConfig; `compact(config)` the shortest compact form of a configuration, and
`expand(compact(config)) == config` for every valid configuration.
"""

from __future__ import annotations

from typing import Any

from svcconf.config.roles import EVERYONE
from svcconf.config.schema import ServerConfig

ROLE_PRESETS: dict[str, list[str]] = {
    "admin": ["ADMINISTRATOR"],
    "moderator": ["KICK_MEMBERS", "BAN_MEMBERS", "MANAGE_MESSAGES", "MODERATE_MEMBERS", "MANAGE_THREADS"],
    "member": ["SEND_MESSAGES", "EMBED_LINKS", "ATTACH_FILES", "ADD_REACTIONS", "CONNECT", "SPEAK"],
    "none": [],
}
VIEW, SEND = "VIEW_CHANNEL", "SEND_MESSAGES"
COMPACT_RULES = (
    "The compact form (first builds only) is the configuration with defaults left out and these shorthands: a "
    "role's permissions may be a preset name ("
    + ", ".join(f"{k}={'+'.join(v) or 'nothing'}" for k, v in ROLE_PRESETS.items())
    + ") or a list mixing presets and permission names; a channel may be a plain string (a text channel with "
    'that name); a category or channel may say "private_to": [role names] (@everyone denied VIEW_CHANNEL, the '
    'roles allowed it) or "read_only": true (@everyone denied SEND_MESSAGES), before its own "overwrites". A '
    "channel's overwrites are its category's with its own replacing them role by role: an overwrite with only its "
    '"role" (nothing allowed or denied) keeps the category\'s overwrite for that role off the channel.'
)


def expand(value: dict[str, Any]) -> ServerConfig:
    """The configuration a compact form says (pydantic's ValidationError when it says something invalid)."""
    server = dict(value)
    server["roles"] = [_role(role) for role in server.get("roles") or []]
    server["categories"] = [_holder(category, channels=True) for category in server.get("categories") or []]
    server["channels"] = [_channel(channel) for channel in server.get("channels") or []]
    return ServerConfig.model_validate(server)


def compact(config: ServerConfig) -> dict[str, Any]:
    """The shortest compact form of `config` (defaults left out, presets and shorthands where they match)."""
    data = config.model_dump(mode="json", exclude_defaults=True)
    for role in data.get("roles", []):
        permissions = role.get("permissions", [])
        preset = next((name for name, listed in ROLE_PRESETS.items() if listed == permissions and listed), None)
        if preset:
            role["permissions"] = preset
    for category in data.get("categories", []):
        _shorten(category)
        category["channels"] = [_short_channel(channel) for channel in category.get("channels", [])]
        if not category["channels"]:
            del category["channels"]
    if "channels" in data:
        data["channels"] = [_short_channel(channel) for channel in data["channels"]]
    return data


# --- expansion ------------------------------------------------------------------------------------------------


def _role(role: Any) -> Any:
    if not isinstance(role, dict):
        return role  # the schema names what is wrong with it
    permissions = role.get("permissions")
    if isinstance(permissions, str):
        permissions = [permissions]
    if isinstance(permissions, list):
        expanded: list[Any] = []
        for name in permissions:
            expanded += ROLE_PRESETS.get(name, [name]) if isinstance(name, str) else [name]
        role = {**role, "permissions": expanded}
    return role


def _holder(holder: Any, *, channels: bool = False) -> Any:
    if not isinstance(holder, dict):
        return holder
    holder = dict(holder)
    own = holder.get("overwrites") or []
    shorthand: list[dict[str, Any]] = []
    private_to = holder.pop("private_to", None)
    read_only = holder.pop("read_only", False)
    if private_to or read_only:
        deny = [VIEW] * bool(private_to) + [SEND] * bool(read_only)
        shorthand.append({"role": EVERYONE, "deny": deny})
        shorthand += [{"role": role, "allow": [VIEW]} for role in private_to or []]
    if shorthand:
        holder["overwrites"] = shorthand + (own if isinstance(own, list) else [own])
    if channels:
        holder["channels"] = [_channel(channel) for channel in holder.get("channels") or []]
    return holder


def _channel(channel: Any) -> Any:
    return {"name": channel} if isinstance(channel, str) else _holder(channel)


# --- compaction -----------------------------------------------------------------------------------------------


def _shorten(holder: dict[str, Any]) -> None:
    """Replace the overwrites by the shorthands when they say exactly that (everything else stays as it is)."""
    overwrites = holder.get("overwrites", [])
    if not overwrites or set(overwrites[0]) != {"role", "deny"} or overwrites[0]["role"] != EVERYONE:
        return
    deny = overwrites[0]["deny"]
    if deny not in ([VIEW], [SEND], [VIEW, SEND]):
        return
    roles = []
    rest = overwrites[1:]
    if VIEW in deny:
        while rest and rest[0] == {"role": rest[0]["role"], "allow": [VIEW]} and rest[0]["role"] != EVERYONE:
            roles.append(rest.pop(0)["role"])
        if not roles:
            return
        holder["private_to"] = roles
    if SEND in deny:
        holder["read_only"] = True
    if rest:
        holder["overwrites"] = rest
    else:
        del holder["overwrites"]


def _short_channel(channel: dict[str, Any]) -> Any:
    _shorten(channel)
    return channel["name"] if set(channel) == {"name"} else channel
