"""Channels and categories, with the permission overwrites they carry and the tags of forum channels."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictBool, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from svcconf.config.field_types import (
    ConfigModel,
    Emoji,
    Name,
    ObjectId,
    PermissionName,
    json_integer,
    problem,
    raise_problems,
)
from svcconf.config.permissions import (
    CHANNEL_TYPES,
    MAX_CHANNELS_PER_CATEGORY,
    MAX_FORUM_TOPIC_LENGTH,
    MAX_NAME_LENGTH,
    MAX_OVERWRITES,
    MAX_SLOWMODE_SECONDS,
    MAX_TOPIC_LENGTH,
    MAX_VOICE_USER_LIMIT,
    Permission,
)
from svcconf.config.vocabulary import (
    MAX_BITRATE_BY_TYPE,
    MAX_FORUM_TAGS,
    MAX_TAG_NAME_LENGTH,
    MIN_BITRATE,
    ForumLayout,
    ForumSort,
    VideoQuality,
)

ChannelType = Literal["text", "voice", "announcement", "stage", "forum"]
TEXT_LIKE_TYPES = frozenset({CHANNEL_TYPES["text"], CHANNEL_TYPES["announcement"], CHANNEL_TYPES["forum"]})


def platform_channel_name(name: str, channel_type: int) -> str:
    """The name the platform stores: text-like names lower-case with dashes for spaces (observed, not documented)."""
    if channel_type in TEXT_LIKE_TYPES:
        return re.sub(r"\s+", "-", name.strip()).lower()
    return name


# Channel types whose user_limit the platform honours.
_USER_LIMIT_TYPES = ("voice", "stage")


def _one_overwrite_per_role(overwrites: list[Overwrite]) -> list[Overwrite]:
    # Two overwrites for one role on one channel would leave the result to the order of creation.
    first: dict[str, int] = {}
    problems = []
    for index, overwrite in enumerate(overwrites):
        if overwrite.role in first:
            problems.append(
                problem(
                    (index, "role"),
                    "duplicate_overwrite",
                    "a second overwrite for role '{role}' (the first is overwrites[{first}])",
                    overwrite.role,
                    role=overwrite.role,
                    first=first[overwrite.role],
                )
            )
        else:
            first[overwrite.role] = index
    raise_problems("overwrites", problems)
    return overwrites


class Overwrite(ConfigModel):
    """Permissions allowed or denied to one role on a channel or category. A channel's overwrites are its category's
    with its own replacing them role by role: one that allows and denies nothing keeps the category's overwrite for
    that role off the channel."""

    role: str = Field(
        min_length=1,
        max_length=MAX_NAME_LENGTH,
        description="A role name defined in this configuration, or '@everyone'.",
    )
    allow: list[PermissionName] = Field(default_factory=list)
    deny: list[PermissionName] = Field(default_factory=list)

    @field_validator("deny")
    @classmethod
    def _not_also_allowed(cls, deny: list[Permission], info: ValidationInfo) -> list[Permission]:
        # A field validator (not a model one) so this runs even when another field is invalid.
        allowed = set(info.data.get("allow", ()))
        raise_problems(
            "Overwrite",
            [
                problem(
                    (index,),
                    "allowed_and_denied",
                    "'{name}' is both allowed and denied in this overwrite",
                    name,
                    name=name,
                )
                for index, name in enumerate(map(str, deny))
                if name in allowed
            ],
        )
        return deny


Overwrites = Annotated[list[Overwrite], Field(max_length=MAX_OVERWRITES), AfterValidator(_one_overwrite_per_role)]


class ForumTag(ConfigModel):
    """A tag that posts of a forum channel can carry."""

    name: str = Field(min_length=1, max_length=MAX_TAG_NAME_LENGTH)
    emoji: Emoji | None = None
    moderated: StrictBool = Field(False, description="Only members who can manage threads may apply it.")


def _only_for[T](value: T, info: ValidationInfo, field: str, types: tuple[str, ...]) -> T:
    kind = info.data.get("type")
    if value is not None and kind is not None and kind not in types:
        raise PydanticCustomError(
            "field_not_allowed",
            "{field} applies to {allowed} channels, not to {type} channels",
            {"field": field, "allowed": " and ".join(types), "type": kind},
        )
    return value


class Channel(ConfigModel):
    """A text, voice, announcement, stage or forum channel."""

    id: ObjectId = None
    name: Name
    type: ChannelType = "text"
    topic: str | None = Field(
        None,
        max_length=MAX_FORUM_TOPIC_LENGTH,
        description=f"At most {MAX_TOPIC_LENGTH} characters ({MAX_FORUM_TOPIC_LENGTH} for forum channels).",
    )
    nsfw: StrictBool = False
    slowmode_seconds: int | None = Field(None, ge=0, le=MAX_SLOWMODE_SECONDS)
    user_limit: int | None = Field(
        None, ge=0, le=MAX_VOICE_USER_LIMIT, description="Voice and stage channels only; 0 means no limit."
    )
    overwrites: Overwrites = Field(default_factory=list)
    bitrate: int | None = Field(
        None, ge=MIN_BITRATE, le=MAX_BITRATE_BY_TYPE["voice"], description="Voice (up to 96000) and stage (64000)."
    )
    video_quality: VideoQuality | None = Field(None, description="Voice and stage channels.")
    tags: list[ForumTag] | None = Field(None, max_length=MAX_FORUM_TAGS, description="Forum channels: post tags.")
    default_reaction: Emoji | None = Field(None, description="Forum channels: the reaction every post starts with.")
    default_thread_slowmode_seconds: int | None = Field(
        None, ge=0, le=MAX_SLOWMODE_SECONDS, description="Forum channels: the slowmode of new posts."
    )
    default_sort: ForumSort | None = Field(None, description="Forum channels.")
    default_layout: ForumLayout | None = Field(None, description="Forum channels.")
    require_tag: StrictBool | None = Field(None, description="Forum channels: a post must carry a tag.")
    _integers = field_validator(
        "slowmode_seconds", "user_limit", "bitrate", "default_thread_slowmode_seconds", mode="before"
    )(json_integer)

    # Field validators (not a model one) so each runs even when another field is invalid; `type` is
    # declared first, so `info.data` has it unless it was invalid itself.
    @field_validator("topic")
    @classmethod
    def _topic_fits_type(cls, topic: str | None, info: ValidationInfo) -> str | None:
        kind = info.data.get("type")
        if topic is not None and kind is not None and kind != "forum" and len(topic) > MAX_TOPIC_LENGTH:
            raise PydanticCustomError(
                "topic_too_long",
                "{type} channel topics have at most {limit} characters, not {length}",
                {"type": kind, "limit": MAX_TOPIC_LENGTH, "length": len(topic)},
            )
        return topic

    @field_validator("user_limit")
    @classmethod
    def _user_limit_fits_type(cls, user_limit: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("type")
        if user_limit is not None and kind is not None and kind not in _USER_LIMIT_TYPES:
            raise PydanticCustomError(
                "user_limit_not_allowed",
                "user_limit applies to voice and stage channels, not to {type} channels",
                {"type": kind},
            )
        return user_limit

    @field_validator("bitrate")
    @classmethod
    def _bitrate_fits_type(cls, bitrate: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("type")
        if bitrate is None or kind is None:
            return bitrate
        if kind not in MAX_BITRATE_BY_TYPE:
            raise PydanticCustomError(
                "bitrate_not_allowed",
                "bitrate applies to voice and stage channels, not to {type} channels",
                {"type": kind},
            )
        if bitrate > MAX_BITRATE_BY_TYPE[kind]:
            raise PydanticCustomError(
                "bitrate_too_high",
                "{type} channels allow a bitrate of at most {limit} without boosts",
                {"type": kind, "limit": MAX_BITRATE_BY_TYPE[kind]},
            )
        return bitrate

    @field_validator("video_quality")
    @classmethod
    def _video_quality_fits_type(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _only_for(value, info, "video_quality", _USER_LIMIT_TYPES)

    @field_validator(
        "tags", "default_reaction", "default_thread_slowmode_seconds", "default_sort", "default_layout", "require_tag"
    )
    @classmethod
    def _forum_only(cls, value: object, info: ValidationInfo) -> object:
        return _only_for(value, info, info.field_name or "", ("forum",))

    @field_validator("tags")
    @classmethod
    def _tag_names_differ(cls, tags: list[ForumTag] | None) -> list[ForumTag] | None:
        first: dict[str, int] = {}
        problems = []
        for index, tag in enumerate(tags or []):
            key = tag.name.casefold()
            if key in first:
                problems.append(
                    problem(
                        (index, "name"),
                        "duplicate_tag",
                        "a second tag named '{name}' (the first is tags[{first}])",
                        tag.name,
                        name=tag.name,
                        first=first[key],
                    )
                )
            else:
                first[key] = index
        raise_problems("tags", problems)
        return tags


class Category(ConfigModel):
    """A category and the channels inside it."""

    id: ObjectId = None
    name: Name
    overwrites: Overwrites = Field(default_factory=list)
    channels: list[Channel] = Field(default_factory=list, max_length=MAX_CHANNELS_PER_CATEGORY)
