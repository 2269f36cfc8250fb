"""The server-configuration schema that validation, deployment, backups and the AI's output share.

Single-field rules are pydantic constraints, so they also appear in the JSON schema (the OpenAPI
document, the AI's structured output). Rules that relate several fields (duplicate role names,
overwrites naming undefined roles, the channel total) are checked once every field is valid and
are raised as a `ValidationError` whose entries carry the `loc` of the offending field; pydantic
prefixes those locs when the configuration is nested in a request body, so a handler can report
every problem with its path via `svcconf.errors.field_path`.

This module holds the root, `ServerConfig`, and those rules across objects; the objects' models are beside it:
`field_types` (the value types they share and their base model), `roles`, `channels` (channels and categories with
their overwrites) and `server_settings`.

Role names are compared ignoring case for uniqueness (the deployer matches roles by name, and
"Mods" next to "mods" would be ambiguous), but an overwrite must name its role exactly.
Permission lists keep duplicates as given: they are harmless in a bitfield, and keeping them keeps
error indexes pointing at the caller's input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Self

from pydantic import Field, model_validator
from pydantic_core import InitErrorDetails

from svcconf.config.channels import Category, Channel, Overwrite, platform_channel_name
from svcconf.config.community import AutomodRule, Onboarding, WelcomeScreen, automod_counts, references
from svcconf.config.field_types import ConfigModel, Loc, Name, PermissionName, problem, raise_problems
from svcconf.config.permissions import CHANNEL_TYPES, MAX_CHANNELS, MAX_ROLES
from svcconf.config.roles import EVERYONE, Role
from svcconf.config.server_settings import Settings


def _fold(role_name: str) -> str:
    return role_name.casefold().removeprefix("@")


class ServerConfig(ConfigModel):
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
    onboarding: Onboarding | None = Field(
        None, description="v4: how new members arrive; left out: as the server has it."
    )
    automod: list[AutomodRule] | None = Field(
        None, description="AutoMod rules by name; left out: as the server has them."
    )
    welcome_screen: WelcomeScreen | None = None

    def role_names(self) -> list[str]:
        return [role.name for role in self.roles]

    def channel_count(self) -> int:
        """Channels as the platform counts them against its limit: categories included."""
        return len(self.categories) + sum(len(category.channels) for category in self.categories) + len(self.channels)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        raise_problems(
            "ServerConfig",
            [
                *self._duplicate_role_names(),
                *self._duplicate_ids(),
                *self._undefined_overwrite_roles(),
                *self._too_many_channels(),
                *self._settings_channels(),
                *automod_counts(self.automod or []),
                *self._community_references(),
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
            yield problem(
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
            yield problem(
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
                yield problem(
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
            yield problem(
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
            yield problem(loc, f"settings_{field}", template, name, channel_type=kind, count=len(found))

    def find_channels(self, name: str, kind: str | None = None) -> list[Channel]:
        """The configuration's channels a v4 object's reference names (of a kind, when given)."""
        found = []
        for channel in self.all_channels():
            if kind is not None and channel.type != kind:
                continue
            number = CHANNEL_TYPES[channel.type]
            if channel.name == name or platform_channel_name(name, number) == platform_channel_name(
                channel.name, number
            ):
                found.append(channel)
        return found

    def _community_references(self) -> Iterator[InitErrorDetails]:
        """The roles and channels onboarding, AutoMod and the welcome screen name are the configuration's own."""
        roles = {role.name for role in self.roles}
        for what, loc, name in references(self.onboarding, self.automod, self.welcome_screen):
            if what in ("role", "option_role"):
                if name in roles or (what == "role" and name == EVERYONE):
                    continue
                template = "names role '{name}', which this configuration does not define"
                yield problem(loc, "undefined_role", template, name, name=name)
            elif not self.find_channels(name, "text" if what == "text" else None):
                label = "text channel" if what == "text" else "channel"
                template = "names no {label} of this configuration: '{name}'"
                yield problem(loc, "undefined_channel", template, name, name=name, label=label)
