"""What makes a template fit for the library: a valid configuration the permission-safety lint has nothing against,
a description, a few tags, and a name no other template has (names compared as their normalised ids).

Used on the starter set (a test holds it to this) and on everything the model generates: a candidate that
fails is dropped with its reason, never stored.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from svcconf.config import MAX_NAME_LENGTH, ServerConfig, lint_config
from svcconf.errors import field_path
from svcconf.store.templates import StoredTemplate

MAX_DESCRIPTION_LENGTH = 300
MAX_TAGS = 8
MAX_TAG_LENGTH = 30
_NOT_WORD = re.compile(r"[\W_]+")


def template_id(name: str) -> str:
    """The normalised name that identifies a template: "Gaming  Community!" and "gaming-community" are one."""
    return _NOT_WORD.sub("-", unicodedata.normalize("NFKC", name).casefold()).strip("-")


def _tag(value: object) -> object:
    return template_id(value) if isinstance(value, str) else value


Tag = Annotated[str, BeforeValidator(_tag), Field(min_length=1, max_length=MAX_TAG_LENGTH)]


class TemplateDraft(BaseModel):
    """A template as the starter set holds it and the model writes it."""

    name: str = Field(min_length=1, max_length=MAX_NAME_LENGTH, description="A short name people recognise.")
    description: str = Field(
        min_length=1, max_length=MAX_DESCRIPTION_LENGTH, description="One or two sentences: who the server is for."
    )
    tags: list[Tag] = Field(
        min_length=1, max_length=MAX_TAGS, description="Lowercase keywords: the kind of community, topics, features."
    )
    config: ServerConfig

    @property
    def id(self) -> str:
        return template_id(self.name)

    def stored(self, *, source: Literal["starter", "generated"], created_at: datetime, **origin: Any) -> StoredTemplate:
        """The library's item for this template; `origin` names the job, chunk and position that stored it."""
        return StoredTemplate(
            id=self.id,
            name=self.name,
            description=self.description,
            tags=self.tags,
            configuration=self.config.model_dump(mode="json", exclude_unset=True),
            source=source,
            created_at=created_at,
            **origin,
        )


class Drop(BaseModel):
    position: int
    name: str | None
    reason: str


def vet(raw: Any, position: int = 0) -> TemplateDraft | Drop:
    """A draft that is valid by the schema and clean by the lint, or why not."""
    name = raw.get("name") if isinstance(raw, dict) and isinstance(raw.get("name"), str) else None
    try:
        draft = TemplateDraft.model_validate(raw)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        problem = f"{field_path(tuple(first['loc']))}: {first['msg']}"
        more = len(invalid.errors()) - 1
        return Drop(position=position, name=name, reason=f"invalid: {problem}" + (f" (+{more} more)" if more else ""))
    if not draft.id:
        return Drop(position=position, name=name, reason="invalid: name: has no letters or digits")
    warnings = lint_config(draft.config)
    if warnings:
        return Drop(position=position, name=name, reason=f"unsafe: {warnings[0].rule} at {warnings[0].field}")
    return draft


def vet_all(raws: list[Any]) -> tuple[list[tuple[int, TemplateDraft]], list[Drop]]:
    """Each candidate vetted, and a second one of a name already in this list dropped: (kept, dropped)."""
    kept: list[tuple[int, TemplateDraft]] = []
    dropped: list[Drop] = []
    seen: set[str] = set()
    for position, raw in enumerate(raws):
        outcome = vet(raw, position)
        if isinstance(outcome, Drop):
            dropped.append(outcome)
        elif outcome.id in seen:
            dropped.append(Drop(position=position, name=outcome.name, reason="duplicate name in the same chunk"))
        else:
            seen.add(outcome.id)
            kept.append((position, outcome))
    return kept, dropped
