"""The platform's request bodies as pydantic models (one per route body) and their refusals in its 50035 shape.

A refusal names each field the way the platform does, list items by index:
`{"code": 50035, "message": "Invalid Form Body", "errors": {"name": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH",
"message": "Must be between 1 and 100 in length."}]}}}`. Leaf codes and messages follow the platform's where they
are observed; elsewhere the sandbox words them in the same style. Unknown fields are ignored, as the platform does.
What depends on the guild (a parent that is no category, a permission the bot lacks) is checked by the routes.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import MaxLen
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from local.chat_sandbox.protocol import (
    AFK_TIMEOUTS,
    CREATABLE_CHANNEL_TYPES,
    LOCALES,
    MAX_BODY_OVERWRITES,
    MAX_FORUM_TAGS,
    Call,
    invalid_form,
)

# pydantic's own error types, in the platform's words
_REFUSALS = {
    "missing": ("BASE_TYPE_REQUIRED", "This field is required"),
    "string_type": ("BASE_TYPE_STRING", "This field must be a string."),
    "int_type": ("NUMBER_TYPE_COERCE", "Value is not int."),
    "bool_type": ("BOOLEAN_TYPE_COERCE", "Must be either true or false."),
    "list_type": ("LIST_TYPE_CONVERT", "Only iterables may be used in a ListType"),
    "model_type": ("DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"),
    "too_long": ("BASE_TYPE_MAX_LENGTH", "Must be {max_length} or fewer in length."),
}


def form_errors(problems: ValidationError) -> dict[str, Any]:
    """pydantic's errors as the platform's nested `errors` object (request-level ones under `_errors`)."""
    tree: dict[str, Any] = {}
    for problem in problems.errors(include_url=False):
        node = tree
        for part in problem["loc"]:
            node = node.setdefault(str(part), {})
        kind = problem["type"]
        if kind in _REFUSALS:
            code, template = _REFUSALS[kind]
            message = template.format(**problem.get("ctx", {}))
        elif kind.isupper():  # raised by the field types below, already in the platform's words
            code, message = kind, problem["msg"]
        else:
            code, message = "BASE_TYPE_INVALID", problem["msg"]
        node.setdefault("_errors", []).append({"code": code, "message": message})
    return tree


def parse(call: Call, model: type[BaseModel] | TypeAdapter[Any]) -> Any:
    """The call's JSON body validated by a model (or a list adapter); refused with 50035 naming each field."""
    data = call.json()
    try:
        return model.validate_python(data) if isinstance(model, TypeAdapter) else model.model_validate(data)
    except ValidationError as problems:
        raise invalid_form(form_errors(problems)) from None


# -- field types ----------------------------------------------------------------------------------


def _between(low: int, high: int) -> AfterValidator:
    def check(value: int) -> int:
        if value < low:
            raise PydanticCustomError(
                "NUMBER_TYPE_MIN", "int value should be greater than or equal to {low}.", {"low": low}
            )
        if value > high:
            raise PydanticCustomError(
                "NUMBER_TYPE_MAX", "int value should be less than or equal to {high}.", {"high": high}
            )
        return value

    return AfterValidator(check)


def _length(low: int, high: int) -> AfterValidator:
    def check(value: str) -> str:
        if not low <= len(value) <= high:
            raise PydanticCustomError(
                "BASE_TYPE_BAD_LENGTH", "Must be between {low} and {high} in length.", {"low": low, "high": high}
            )
        return value

    return AfterValidator(check)


def _one_of(choices: tuple[int, ...]) -> AfterValidator:
    listed = "{" + ", ".join(map(str, choices)) + "}"

    def check(value: int) -> int:
        if value not in choices:
            raise PydanticCustomError("BASE_TYPE_CHOICES", "Value must be one of {choices}.", {"choices": listed})
        return value

    return AfterValidator(check)


