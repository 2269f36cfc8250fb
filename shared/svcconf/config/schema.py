"""The server-configuration schema that validation, deployment, backups and the AI's output share.

Single-field rules are pydantic constraints, so they also appear in the JSON schema (the OpenAPI
document, the AI's structured output). Rules that relate several fields (duplicate role names,
overwrites naming undefined roles, the channel total) are checked once every field is valid and
are raised as a `ValidationError` whose entries carry the `loc` of the offending field; pydantic
prefixes those locs when the configuration is nested in a request body, so a handler can report
every problem with its path via `svcconf.errors.field_path`.

Role names are compared ignoring case for uniqueness (the deployer matches roles by name, and
"Mods" next to "mods" would be ambiguous), but an overwrite must name its role exactly.
Permission lists keep duplicates as given: they are harmless in a bitfield, and keeping them keeps
error indexes pointing at the caller's input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from difflib import get_close_matches
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from svcconf.config.permissions import (
    CHANNEL_TYPES,
    MAX_CHANNELS,
    MAX_CHANNELS_PER_CATEGORY,
    MAX_COLOR,
    MAX_FORUM_TOPIC_LENGTH,
    MAX_NAME_LENGTH,
    MAX_OVERWRITES,
    MAX_ROLES,
    MAX_SLOWMODE_SECONDS,
    MAX_TOPIC_LENGTH,
    MAX_VOICE_USER_LIMIT,
    PERMISSION_BITS,
    Permission,
)
from svcconf.config.vocabulary import (
    MAX_BITRATE_BY_TYPE,
    MAX_EMOJI_LENGTH,
    MAX_FORUM_TAGS,
    MAX_GUILD_DESCRIPTION_LENGTH,
    MAX_TAG_NAME_LENGTH,
    MIN_BITRATE,
    AfkTimeout,
    DefaultNotifications,
    ExplicitContentFilter,
    ForumLayout,
    ForumSort,
    Locale,
    SystemChannelFlag,
    VerificationLevel,
    VideoQuality,
)

EVERYONE = "@everyone"

Loc = tuple[str | int, ...]


def _problem(loc: Loc, kind: str, template: str, value: object, **context: object) -> InitErrorDetails:
    return {"type": PydanticCustomError(kind, template, context), "loc": loc, "input": value}


def _raise_problems(title: str, problems: list[InitErrorDetails]) -> None:
    # A ValidationError raised inside a validator keeps each entry's loc (prefixed by the
    # enclosing fields), unlike a ValueError, which collapses into one error at the model.
    if problems:
        raise ValidationError.from_exception_data(title, problems)


# --- Field types --------------------------------------------------------------------------------

Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH)]
# The platform's id of an object (a snowflake, always a string): export fills it, a deploy matches by it first.
ObjectId = Annotated[
    str | None,
    Field(
        pattern=r"^[0-9]{1,20}$",
        description="The chat platform's id of this object in the server it came from; a deploy matches by it first"
        " (an id the server does not have is ignored and the name matches).",
    ),
]


def _known_permission(value: object) -> object:
    # Replaces pydantic's enum error, which would list all ~50 names in every message.
    if not isinstance(value, str):
        raise PydanticCustomError("permission_type", "a permission is given by its name, e.g. 'VIEW_CHANNEL'")
    if value not in PERMISSION_BITS:
        close = get_close_matches(value.upper(), PERMISSION_BITS, n=1, cutoff=0.8)
        if close:
            raise PydanticCustomError(
                "unknown_permission",
                "unknown permission '{name}' (did you mean '{suggestion}'?)",
                {"name": value, "suggestion": close[0]},
            )
        raise PydanticCustomError("unknown_permission", "unknown permission '{name}'", {"name": value})
    return value


PermissionName = Annotated[Permission, BeforeValidator(_known_permission)]

_HEX_COLOR = re.compile(r"#[0-9A-Fa-f]{6}")


def _parse_color(value: object) -> object:
    if isinstance(value, str):
        if _HEX_COLOR.fullmatch(value):
            return int(value[1:], 16)
        raise PydanticCustomError(
            "color_format", "a color is an integer 0-16777215 or '#RRGGBB', not '{value}'", {"value": value}
        )
    if isinstance(value, bool):  # bool is an int to Python, never a color to a person
        raise PydanticCustomError("color_format", "a color is an integer 0-16777215 or '#RRGGBB'")
    return value


Color = Annotated[
    int,
    BeforeValidator(_parse_color),
    Field(ge=0, le=MAX_COLOR),
    # Validation accepts both spellings; serialisation always gives the integer.
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": MAX_COLOR},
                {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"},
            ]
        },
        mode="validation",
    ),
]

ChannelType = Literal["text", "voice", "announcement", "stage", "forum"]
TEXT_LIKE_TYPES = frozenset({CHANNEL_TYPES["text"], CHANNEL_TYPES["announcement"], CHANNEL_TYPES["forum"]})


def platform_channel_name(name: str, channel_type: int) -> str:
    """The name the platform stores: text-like names lower-case with dashes for spaces (observed, not documented)."""
    if channel_type in TEXT_LIKE_TYPES:
        return re.sub(r"\s+", "-", name.strip()).lower()
    return name


def _emoji(value: str) -> str:
    # A unicode emoji (custom emoji need ids the configuration cannot know before the deploy).
    if not value.strip() or value.isascii() or any(c.isspace() for c in value):
        raise PydanticCustomError("emoji", "an emoji is one unicode emoji, e.g. '🛡️', not '{value}'", {"value": value})
    return value


Emoji = Annotated[str, Field(min_length=1, max_length=MAX_EMOJI_LENGTH), AfterValidator(_emoji)]

# Channel types whose user_limit the platform honours.
_USER_LIMIT_TYPES = ("voice", "stage")


def _one_overwrite_per_role(overwrites: list[Overwrite]) -> list[Overwrite]:
    # Two overwrites for one role on one channel would leave the result to the order of creation.
    first: dict[str, int] = {}
    problems = []
    for index, overwrite in enumerate(overwrites):
        if overwrite.role in first:
            problems.append(
                _problem(
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
    _raise_problems("overwrites", problems)
    return overwrites


def _fold(role_name: str) -> str:
    return role_name.casefold().removeprefix("@")


# --- Models -------------------------------------------------------------------------------------


class _ConfigModel(BaseModel):
    # A field the schema does not know is refused with its path: ignoring it once dropped settings and forum tags
    # silently on their way to the guild.
    # One JSON schema for requests and answers (a colour reads as "#RRGGBB" too), so the API describes it once.
    model_config = ConfigDict(extra="forbid", json_schema_mode_override="validation")


class Overwrite(_ConfigModel):
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
        _raise_problems(
            "Overwrite",
            [
                _problem(
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


class Role(_ConfigModel):
    """A role, matched to the server's roles by id, then by name."""

    id: ObjectId = None
    name: Name
    color: Color = 0
    hoist: bool = False
    mentionable: bool = False
    permissions: list[PermissionName] = Field(default_factory=list)
    emoji: Emoji | None = Field(None, description="Shown beside the role's name; needs the server feature ROLE_ICONS.")

    @field_validator("name")
    @classmethod
    def _not_everyone(cls, name: str) -> str:
        if name.casefold() == EVERYONE:
            raise PydanticCustomError(
                "reserved_role_name",
                "'@everyone' is the platform's built-in role and cannot be defined; name it in overwrites instead",
            )
        return name


