"""Channels, categories and their permission overwrites: list, create, modify, delete, reorder.

Creation and modification share one set of rules: names of text-like channels normalised, the topic's
length by type, a parent that is a category with room (50), the bitrate ceiling of the type (30052),
overwrites that grant only what the bot holds (MANAGE_ROLES in one needs ADMINISTRATOR). Forum fields are kept on
forum channels and video quality on voice-like ones; elsewhere they are ignored, as fields that do not apply.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from local.chat_sandbox.access import bot_channel, bot_guild, require, require_grantable_overwrites
from local.chat_sandbox.bodies import CHANNEL_POSITIONS, ChannelBody, CreateChannelBody, PutOverwriteBody, parse
from local.chat_sandbox.payloads import channel_json, sorted_channels
from local.chat_sandbox.protocol import (
    GUILD_ANNOUNCEMENT,
    GUILD_CATEGORY,
    GUILD_FORUM,
    GUILD_MEDIA,
    GUILD_STAGE_VOICE,
    GUILD_TEXT,
    MANAGE_CHANNELS,
    MANAGE_ROLES,
    MAX_BITRATE,
    MAX_CHANNELS,
    MAX_CHANNELS_PER_CATEGORY,
    TEXT_LIKE,
    VOICE_LIKE,
    Call,
    error,
    field_error,
    invalid_form,
)

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

Guild = dict[str, Any]
Channel = dict[str, Any]
CLEARED_BY_NULL = {"topic", "parent_id", "default_reaction_emoji", "default_sort_order"}  # for others null is a no-op
FORUM_FIELDS = (
    "available_tags",
    "default_reaction_emoji",
    "default_thread_rate_limit_per_user",
    "default_sort_order",
    "default_forum_layout",
)
KIND_FIELDS = (*FORUM_FIELDS, "video_quality_mode", "flags")  # kept only on the channel types they apply to


def list_channels(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    return 200, [channel_json(channel) for channel in sorted_channels(guild)]


def create_channel(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    bot_permissions = require(state, guild, MANAGE_CHANNELS)
    body = parse(call, CreateChannelBody)
    kind = GUILD_TEXT if body.type is None else body.type
    if kind == GUILD_ANNOUNCEMENT and "NEWS" not in guild.get("features", []):
        raise invalid_form({"type": field_error("BASE_TYPE_CHOICES", "Announcement channels need the NEWS feature.")})
    if kind == GUILD_STAGE_VOICE and "COMMUNITY" not in guild.get("features", []):
        raise invalid_form({"type": field_error("BASE_TYPE_CHOICES", "Stage channels need the COMMUNITY feature.")})
    overwrites = _checked(state, guild, None, kind, body, bot_permissions)
    if len(guild["channels"]) >= MAX_CHANNELS:
        raise error(400, 30013, f"Maximum number of guild channels reached ({MAX_CHANNELS})")
    siblings = [c["position"] for c in guild["channels"].values() if c.get("parent_id") == body.parent_id]
    channel = {
        "id": state.next_id(),
        "type": kind,
        "guild_id": guild["id"],
        "name": _shown_name(state, kind, body.name),
        "position": max(siblings, default=-1) + 1 if body.position is None else body.position,
        "parent_id": body.parent_id,
        "permission_overwrites": overwrites or [],
        "topic": body.topic,
        "nsfw": bool(body.nsfw),
        "rate_limit_per_user": body.rate_limit_per_user or 0,
    }
    if kind in VOICE_LIKE:
        channel.update(bitrate=body.bitrate or 64000, user_limit=body.user_limit or 0)
    channel.update(_kind_fields(state, kind, body, {}))  # without flags: the create body has none
    guild["channels"][channel["id"]] = channel
    state.channel_guild[channel["id"]] = guild["id"]
    return 201, channel_json(channel)


def modify_channel(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild, channel = bot_channel(state, call.params["channel_id"])
    bot_permissions = require(state, guild, MANAGE_CHANNELS)
    body = parse(call, ChannelBody)
    kind = channel["type"]
    if body.type is not None and body.type != kind:
        # Only text and announcement channels convert into each other, in a guild with NEWS.
        if {kind, body.type} != {GUILD_TEXT, GUILD_ANNOUNCEMENT} or "NEWS" not in guild.get("features", []):
            raise invalid_form({"type": field_error("BASE_TYPE_CHOICES", "This channel cannot change to that type.")})
        kind = body.type
    overwrites = _checked(state, guild, channel["id"], kind, body, bot_permissions)
    sent = body.model_dump(include=body.model_fields_set - set(KIND_FIELDS))
    changes = {key: value for key, value in sent.items() if value is not None or key in CLEARED_BY_NULL}
    changes |= _kind_fields(state, kind, body, channel)
    if body.flags is not None and kind in (GUILD_FORUM, GUILD_MEDIA):
        changes["flags"] = body.flags
    if body.name is not None:
        changes["name"] = _shown_name(state, kind, body.name)
    if overwrites is not None:
        changes["permission_overwrites"] = overwrites  # the whole list is replaced
    channel.update(changes)
    return 200, channel_json(channel)


def delete_channel(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild, channel = bot_channel(state, call.params["channel_id"])
    require(state, guild, MANAGE_CHANNELS)
    if channel["id"] in (guild.get("rules_channel_id"), guild.get("public_updates_channel_id")):
        raise error(400, 50074, "Cannot delete a channel required for Community guilds")
    del guild["channels"][channel["id"]]
    del state.channel_guild[channel["id"]]
    for field in ("afk_channel_id", "system_channel_id"):
        if guild.get(field) == channel["id"]:
            guild[field] = None  # the guild no longer names a channel that is gone
    for child in guild["channels"].values():
        if child.get("parent_id") == channel["id"]:
            child["parent_id"] = None  # deleting a category orphans its channels
    state.invites = {code: invite for code, invite in state.invites.items() if invite["channel_id"] != channel["id"]}
    return 200, channel_json(channel)


def reorder_channels(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild = bot_guild(state, call.params["guild_id"])
    require(state, guild, MANAGE_CHANNELS)
    items = parse(call, CHANNEL_POSITIONS)
    if any(item.lock_permissions for item in items):
        require(state, guild, MANAGE_ROLES)
    parent_changes = 0
    for index, item in enumerate(items):
        channel = guild["channels"].get(item.id)
        if channel is None:
            raise error(404, 10003, "Unknown Channel")
        if "parent_id" in item.model_fields_set and item.parent_id != channel.get("parent_id"):
            parent_changes += 1
            if item.parent_id is not None and (problem := _parent_problem(guild, channel, item.parent_id)):
                raise invalid_form({str(index): {"parent_id": problem}})
    if parent_changes > 1:
        raise error(400, 40009, "Only one channel's parent may be changed at a time.")
    for item in items:
        channel = guild["channels"][item.id]
        if item.position is not None:
            channel["position"] = item.position
        if "parent_id" in item.model_fields_set:
            channel["parent_id"] = item.parent_id
            if item.lock_permissions and item.parent_id:
                parent = guild["channels"][item.parent_id]
                channel["permission_overwrites"] = [dict(overwrite) for overwrite in parent["permission_overwrites"]]
    return 204, None


def put_overwrite(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild, channel = bot_channel(state, call.params["channel_id"])
    bot_permissions = require(state, guild, MANAGE_ROLES)
    body = parse(call, PutOverwriteBody)
    target = call.params["overwrite_id"]
    if body.type == 0 and target not in guild["roles"]:
        raise error(404, 10011, "Unknown Role")
    if body.type == 1 and target not in guild["members"]:
        raise error(404, 10007, "Unknown Member")
    overwrite = {"id": target, "type": body.type, "allow": str(body.allow or 0), "deny": str(body.deny or 0)}
    require_grantable_overwrites(bot_permissions, [overwrite])
    others = [item for item in channel["permission_overwrites"] if item["id"] != target]
    channel["permission_overwrites"] = [*others, overwrite]
    return 204, None


def delete_overwrite(state: SandboxState, call: Call) -> tuple[int, Any]:
    guild, channel = bot_channel(state, call.params["channel_id"])
    require(state, guild, MANAGE_ROLES)
    target = call.params["overwrite_id"]
    remaining = [item for item in channel["permission_overwrites"] if item["id"] != target]
    if len(remaining) == len(channel["permission_overwrites"]):
        raise error(404, 10009, "Unknown Overwrite")  # [obs] discord.js#6025: no overwrite to delete is a 404
    channel["permission_overwrites"] = remaining
    return 204, None


# -- the rules creation and modification share -----------------------------------------------------------


def _checked(
    state: SandboxState, guild: Guild, channel_id: str | None, kind: int, body: ChannelBody, bot_permissions: int
) -> list[dict[str, Any]] | None:
    """Refuse what the guild does not allow; the body's overwrites as stored (None when it sends none)."""
    errors: dict[str, Any] = {}
    topic_max = 4096 if kind in (GUILD_FORUM, GUILD_MEDIA) else 1024
    if body.topic is not None and len(body.topic) > topic_max:
        errors["topic"] = field_error("BASE_TYPE_BAD_LENGTH", f"Must be between 0 and {topic_max} in length.")
    if body.parent_id is not None:
        moving = {"id": channel_id, "type": kind}
        if problem := _parent_problem(guild, moving, body.parent_id):
            errors["parent_id"] = problem
    if errors:
        raise invalid_form(errors)
    if body.bitrate is not None and body.bitrate > MAX_BITRATE.get(kind, body.bitrate):
        raise error(400, 30052, "Bitrate is too high for channel of this type")
    if body.permission_overwrites is None:
        return None
    overwrites = [
        {"id": item.id, "type": item.type or 0, "allow": str(item.allow or 0), "deny": str(item.deny or 0)}
        for item in body.permission_overwrites
    ]
    # setting overwrites needs MANAGE_ROLES (an empty list on create sets none)
    if overwrites or channel_id is not None:
        require(state, guild, MANAGE_ROLES)
    require_grantable_overwrites(bot_permissions, overwrites)
    return overwrites


