"""The platform's native server templates (`GET /guilds/templates/{code}`), as the service reads them.

A template's snapshot names its roles and channels by small integer placeholders (@everyone is 0), not
snowflakes, and its types drift from the description: ids and bitfields come as integers or strings, lists as
null (the platform's docs and its OpenAPI description disagree). Parsing is lenient like `models.py`: ids and
bitfields become decimal strings, a missing list is empty.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from svcconf.chat.models import Bitfield, ChatModel, DefaultReaction, PermissionOverwrite, Snowflake


def _empty_if_null(value: Any) -> Any:
    return [] if value is None else value


def _false_if_null(value: Any) -> Any:
    return False if value is None else value


Placeholder = Snowflake  # a small integer standing for an object of the snapshot, kept as a decimal string
NullableList = BeforeValidator(_empty_if_null)


class TemplateRole(ChatModel):
    id: Placeholder
    name: str
    permissions: Bitfield = "0"
    color: int = 0
    hoist: bool = False
    mentionable: bool = False
    icon: str | None = None
    unicode_emoji: str | None = None


class TemplateTag(ChatModel):
    id: Placeholder | None = None
    name: str
    emoji_id: Snowflake | None = None
    emoji_name: str | None = None
    moderated: Annotated[bool, BeforeValidator(_false_if_null)] = False


class TemplateChannel(ChatModel):
    id: Placeholder | None = None
    type: int
    name: str | None = None
    position: int | None = None
    topic: str | None = None
    bitrate: int | None = None
    user_limit: int | None = None
    nsfw: Annotated[bool, BeforeValidator(_false_if_null)] = False
    rate_limit_per_user: int | None = None
    parent_id: Placeholder | None = None
    permission_overwrites: Annotated[list[PermissionOverwrite], NullableList] = Field(default_factory=list)
    available_tags: Annotated[list[TemplateTag], NullableList] = Field(default_factory=list)
    default_reaction_emoji: DefaultReaction | None = None
    default_thread_rate_limit_per_user: int | None = None
    default_sort_order: int | None = None
    default_forum_layout: int | None = None


class TemplateSnapshot(ChatModel):
    """`serialized_source_guild`: the source guild's settings, roles and channels as the template holds them."""

    name: str
    description: str | None = None
    verification_level: int = 0
    default_message_notifications: int = 0
    explicit_content_filter: int = 0
    preferred_locale: str | None = None
    afk_channel_id: Placeholder | None = None
    afk_timeout: int = 300
    system_channel_id: Placeholder | None = None
    system_channel_flags: int = 0
    roles: Annotated[list[TemplateRole], NullableList] = Field(default_factory=list)
    channels: Annotated[list[TemplateChannel], NullableList] = Field(default_factory=list)


class GuildTemplate(ChatModel):
    code: str
    name: str
    description: str | None = None
    usage_count: int = 0
    creator_id: Snowflake | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    source_guild_id: Snowflake | None = None
    serialized_source_guild: TemplateSnapshot
    is_dirty: bool | None = None


__all__ = ["GuildTemplate", "TemplateChannel", "TemplateRole", "TemplateSnapshot", "TemplateTag"]
