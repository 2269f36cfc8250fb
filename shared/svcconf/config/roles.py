"""A role of the configuration, and the platform's built-in role that overwrites may name."""

from __future__ import annotations

from typing import Self

from pydantic import Field, StrictBool, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from svcconf.config.field_types import Color, ConfigModel, Emoji, Name, ObjectId, PermissionName

EVERYONE = "@everyone"
# The platform's fixed holographic set: sending tertiary_color enforces these three .
HOLOGRAPHIC = (11127295, 16759788, 16761760)


class RoleColors(ConfigModel):
    """A role's colours (v4): `secondary` makes a gradient, `holographic` the platform's fixed holographic set; both
    need the server feature ENHANCED_ROLE_COLORS (without it a deploy sets the primary colour and says so)."""

    primary: Color
    secondary: Color | None = None
    holographic: StrictBool = False

    @model_validator(mode="after")
    def _holographic_set(self) -> Self:
        if not self.holographic:
            return self
        if self.primary != HOLOGRAPHIC[0]:
            raise PydanticCustomError(
                "holographic",
                "a holographic role's primary colour is the platform's {value}",
                {"value": HOLOGRAPHIC[0]},
            )
        if self.secondary not in (None, HOLOGRAPHIC[1]):
            raise PydanticCustomError(
                "holographic",
                "a holographic role's secondary colour is the platform's {value}",
                {"value": HOLOGRAPHIC[1]},
            )
        return self

    def is_plain(self) -> bool:
        return self.secondary is None and not self.holographic

    def platform(self) -> dict[str, int | None]:
        """The platform's `colors` object."""
        if self.holographic:
            return dict(zip(("primary_color", "secondary_color", "tertiary_color"), HOLOGRAPHIC, strict=True))
        return {"primary_color": self.primary, "secondary_color": self.secondary, "tertiary_color": None}


class Role(ConfigModel):
    """A role, matched to the server's roles by id, then by name."""

    id: ObjectId = None
    name: Name
    color: Color = 0
    hoist: StrictBool = False
    mentionable: StrictBool = False
    permissions: list[PermissionName] = Field(default_factory=list)
    emoji: Emoji | None = Field(None, description="Shown beside the role's name; needs the server feature ROLE_ICONS.")
    colors: RoleColors | None = Field(
        None, description="v4: `primary` is the role's colour (`color`, when also given, must equal it)."
    )

    @field_validator("name")
    @classmethod
    def _not_everyone(cls, name: str) -> str:
        if name.casefold() == EVERYONE:
            raise PydanticCustomError(
                "reserved_role_name",
                "'@everyone' is the platform's built-in role and cannot be defined; name it in overwrites instead",
            )
        return name

    @model_validator(mode="after")
    def _one_colour(self) -> Self:
        if self.colors is None:
            return self
        if "color" in self.model_fields_set and self.color != self.colors.primary:
            raise ValidationError.from_exception_data(
                "Role",
                [
                    {
                        "type": PydanticCustomError(
                            "color_mismatch",
                            "'color' must equal 'colors.primary' ({primary})",
                            {"primary": self.colors.primary},
                        ),
                        "loc": ("color",),
                        "input": self.color,
                    }
                ],
            )
        self.__dict__["color"] = self.colors.primary  # one colour, whichever way it was said
        self.__pydantic_fields_set__.add("color")  # and stated, so a deploy compares it
        return self
