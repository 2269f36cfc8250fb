"""A role of the configuration, and the platform's built-in role that overwrites may name."""

from __future__ import annotations

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from svcconf.config.field_types import Color, ConfigModel, Emoji, Name, ObjectId, PermissionName

EVERYONE = "@everyone"


class Role(ConfigModel):
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
