"""svcAiChat's envelope, what the model answers each turn: edits to the current configuration, or a compact first
build; and the salvage of an answer cut off at `max_tokens` (its complete edits).

Structured outputs close every object (`additionalProperties: false`), so free-form `dict` fields could only be
`{}`. The envelope's field models are therefore derived from the schema's models at import, every field optional: a
field the schema gains is in the envelope without a change here.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from svcconf.config.channels import Category, Channel, Overwrite
from svcconf.config.community import AutomodRule, Onboarding, OnboardingPrompt
from svcconf.config.edits import Edit
from svcconf.config.roles import Role
from svcconf.config.schema import ServerConfig

_LISTS = ("roles", "categories", "channels")
# Ids are the platform's: the service keeps them through the model's edits, and the model never writes one.
_SERVICE_ONLY = ("id",)


def _optional_fields(*models: type[BaseModel], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    seen: dict[str, Any] = {}
    for model in models:
        for name, info in model.model_fields.items():
            if name in skip or name in _SERVICE_ONLY:
                continue
            # The field's type with its constraints and validators (a color's "#RRGGBB"), or null.
            kind: Any = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
            if name not in fields:
                seen[name] = info.annotation
                fields[name] = (kind | None, Field(None, description=info.description))
            elif info.annotation != seen[name]:  # one name, two meanings (a channel's type, a prompt's): either
                seen[name] = info.annotation
                fields[name] = (fields[name][0] | kind, fields[name][1])
    return fields


_CLOSED = ConfigDict(extra="forbid")
# What an `add` or `update` edit may set: any field of a role, category, channel, overwrite or the server, of an
# AutoMod rule, an onboarding prompt or onboarding itself.
EditFields = create_model(
    "EditFields",
    __config__=_CLOSED,
    **_optional_fields(
        Role,
        Channel,
        Category,
        Overwrite,
        ServerConfig,
        AutomodRule,
        OnboardingPrompt,
        Onboarding,
        skip=(*_LISTS[:2], "prompts"),
    ),
)

_SHORTHANDS: dict[str, Any] = {
    "private_to": (list[str] | None, Field(None, description="Roles that may see it; @everyone may not.")),
    "read_only": (bool | None, Field(None, description="@everyone may not send messages.")),
}
CompactChannel = create_model(
    "CompactChannel", __config__=_CLOSED, **_SHORTHANDS, **_optional_fields(Channel, skip=("name",)), name=(str, ...)
)
CompactCategory = create_model(
    "CompactCategory",
    __config__=_CLOSED,
    **_SHORTHANDS,
    **_optional_fields(Category, skip=("name", "channels")),
    name=(str, ...),
    channels=(list[str | CompactChannel] | None, None),
)
CompactRole = create_model(
    "CompactRole",
    __config__=_CLOSED,
    **_optional_fields(Role, skip=("name", "permissions")),
    name=(str, ...),
    permissions=(str | list[str] | None, Field(None, description="A preset name or permission names.")),
)
CompactServer = create_model(
    "CompactServer",
    __config__=_CLOSED,
    **_optional_fields(ServerConfig, skip=(*_LISTS, "name")),
    name=(str, ...),
    roles=(list[CompactRole] | None, None),
    categories=(list[CompactCategory] | None, None),
    channels=(list[str | CompactChannel] | None, None),
)


class TurnEdit(Edit):
    set: EditFields | None = Field(None, description="add/update: the fields to set, nothing else.")  # type: ignore[assignment]


class ChatTurn(BaseModel):
    """What the model answers each turn (the structured output's envelope; its title names it to the model)."""

    reply: str = Field(description="Your answer to the user, in their language; short, plain text.")
    edits: list[TurnEdit] | None = Field(description="The changes to currentConfig, in order (null: no change).")
    build: CompactServer | None = Field(
        description="A first build, in the compact form; only when there is no currentConfig."
    )
    rest: str | None = Field(description="What of the request is left for the next turn (output budget), or null.")
    quick_replies: list[str] = Field(description="0 to 4 short answers the user may click, each under 80 characters.")
    is_complete: bool = Field(description="True when the user has confirmed that the configuration is finished.")


def edits_of(turn_edits: list[TurnEdit]) -> list[Edit]:
    """The envelope's edits as the edit function takes them (only the fields the model set)."""
    return [Edit.model_validate({**edit.model_dump(exclude={"set"}), "set": _set_fields(edit)}) for edit in turn_edits]


def _set_fields(edit: TurnEdit) -> dict[str, Any] | None:
    return None if edit.set is None else edit.set.model_dump(mode="json", exclude_unset=True)


def build_of(turn: ChatTurn) -> dict[str, Any] | None:
    """The compact build as `compact.expand` takes it (only what the model wrote)."""
    return None if turn.build is None else turn.build.model_dump(mode="json", exclude_unset=True)


def salvage(text: str) -> tuple[str | None, list[TurnEdit]]:
    """From a cut-off answer: its `reply` if complete, and the edits written whole before the cut."""
    decoder = json.JSONDecoder()
    reply = _string_after(text, '"reply"', decoder)
    start = text.find('"edits"')
    edits: list[TurnEdit] = []
    if start < 0:
        return reply, edits
    position = text.find("[", start)
    while position >= 0:
        position = _skip(text, position + 1)
        try:
            value, position = decoder.raw_decode(text, position)
            edits.append(TurnEdit.model_validate(value))
        except ValueError:
            break  # the cut-off edit (or one that does not parse): the complete ones before it are kept
        position = _skip(text, position)
        if position >= len(text) or text[position] != ",":
            break
    return reply, edits


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _string_after(text: str, key: str, decoder: json.JSONDecoder) -> str | None:
    start = text.find(key)
    colon = text.find(":", start + len(key)) if start >= 0 else -1
    if colon < 0:
        return None
    try:
        value, _ = decoder.raw_decode(text, _skip(text, colon + 1))
    except ValueError:
        return None
    return value.strip() if isinstance(value, str) and value.strip() else None
