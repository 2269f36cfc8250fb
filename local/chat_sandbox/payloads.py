"""The platform's JSON objects (user, role, channel, guild, member) built from the sandbox's state."""

from __future__ import annotations

from typing import Any

from local.chat_sandbox.protocol import GUILD_FORUM, GUILD_MEDIA, TEXT_LIKE, VOICE_LIKE, iso


def user_json(user: dict[str, Any], *, private: bool = False, scopes: tuple[str, ...] = ()) -> dict[str, Any]:
    body = {
        "id": user["id"],
        "username": user["username"],
        "avatar": user.get("avatar"),
        "discriminator": user.get("discriminator", "0"),
        "public_flags": 0,
        "flags": 0,
        "banner": None,
        "accent_color": None,
        "global_name": user.get("global_name"),
        "avatar_decoration_data": None,
        "collectibles": None,
        "primary_guild": None,
    }
    if user.get("bot"):
        body["bot"] = True
    if private:
        body.update({"mfa_enabled": False, "locale": user.get("locale", "en-US"), "premium_type": 0})
        if user.get("bot") or "email" in scopes:
            body.update({"email": user.get("email"), "verified": bool(user.get("verified"))})
    return body


def role_json(role: dict[str, Any]) -> dict[str, Any]:
    body = {
        "id": role["id"],
        "name": role["name"],
        "permissions": str(role.get("permissions", "0")),
        "position": role.get("position", 0),
        "color": role.get("color", 0),
        "colors": {
            "primary_color": role.get("color", 0),
            "secondary_color": role.get("secondary_color"),
            "tertiary_color": role.get("tertiary_color"),
        },
        "hoist": role.get("hoist", False),
        "managed": role.get("managed", False),
        "mentionable": role.get("mentionable", False),
        "icon": None,
        "unicode_emoji": role.get("unicode_emoji"),
        "flags": 0,
    }
    if role.get("tags"):
        body["tags"] = role["tags"]
    return body


def overwrite_json(overwrite: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": overwrite["id"],
        "type": overwrite["type"],
        "allow": str(overwrite["allow"]),
        "deny": str(overwrite["deny"]),
    }


def channel_json(channel: dict[str, Any]) -> dict[str, Any]:
    body = {
        "id": channel["id"],
        "type": channel["type"],
        "flags": channel.get("flags", 0),
        "guild_id": channel["guild_id"],
        "name": channel["name"],
        "parent_id": channel.get("parent_id"),
        "position": channel.get("position", 0),
        "permission_overwrites": [overwrite_json(item) for item in channel.get("permission_overwrites", [])],
    }
    if channel["type"] in TEXT_LIKE:
        body.update(
            topic=channel.get("topic"),
            nsfw=channel.get("nsfw", False),
            rate_limit_per_user=channel.get("rate_limit_per_user", 0),
            last_message_id=None,
        )
    elif channel["type"] in VOICE_LIKE:
        body.update(
            bitrate=channel.get("bitrate", 64000),
            user_limit=channel.get("user_limit", 0),
            rtc_region=None,
            nsfw=channel.get("nsfw", False),
            rate_limit_per_user=0,
            last_message_id=None,
        )
        if channel.get("video_quality_mode") is not None:
            body["video_quality_mode"] = channel["video_quality_mode"]
    if channel["type"] in (GUILD_FORUM, GUILD_MEDIA):
        body.update(forum_json(channel))
    return body


def forum_json(channel: dict[str, Any]) -> dict[str, Any]:
    """A forum's own fields: its tags, the reaction and slowmode of new posts, their order and layout."""
    return {
        "available_tags": [
            {
                "id": tag["id"],
                "name": tag["name"],
                "moderated": tag.get("moderated", False),
                "emoji_id": tag.get("emoji_id"),
                "emoji_name": tag.get("emoji_name"),
            }
            for tag in channel.get("available_tags", [])
        ],
        "default_reaction_emoji": channel.get("default_reaction_emoji"),
        "default_thread_rate_limit_per_user": channel.get("default_thread_rate_limit_per_user", 0),
        "default_sort_order": channel.get("default_sort_order"),
        "default_forum_layout": channel.get("default_forum_layout", 0),
        "default_tag_setting": "match_some",
    }


def sorted_roles(guild: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(guild["roles"].values(), key=lambda role: (role.get("position", 0), int(role["id"])))


def sorted_channels(guild: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(guild["channels"].values(), key=lambda channel: (channel.get("position", 0), int(channel["id"])))


def counts(guild: dict[str, Any]) -> dict[str, int]:
    members = len(guild["members"])
    return {
        "approximate_member_count": members,
        "approximate_presence_count": min(members, int(guild.get("presence_count", 0))),
    }


# The settings a guild has until they are changed (PATCH /guilds/{id}), with the platform's defaults.
GUILD_SETTINGS: dict[str, Any] = {
    "verification_level": 0,
    "default_message_notifications": 0,
    "explicit_content_filter": 0,
    "afk_channel_id": None,
    "afk_timeout": 300,
    "system_channel_id": None,
    "system_channel_flags": 0,
    "preferred_locale": "en-US",
    "description": None,
}


def settings_json(guild: dict[str, Any]) -> dict[str, Any]:
    return {name: guild.get(name, default) for name, default in GUILD_SETTINGS.items()}


def guild_json(guild: dict[str, Any], *, with_counts: bool) -> dict[str, Any]:
    body = {
        "id": guild["id"],
        "name": guild["name"],
        "icon": guild.get("icon"),
        "description": guild.get("description"),
        "home_header": None,
        "splash": None,
        "discovery_splash": None,
        "features": list(guild.get("features", [])),
        "banner": None,
        "owner_id": guild["owner_id"],
        "application_id": None,
        "region": "deprecated",
        "afk_channel_id": guild.get("afk_channel_id"),
        "afk_timeout": guild.get("afk_timeout", 300),
        "system_channel_id": guild.get("system_channel_id"),
        "system_channel_flags": guild.get("system_channel_flags", 0),
        "widget_enabled": False,
        "widget_channel_id": None,
        "verification_level": guild.get("verification_level", 0),
        "roles": [role_json(role) for role in sorted_roles(guild)],
        "default_message_notifications": guild.get("default_message_notifications", 0),
        "mfa_level": 0,
        "explicit_content_filter": guild.get("explicit_content_filter", 0),
        "max_presences": None,
        "max_members": 500000,
        "max_stage_video_channel_users": 50,
        "max_video_channel_users": 25,
        "vanity_url_code": None,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "preferred_locale": guild.get("preferred_locale", "en-US"),
        "rules_channel_id": guild.get("rules_channel_id"),
        "safety_alerts_channel_id": None,
        "public_updates_channel_id": guild.get("public_updates_channel_id"),
        "premium_progress_bar_enabled": False,
        "nsfw": False,
        "nsfw_level": 0,
        "emojis": [],
        "stickers": [],
        "incidents_data": None,
    }
    body.update(settings_json(guild))
    if with_counts:
        body.update(counts(guild))
    return body


def member_json(member: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    return {
        "avatar": None,
        "banner": None,
        "communication_disabled_until": None,
        "flags": 0,
        "joined_at": iso(member["joined_at"]),
        "nick": member.get("nick"),
        "pending": False,
        "premium_since": None,
        "roles": list(member["roles"]),
        "user": user_json(user),
        "mute": False,
        "deaf": False,
    }
