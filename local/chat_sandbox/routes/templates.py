"""`GET /guilds/templates/{code}`: a native server template, anonymous or with the bot token.

The templates are the sandbox's own fixture (`templates.json`), read-only; its `unreadable` ones are served as
written, in a shape the platform's description does not allow. Each answer is the platform's full object: every
channel of the snapshot carries every field, placeholder references (a channel's parent, an overwrite's role, the
AFK and system channels) are snowflake strings as the description types them, the placeholders themselves integers.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.chat_sandbox.payloads import user_json
from local.chat_sandbox.protocol import GUILD_FORUM, Call, error

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

FIXTURE = Path(__file__).resolve().parents[1] / "templates.json"
CREATOR_ID = "1191000000000000101"  # alice made them


@cache
def _fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


@cache
def templates() -> dict[str, dict[str, Any]]:
    """The fixture's templates by code (codes are case-sensitive)."""
    return {template["code"]: template for template in _fixture()["templates"]}


@cache
def unreadable_templates() -> dict[str, dict[str, Any]]:
    """Templates whose answer the platform's description does not allow (an older serialisation), by code."""
    return {template["code"]: template for template in _fixture().get("unreadable", [])}


def _reference(placeholder: int | None) -> str | None:
    return None if placeholder is None else str(placeholder)


def _channel(channel: dict[str, Any]) -> dict[str, Any]:
    forum = channel["type"] == GUILD_FORUM
    return {
        "id": channel["id"],
        "type": channel["type"],
        "name": channel["name"],
        "position": channel["position"],
        "topic": channel.get("topic"),
        "bitrate": channel.get("bitrate", 64000),
        "user_limit": channel.get("user_limit", 0),
        "nsfw": channel.get("nsfw", False),
        "rate_limit_per_user": channel.get("rate_limit_per_user", 0),
        "parent_id": _reference(channel["parent_id"]),
        "default_auto_archive_duration": None,
        "permission_overwrites": [
            {**overwrite, "id": str(overwrite["id"])} for overwrite in channel.get("permission_overwrites", [])
        ],
        "available_tags": [_tag(tag) for tag in channel.get("available_tags", [])] if forum else None,
        "template": "",
        "default_reaction_emoji": channel.get("default_reaction_emoji"),
        "default_thread_rate_limit_per_user": channel.get("default_thread_rate_limit_per_user", 0 if forum else None),
        "default_sort_order": channel.get("default_sort_order"),
        "default_forum_layout": channel.get("default_forum_layout", 0 if forum else None),
        "default_tag_setting": "match_some" if forum else None,
        "theme_color": None,
    }


def _tag(tag: dict[str, Any]) -> dict[str, Any]:
    return {"emoji_id": None, "emoji_name": None, "moderated": False, **tag}


def _role(role: dict[str, Any]) -> dict[str, Any]:
    return {"colors": None, "icon": None, "unicode_emoji": None, **role}


def get_template(state: SandboxState, call: Call) -> tuple[int, Any]:
    template = templates().get(call.params["code"]) or unreadable_templates().get(call.params["code"])
    if template is None:
        raise error(404, 10057, "Unknown Guild Template")
    snapshot = template["serialized_source_guild"]
    return 200, {
        **{key: template[key] for key in ("code", "name", "description", "usage_count", "created_at", "updated_at")},
        "creator_id": CREATOR_ID,
        "creator": user_json(state.users[CREATOR_ID]),
        "source_guild_id": template["source_guild_id"],
        "serialized_source_guild": {
            **snapshot,
            "region": None,
            "afk_channel_id": _reference(snapshot["afk_channel_id"]),
            "system_channel_id": _reference(snapshot["system_channel_id"]),
            "roles": [_role(role) for role in snapshot["roles"]],
            "channels": [_channel(channel) for channel in snapshot["channels"]],
        },
        "is_dirty": None,
    }
