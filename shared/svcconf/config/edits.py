"""Edits to a server configuration, addressed by name: what the AI answers instead of re-writing the whole server.

This module holds the vocabulary (`Edit`) and what applying edits gives back (`ConfigChange`, `EditResult`,
`EditsRejected`); `svcconf.config.apply_edits` applies them.

The vocabulary is generic: an edit has an `op` (add, update, remove, move, rename) and a `kind` (server, role,
category, channel, overwrite); `add` and `update` carry the fields to set in `set`, validated by the schema's model of
that kind, so a field the schema gains is editable without a new edit kind. Addressing:
- a role or category by `name`; a channel by `name` and its category `cat` (absent: outside any category);
- an overwrite by the role it names (`name`) on the category `cat`, or on the channel `ch` (in `cat`); a
  category's that grants more keeps its channels with overwrites of their own as they were, and such a channel moved
  to another category keeps who can do what in it (`_keep_channels_closed`, `_keep_access_on_move` in `apply_edits`);
- `to` is a rename's new name, or a move's destination category ("" for outside any category); `at` a position.
Removing or renaming a role updates the overwrites that name it.
Version 4's objects (`svcconf.config.community_edits`): an AutoMod rule (`automod`) by its `name`, an onboarding
prompt (`prompt`) by its title in `name`, onboarding's own fields (`onboarding`); the welcome screen is a server field.
Renaming or removing a role or channel updates what they name of it.

An object's `id` (the platform's, v3) stays with it through renames, moves and updates, so a deploy changes that
object rather than making a new one; an added object has none, and no edit sets one: ids come from the platform.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from svcconf.config.answers import NullsLeftOut
from svcconf.config.schema import ServerConfig
from svcconf.errors import FieldError

Op = Literal["add", "update", "remove", "move", "rename"]
Kind = Literal["server", "role", "category", "channel", "overwrite", "automod", "prompt", "onboarding"]


class Edit(BaseModel):
    """One change to the configuration (the AI's answer holds a list of them)."""

    op: Op
    kind: Kind
    name: str | None = Field(
        None, description="The role, category or channel; an overwrite's role; an AutoMod rule; a prompt's title."
    )
    cat: str | None = Field(None, description="The channel's category, or the overwrite's category.")
    ch: str | None = Field(None, description="The overwrite's channel (in `cat`).")
    set: dict[str, Any] | None = Field(None, description="add/update: the fields to set (the schema's field names).")
    to: str | None = Field(None, description="rename: the new name; move: the destination category ('' = none).")
    at: int | None = Field(None, description="add/move: the position in its list (default: the end).")


class ConfigChange(BaseModel):
    op: Op
    path: str
    old: Annotated[Any, NullsLeftOut] = None  # parts of a configuration, as answers give them
    new: Annotated[Any, NullsLeftOut] = None


class EditsRejected(Exception):
    """Edits that do not apply: `problems` name each (`edits[3]: no channel 'x' in category 'Y'`)."""

    def __init__(self, problems: list[FieldError], applied: int = 0):
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))
        self.problems = problems
        self.applied = applied  # how many edits applied before the first that did not


NO_ID_EDITS = (
    "`id` is the platform's id of an object and is never set by an edit: a renamed or moved object keeps its own, "
    "an added one gets its id when it is deployed"
)


@dataclass
class EditResult:
    config: ServerConfig
    changes: list[ConfigChange]