def _digits(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return value
    return None


def _bitfield(value: Any) -> int:
    # The platform takes permission bitfields as decimal strings or integers.
    digits = _digits(value)
    if digits is None:
        raise PydanticCustomError("NUMBER_TYPE_COERCE", 'Value "{value}" is not int.', {"value": str(value)[:64]})
    return int(digits)


def _snowflake(value: Any) -> str:
    digits = _digits(value)
    if digits is None:
        raise PydanticCustomError("NUMBER_TYPE_COERCE", 'Value "{value}" is not snowflake.', {"value": str(value)[:64]})
    return digits


Name = Annotated[str, _length(1, 100)]
Topic = Annotated[str, _length(0, 4096)]  # text and announcement channels allow 1024: checked by the route
Bitfield = Annotated[int, BeforeValidator(_bitfield)]
Snowflake = Annotated[str, BeforeValidator(_snowflake)]
Color = Annotated[int, _between(0, 0xFFFFFF)]
Slowmode = Annotated[int, _between(0, 21600)]
UserLimit = Annotated[int, _between(0, 99)]
Bitrate = Annotated[int, _between(8000, 384000)]  # the ceiling of the channel's type: 30052, by the route
Position = Annotated[int, _between(0, 2**31 - 1)]
ChannelType = Annotated[int, _one_of(CREATABLE_CHANNEL_TYPES)]
OverwriteType = Annotated[int, _one_of((0, 1))]  # 0 role, 1 member
EmojiName = Annotated[str, _length(0, 100)]
TagName = Annotated[str, _length(0, 20)]  # the docs' forum tag: 0-20 characters
VideoQuality = Annotated[int, _one_of((1, 2))]  # 1 auto, 2 full
SortOrder = Annotated[int, _one_of((0, 1))]  # latest activity, creation date
ForumLayout = Annotated[int, _one_of((0, 1, 2))]  # not set, list, gallery
Level = Annotated[int, _one_of((0, 1, 2, 3, 4))]
Notifications = Annotated[int, _one_of((0, 1))]
ContentFilter = Annotated[int, _one_of((0, 1, 2))]
AfkTimeout = Annotated[int, _one_of(AFK_TIMEOUTS)]
Flags = Annotated[int, _between(0, 2**31 - 1)]


class Body(BaseModel):
    # strict: a bool is not an int, "5" is not a number, 1 is not true (bitfields and ids convert themselves)
    model_config = ConfigDict(extra="ignore", strict=True)


# -- roles -------------------------------------------------------------------------------------------


class RoleColorsBody(Body):
    """A role's `colors` (v4): secondary and tertiary need ENHANCED_ROLE_COLORS, checked by the route."""

    primary_color: Color | None = None
    secondary_color: Color | None = None
    tertiary_color: Color | None = None


class RoleBody(Body):
    """`POST /guilds/{guild_id}/roles` and `PATCH /guilds/{guild_id}/roles/{role_id}`: every field optional."""

    name: Name | None = None
    permissions: Bitfield | None = None
    color: Color | None = None
    hoist: bool | None = None
    mentionable: bool | None = None
    unicode_emoji: EmojiName | None = None  # needs the guild feature ROLE_ICONS: checked by the route
    colors: RoleColorsBody | None = None  # v4; when given, `color` is ignored [obs]


class RolePosition(Body):
    """An item of `PATCH /guilds/{guild_id}/roles`."""

    id: Snowflake
    position: int | None = None


ROLE_POSITIONS = TypeAdapter(list[RolePosition])


# -- channels and overwrites -------------------------------------------------------------------------


class OverwriteBody(Body):
    """An item of a channel body's `permission_overwrites`; absent or null allow/deny mean "0"."""

    id: Snowflake
    type: OverwriteType | None = 0
    allow: Bitfield | None = None
    deny: Bitfield | None = None


class PutOverwriteBody(Body):
    """`PUT /channels/{channel_id}/permissions/{overwrite_id}`."""

    type: OverwriteType
    allow: Bitfield | None = None
    deny: Bitfield | None = None


class TagBody(Body):
    """An item of a forum's `available_tags`; a tag without a known `id` is a new tag."""

    id: Snowflake | None = None
    name: TagName
    emoji_id: Snowflake | None = None
    emoji_name: EmojiName | None = None
    moderated: bool | None = None


class ReactionBody(Body):
    """A forum's `default_reaction_emoji`: a custom emoji's id or a unicode emoji's name."""

    emoji_id: Snowflake | None = None
    emoji_name: EmojiName | None = None


class ChannelBody(Body):
    """`PATCH /channels/{channel_id}`: a field sent replaces the channel's (`permission_overwrites` the whole list)."""

    name: Name | None = None
    type: ChannelType | None = None
    topic: Topic | None = None
    nsfw: bool | None = None
    rate_limit_per_user: Slowmode | None = None
    user_limit: UserLimit | None = None
    bitrate: Bitrate | None = None
    position: Position | None = None
    parent_id: Snowflake | None = None
    permission_overwrites: Annotated[list[OverwriteBody], MaxLen(MAX_BODY_OVERWRITES)] | None = None
    video_quality_mode: VideoQuality | None = None
    available_tags: Annotated[list[TagBody], MaxLen(MAX_FORUM_TAGS)] | None = None
    default_reaction_emoji: ReactionBody | None = None
    default_thread_rate_limit_per_user: Slowmode | None = None
    default_sort_order: SortOrder | None = None
    default_forum_layout: ForumLayout | None = None
    flags: Flags | None = None  # modify only: the create body has none, and the route ignores it there


class CreateChannelBody(ChannelBody):
    """`POST /guilds/{guild_id}/channels`: only `name` is required."""

    name: Name


class ChannelPosition(Body):
    """An item of `PATCH /guilds/{guild_id}/channels`."""

    id: Snowflake
    position: int | None = None
    parent_id: Snowflake | None = None
    lock_permissions: bool | None = None


CHANNEL_POSITIONS = TypeAdapter(list[ChannelPosition])


# -- the guild ----------------------------------------------------------------------------------------


def _locale(value: str) -> str:
    if value not in LOCALES:
        raise PydanticCustomError("BASE_TYPE_CHOICES", "Value must be one of the platform's locales.")
    return value


class GuildBody(Body):
    """`PATCH /guilds/{guild_id}`: the settings sent replace the guild's; what depends on its channels and features
    is checked by the route."""

    name: Annotated[str, _length(2, 100)] | None = None
    description: Annotated[str, _length(0, 300)] | None = None
    verification_level: Level | None = None
    default_message_notifications: Notifications | None = None
    explicit_content_filter: ContentFilter | None = None
    preferred_locale: Annotated[str, AfterValidator(_locale)] | None = None
    afk_timeout: AfkTimeout | None = None
    afk_channel_id: Snowflake | None = None
    system_channel_id: Snowflake | None = None
    system_channel_flags: Flags | None = None
