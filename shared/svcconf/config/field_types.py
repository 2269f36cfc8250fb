"""The value types the configuration's objects share (names, ids, permissions, colours, emoji), their base model, and
how a rule across fields reports its problems."""

from __future__ import annotations

import re
from difflib import get_close_matches
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError, PydanticKnownError

from svcconf.config.permissions import MAX_COLOR, MAX_NAME_LENGTH, PERMISSION_BITS, Permission
from svcconf.config.vocabulary import MAX_EMOJI_LENGTH

Loc = tuple[str | int, ...]


def problem(loc: Loc, kind: str, template: str, value: object, **context: object) -> InitErrorDetails:
    return {"type": PydanticCustomError(kind, template, context), "loc": loc, "input": value}


def raise_problems(title: str, problems: list[InitErrorDetails]) -> None:
    # A ValidationError raised inside a validator keeps each entry's loc (prefixed by the
    # enclosing fields), unlike a ValueError, which collapses into one error at the model.
    if problems:
        raise ValidationError.from_exception_data(title, problems)


def json_integer(value: object) -> object:
    """A before-validator for an integer field, as openapi.json types it (JSON Schema): 47 and 47.0, never true or
    "47" (pydantic's lax mode took both; its strict mode refuses 47.0). Used as
    `field_validator(<names>, mode="before")(json_integer)`, which keeps the fields' minimum and maximum in the
    schema (an Annotated validator inside `int | None` would not)."""
    if isinstance(value, bool | str | bytes):
        raise PydanticKnownError("int_type")
    return value


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


def _emoji(value: str) -> str:
    # A unicode emoji (custom emoji need ids the configuration cannot know before the deploy).
    if not value.strip() or value.isascii() or any(c.isspace() for c in value):
        raise PydanticCustomError("emoji", "an emoji is one unicode emoji, e.g. '🛡️', not '{value}'", {"value": value})
    return value


Emoji = Annotated[str, Field(min_length=1, max_length=MAX_EMOJI_LENGTH), AfterValidator(_emoji)]


class ConfigModel(BaseModel):
    # A field the schema does not know is refused with its path: ignoring it once dropped settings and forum tags
    # silently on their way to the guild.
    # One JSON schema for requests and answers (a colour reads as "#RRGGBB" too), so the API describes it once.
    model_config = ConfigDict(extra="forbid", json_schema_mode_override="validation")