class ForumTag(_ConfigModel):
    """A tag that posts of a forum channel can carry."""

    name: str = Field(min_length=1, max_length=MAX_TAG_NAME_LENGTH)
    emoji: Emoji | None = None
    moderated: bool = Field(False, description="Only members who can manage threads may apply it.")


def _only_for[T](value: T, info: ValidationInfo, field: str, types: tuple[str, ...]) -> T:
    kind = info.data.get("type")
    if value is not None and kind is not None and kind not in types:
        raise PydanticCustomError(
            "field_not_allowed",
            "{field} applies to {allowed} channels, not to {type} channels",
            {"field": field, "allowed": " and ".join(types), "type": kind},
        )
    return value


class Channel(_ConfigModel):
    """A text, voice, announcement, stage or forum channel."""

    id: ObjectId = None
    name: Name
    type: ChannelType = "text"
    topic: str | None = Field(
        None,
        max_length=MAX_FORUM_TOPIC_LENGTH,
        description=f"At most {MAX_TOPIC_LENGTH} characters ({MAX_FORUM_TOPIC_LENGTH} for forum channels).",
    )
    nsfw: bool = False
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
    require_tag: bool | None = Field(None, description="Forum channels: a post must carry a tag.")

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
                    _problem(
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
        _raise_problems("tags", problems)
        return tags


class Category(_ConfigModel):
    """A category and the channels inside it."""

    id: ObjectId = None
    name: Name
    overwrites: Overwrites = Field(default_factory=list)
    channels: list[Channel] = Field(default_factory=list, max_length=MAX_CHANNELS_PER_CATEGORY)


class Settings(_ConfigModel):
    """The server's own settings. A setting left out (or null) stays as the server has it."""

    verification_level: VerificationLevel | None = None
    default_notifications: DefaultNotifications | None = None
    explicit_content_filter: ExplicitContentFilter | None = None
    afk_channel: Name | None = Field(None, description="A voice channel of this configuration, by name.")
    afk_timeout: AfkTimeout | None = Field(None, description="Seconds: 60, 300, 900, 1800 or 3600.")
    system_channel: Name | None = Field(None, description="A text channel of this configuration, by name.")
    system_channel_flags: list[SystemChannelFlag] | None = Field(
        None, description="What the system channel does not post."
    )
    preferred_locale: Locale | None = None
    description: str | None = Field(None, max_length=MAX_GUILD_DESCRIPTION_LENGTH)


class ServerConfig(_ConfigModel):
    """A whole server: roles, categories with their channels, and channels outside any category."""

    name: Name
    description: str | None = None
    settings: Settings | None = None
    everyone_permissions: list[PermissionName] | None = Field(
        None, description="The @everyone role's base permissions; left out: as the server has them."
    )
    roles: list[Role] = Field(default_factory=list, max_length=MAX_ROLES)
    categories: list[Category] = Field(default_factory=list, max_length=MAX_CHANNELS)
    channels: list[Channel] = Field(
        default_factory=list, max_length=MAX_CHANNELS, description="Channels outside any category."
    )

    def role_names(self) -> list[str]:
        return [role.name for role in self.roles]

    def channel_count(self) -> int:
        """Channels as the platform counts them against its limit: categories included."""
        return len(self.categories) + sum(len(category.channels) for category in self.categories) + len(self.channels)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        _raise_problems(
            "ServerConfig",
            [
                *self._duplicate_role_names(),
                *self._duplicate_ids(),
                *self._undefined_overwrite_roles(),
                *self._too_many_channels(),
                *self._settings_channels(),
            ],
        )
        return self

    def _duplicate_role_names(self) -> Iterator[InitErrorDetails]:
        first: dict[str, int] = {}
        for index, role in enumerate(self.roles):
            key = role.name.casefold()
            if key not in first:
                first[key] = index
                continue
            earlier = self.roles[first[key]].name
            template = "duplicate role name '{name}' (also roles[{first}])"
            if earlier != role.name:
                template = "duplicate role name '{name}' (also roles[{first}], '{earlier}'; case is ignored)"
            yield _problem(
                ("roles", index, "name"),
                "duplicate_role_name",
                template,
                role.name,
                name=role.name,
                first=first[key],
                earlier=earlier,
            )

    def objects_with_locs(self) -> Iterator[tuple[Loc, Role | Category | Channel]]:
        """Every role, category and channel with its path, in the configuration's order."""
        for index, role in enumerate(self.roles):
            yield ("roles", index), role
        for c, category in enumerate(self.categories):
            yield ("categories", c), category
            for n, channel in enumerate(category.channels):
                yield ("categories", c, "channels", n), channel
        for n, channel in enumerate(self.channels):
            yield ("channels", n), channel

    def _duplicate_ids(self) -> Iterator[InitErrorDetails]:
        # One id is one object of the server: two entries for it would make a deploy rename it back and forth.
        first: dict[str, Loc] = {}
        for loc, item in self.objects_with_locs():
            if item.id is None:
                continue
            if item.id not in first:
                first[item.id] = loc
                continue
            earlier = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first[item.id])
            yield _problem(
                (*loc, "id"),
                "duplicate_id",
                "id '{id}' is also {earlier}: one object of the server cannot be two entries of a configuration",
                item.id,
                id=item.id,
                earlier=earlier.lstrip("."),
            )

    def _overwrites_with_locs(self) -> Iterator[tuple[Loc, list[Overwrite]]]:
        for c, category in enumerate(self.categories):
            yield ("categories", c, "overwrites"), category.overwrites
            for n, channel in enumerate(category.channels):
                yield ("categories", c, "channels", n, "overwrites"), channel.overwrites
        for n, channel in enumerate(self.channels):
            yield ("channels", n, "overwrites"), channel.overwrites

    def _undefined_overwrite_roles(self) -> Iterator[InitErrorDetails]:
        defined = {*self.role_names(), EVERYONE}
        # Hints for near misses: "mods" for "Mods", "everyone" for "@everyone".
        by_folded: dict[str, str] = {}
        for name in (EVERYONE, *self.role_names()):
            by_folded.setdefault(_fold(name), name)
        for loc, overwrites in self._overwrites_with_locs():
            for index, overwrite in enumerate(overwrites):
                if overwrite.role in defined:
                    continue
                template = "overwrite names role '{role}', which this configuration does not define"
                suggestion = by_folded.get(_fold(overwrite.role))
                if suggestion:
                    template += " (did you mean '{suggestion}'?)"
                yield _problem(
                    (*loc, index, "role"),
                    "undefined_role",
                    template,
                    overwrite.role,
                    role=overwrite.role,
                    suggestion=suggestion,
                )

    def _too_many_channels(self) -> Iterator[InitErrorDetails]:
        count = self.channel_count()
        if count > MAX_CHANNELS:
            yield _problem(
                ("channels",),
                "too_many_channels",
                "the configuration has {count} channels, categories included; the platform allows at most {limit}",
                count,
                count=count,
                limit=MAX_CHANNELS,
            )

    def all_channels(self) -> Iterator[Channel]:
        for category in self.categories:
            yield from category.channels
        yield from self.channels

    def _settings_channels(self) -> Iterator[InitErrorDetails]:
        """The AFK channel names one voice channel of this configuration; the system channel one text channel."""
        if self.settings is None:
            return
        wanted = (("afk_channel", "voice"), ("system_channel", "text"))
        for field, kind in wanted:
            name = getattr(self.settings, field)
            if name is None:
                continue
            number = CHANNEL_TYPES[kind]
            found = [
                channel
                for channel in self.all_channels()
                if channel.type == kind
                and platform_channel_name(channel.name, number) == platform_channel_name(name, number)
            ]
            if len(found) == 1:
                continue
            template = (
                "names no {channel_type} channel of this configuration"
                if not found
                else "names {count} {channel_type} channels; give the one it means a name of its own"
            )
            loc = ("settings", field)
            yield _problem(loc, f"settings_{field}", template, name, channel_type=kind, count=len(found))
