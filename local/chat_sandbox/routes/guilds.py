"""A guild and its roles: read the guild and change its settings; create, modify, delete and reorder roles, with the
platform's hierarchy rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import (
    actor_id,
    bot_guild,
    guild_role,
    require,
    require_below_bot,
    require_grantable,
    top_position,
)
from local.chat_sandbox.bodies import ROLE_POSITIONS, GuildBody, RoleBody, parse
from local.chat_sandbox.payloads import guild_json, role_json, sorted_roles
from local.chat_sandbox.protocol import (
    GUILD_TEXT,
    GUILD_VOICE,
    MANAGE_GUILD,
    MANAGE_ROLES,
    MAX_ROLES,
    Call,
    error,
    field_error,
    invalid_form,
    missing_permissions,
    truthy,
)

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

Guild = dict[str, Any]


def get_guild(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    return 200, guild_json(guild, with_counts=truthy(call.query.get("with_counts")))


def modify_guild(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_GUILD)
    body = parse(call, GuildBody)
    sent = body.model_dump(include=body.model_fields_set)
    errors = {}
    # The AFK channel must be a voice channel of the guild, the system channel a text one; null unsets them.
    for field, kind in (("afk_channel_id", GUILD_VOICE), ("system_channel_id", GUILD_TEXT)):
        channel = guild["channels"].get(sent.get(field) or "")
        if sent.get(field) is not None and (channel is None or channel["type"] != kind):
            errors[field] = field_error("BASE_TYPE_INVALID", "Invalid channel type." if channel else "Unknown channel.")
    if sent.get("description") and "COMMUNITY" not in guild.get("features", []):
        errors["description"] = field_error("BASE_TYPE_INVALID", "Only community servers may have a description.")
    if errors:
        raise invalid_form(errors)
    cleared = {"afk_channel_id", "system_channel_id", "description"}  # a null clears these; others stay as they are
    guild.update({key: value for key, value in sent.items() if value is not None or key in cleared})
    return 200, guild_json(guild, with_counts=False)


def list_roles(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    return 200, [role_json(role) for role in sorted_roles(guild)]


def create_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    bot_permissions = require(state, guild, MANAGE_ROLES)
    body = parse(call, RoleBody)
    _require_role_icons(guild, body)
    colours = _colours(guild, body)
    if len(guild["roles"]) >= MAX_ROLES:
        raise error(400, 30005, f"Maximum number of server roles reached ({MAX_ROLES})")
    everyone = int(guild["roles"][guild["id"]]["permissions"])
    permissions = everyone if body.permissions is None else body.permissions  # a new role copies @everyone's
    require_grantable(bot_permissions, permissions)
    for role in guild["roles"].values():
        if role["id"] != guild["id"]:
            role["position"] += 1  # a new role appears just above @everyone [obs]
    role = {
        "id": state.next_id(),
        "name": body.name or "new role",
        "permissions": str(permissions),
        "position": 1,
        "color": body.color or 0,
        "hoist": bool(body.hoist),
        "mentionable": bool(body.mentionable),
        "managed": False,
        "unicode_emoji": body.unicode_emoji,
        **colours,
    }
    guild["roles"][role["id"]] = role
    return 200, role_json(role)


def _require_role_icons(guild: Guild, body: RoleBody) -> None:
    # Role icons are a boost-level feature: without it the platform asks for more boosts.
    if body.unicode_emoji and "ROLE_ICONS" not in guild.get("features", []):
        raise error(400, 50101, "This server needs more boosts to perform this action")


# The platform's fixed holographic set: sending tertiary_color enforces it [docs; obs: any other set fails].
HOLOGRAPHIC = {"primary_color": 11127295, "secondary_color": 16759788, "tertiary_color": 16761760}


def _colours(guild: Guild, body: RoleBody) -> dict[str, Any]:
    """What `colors` sets (`color` is ignored beside it): a gradient or holographic set needs ENHANCED_ROLE_COLORS.
    What the platform answers without it is not documented: the sandbox refuses with 50035 naming the field."""
    if body.colors is None:
        return {}
    sent = body.colors.model_dump()
    for field in ("secondary_color", "tertiary_color"):
        if sent[field] is not None and "ENHANCED_ROLE_COLORS" not in guild.get("features", []):
            message = "This server cannot use gradient role colors."
            raise invalid_form({"colors": {field: field_error("BASE_TYPE_INVALID", message)}})
    if sent["tertiary_color"] is not None and sent != HOLOGRAPHIC:
        raise invalid_form({"colors": field_error("BASE_TYPE_INVALID", "Invalid holographic role colors.")})
    return {"color": sent["primary_color"] or 0, **{f: sent[f] for f in ("secondary_color", "tertiary_color")}}


def _require_editable(state: SandboxState, guild: Guild, role: dict[str, Any]) -> None:
    require_below_bot(state, guild, role["position"])
    if role.get("managed"):
        # Deleting a managed role (a bot's, an integration's, the boosters') answers 400 50028 [obs,
        # discord-api-docs#2052]. The platform documents no rule for editing one; the sandbox refuses that
        # the same way, stricter than the platform, so nothing that passes here relies on editing one.
        raise error(400, 50028, "Invalid Role")


def modify_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    bot_permissions = require(state, guild, MANAGE_ROLES)
    role = guild_role(guild, call.params["role_id"])
    body = parse(call, RoleBody)
    _require_editable(state, guild, role)
    _require_role_icons(guild, body)
    colours = _colours(guild, body)
    changes = (
        body.model_dump(exclude_none=True, exclude={"colors"}) | colours
    )  # null leaves a field as it is, but for the emoji: it removes it
    if "unicode_emoji" in body.model_fields_set and body.unicode_emoji is None:
        changes["unicode_emoji"] = None
    if "permissions" in changes:
        require_grantable(bot_permissions, changes["permissions"] & ~int(role["permissions"]))  # the bits added
        changes["permissions"] = str(changes["permissions"])
    role.update(changes)
    return 200, role_json(role)


def delete_role(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_ROLES)
    role = guild_role(guild, call.params["role_id"])
    _require_editable(state, guild, role)
    if role["id"] == guild["id"]:
        raise error(400, 50028, "Invalid Role")  # @everyone cannot be deleted [obs]
    del guild["roles"][role["id"]]
    for member in guild["members"].values():
        member["roles"] = [role_id for role_id in member["roles"] if role_id != role["id"]]
    for channel in guild["channels"].values():
        channel["permission_overwrites"] = [o for o in channel["permission_overwrites"] if o["id"] != role["id"]]
    _renumber(guild, [r for r in sorted_roles(guild) if r["id"] != guild["id"]])
    return 204, None


def role_member_counts(state: SandboxState, call: Call) -> tuple[int, Any]:
    """`{role_id: count}` for the guild's roles but @everyone (everyone holds it)."""
    guild = bot_guild(state, call.params["guild_id"])
    counts = {role_id: 0 for role_id in guild["roles"] if role_id != guild["id"]}
    for member in guild["members"].values():
        for role_id in member["roles"]:
            if role_id in counts:
                counts[role_id] += 1
    return 200, counts


def reorder_roles(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_ROLES)
    items = parse(call, ROLE_POSITIONS)
    ceiling = top_position(guild, actor_id(state))
    for item in items:
        role = guild_role(guild, item.id)
        if item.position is None or role["id"] == guild["id"]:
            continue
        if role["position"] >= ceiling or item.position >= ceiling:
            raise missing_permissions()  # only roles below the bot's highest role move, and only below it
    moved = {item.id: item.position for item in items if item.position is not None and item.id != guild["id"]}
    # Roles keep their relative order; each moved role is put at the position it asked for.
    order = [role for role in sorted_roles(guild) if role["id"] != guild["id"] and role["id"] not in moved]
    for role_id, position in sorted(moved.items(), key=lambda pair: (pair[1], int(pair[0]))):
        order.insert(min(max(position, 1), len(order) + 1) - 1, guild["roles"][role_id])
    _renumber(guild, order)
    return 200, [role_json(role) for role in sorted_roles(guild)]


def _renumber(guild: Guild, order: list[dict[str, Any]]) -> None:
    """Contiguous positions, bottom to top: @everyone at 0, then `order` from 1."""
    for position, role in enumerate(order, start=1):
        role["position"] = position
