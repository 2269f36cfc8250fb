"""The platform's native server templates (`GET /guilds/templates/{code}`), as the service reads them.

A template's snapshot names its roles and channels by small integer placeholders (@everyone is 0), not
snowflakes, and its types drift from the description: ids and bitfields come as integers or strings, lists as
null (the platform's docs and its OpenAPI description disagree). Parsing is lenient like `models.py`: ids and
bitfields become decimal strings, a missing list is empty. Templates made before the platform's permissions passed
32 bits keep that older serialisation: an overwrite's `type` as "role" or "member", and each bitfield twice, as
an integer cut to 32 bits and whole as a string (`permissions_new`, `allow_new`, `deny_new`): the whole one is read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from svcconf.chat.models import Bitfield, ChatModel, DefaultReaction, PermissionOverwrite, RoleColors, Snowflake


def _empty_if_null(value: Any) -> Any:
    return [] if value is None else value


def _false_if_null(value: Any) -> Any:
    return False if value is None else value


Placeholder = Snowflake  # a small integer standing for an object of the snapshot, kept as a decimal string
NullableList = BeforeValidator(_empty_if_null)
OVERWRITE_TYPES = {"role": 0, "member": 1}  # the older serialisation's names of an overwrite's type


def _whole_bitfields(value: Any, fields: tuple[str, ...]) -> Any:
    """The older serialisation's whole bitfields (`<field>_new`, strings) in place of its 32-bit integers."""
    if isinstance(value, dict) and any(f"{field}_new" in value for field in fields):
        value = {**value, **{field: value[f"{field}_new"] for field in fields if value.get(f"{field}_new") is not None}}
    return value


def _overwrite_type(value: Any) -> Any:
    return OVERWRITE_TYPES.get(value, value) if isinstance(value, str) else value


class TemplateOverwrite(PermissionOverwrite):
    type: Annotated[int, BeforeValidator(_overwrite_type)]

    @model_validator(mode="before")
    @classmethod
    def _older_serialisation(cls, value: Any) -> Any:
        return _whole_bitfields(value, ("allow", "deny"))


class TemplateRole(ChatModel):
    id: Placeholder
    name: str
    permissions: Bitfield = "0"
    color: int = 0
    hoist: bool = False
    mentionable: bool = False
    icon: str | None = None
    unicode_emoji: str | None = None
    colors: RoleColors | None = None  # since 2025, gradients included (absent from older templates)

    @model_validator(mode="before")
    @classmethod
    def _older_serialisation(cls, value: Any) -> Any:
        return _whole_bitfields(value, ("permissions",))


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
    permission_overwrites: Annotated[list[TemplateOverwrite], NullableList] = Field(default_factory=list)
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