def _kind_fields(state: SandboxState, kind: int, body: ChannelBody, channel: Channel) -> dict[str, Any]:
    """The forum and voice fields the body sets, for a channel of a type they apply to; new tags get ids."""
    sent = body.model_fields_set
    fields: dict[str, Any] = {}
    if kind in VOICE_LIKE and body.video_quality_mode is not None:
        fields["video_quality_mode"] = body.video_quality_mode
    if kind not in (GUILD_FORUM, GUILD_MEDIA):
        return fields
    for name in FORUM_FIELDS:
        value = getattr(body, name)
        if name in sent and (value is not None or name in CLEARED_BY_NULL):
            fields[name] = value.model_dump() if name == "default_reaction_emoji" and value else value
    if body.available_tags is not None:
        known = {tag["id"] for tag in channel.get("available_tags", [])}
        fields["available_tags"] = [
            {
                "id": tag.id if tag.id in known else state.next_id(),
                "name": tag.name,
                "moderated": bool(tag.moderated),
                "emoji_id": tag.emoji_id,
                "emoji_name": tag.emoji_name,
            }
            for tag in body.available_tags
        ]
    return fields


def _parent_problem(guild: Guild, channel: Channel, parent_id: str) -> dict[str, Any] | None:
    parent = guild["channels"].get(parent_id)
    if channel["type"] == GUILD_CATEGORY or parent is None or parent["type"] != GUILD_CATEGORY:
        # Sandbox wording: the platform's exact leaf code here is undocumented.
        return field_error("CHANNEL_PARENT_INVALID_TYPE", "Not a category.")
    children = [c for c in guild["channels"].values() if c.get("parent_id") == parent_id and c["id"] != channel["id"]]
    if len(children) >= MAX_CHANNELS_PER_CATEGORY:
        return field_error(
            "CHANNEL_PARENT_MAX_CHANNELS",
            f"Maximum number of channels in category reached ({MAX_CHANNELS_PER_CATEGORY})",
        )
    return None


def _shown_name(state: SandboxState, kind: int, name: str) -> str:
    if kind in TEXT_LIKE and state.config.normalize_channel_names:
        return re.sub(r"\s+", "-", name.strip()).lower()  # observed, not documented: lower-case, dashes
    return name
