"""Near-miss field names: `current_config` for `currentConfig`, `Guild_ID` for `guild_id` (docs/03-api.md, Transport).

Unknown fields of a request are ignored, which is right for an extra field and wrong for a misspelt real one: the
user's work would be dropped without a word. A field that differs from a known one only in case or `_` is
therefore refused, with the right name. The known names come from the request models themselves (a model's
fields and aliases, through unions, lists and nested models), so there is no list to keep by hand. A field typed
as a plain object that holds a model's shape (svcAiChat's `currentConfig`) says so with `ShapedAs`.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class ShapedAs:
    """Metadata for a free-form object field whose content is meant to be `model` (checked for near misses only)."""

    model: type[BaseModel]


@dataclass(frozen=True)
class NearMiss:
    loc: Loc
    name: str  # as sent
    meant: str  # the known field's name

    @property
    def message(self) -> str:
        return f"is not a field; did you mean `{self.meant}`?"


def _folded(name: str) -> str:
    return name.replace("_", "").casefold()


def near_misses(annotation: Any, value: Any, loc: Loc = ()) -> list[NearMiss]:
    """Every key of `value` (the request body, or a part of it) that is a near miss of a field `annotation` knows."""
    found: dict[Loc, NearMiss] = {}
    for miss in _walk(annotation, value, loc):
        found.setdefault(miss.loc, miss)
    return list(found.values())


def _walk(annotation: Any, value: Any, loc: Loc) -> Iterator[NearMiss]:
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = get_args(annotation)
        shaped = next((meta.model for meta in metadata if isinstance(meta, ShapedAs)), None)
        yield from _walk(shaped or inner, value, loc)
    elif origin in (Union, types.UnionType):
        yield from _walk_union(get_args(annotation), value, loc)
    elif origin is list and isinstance(value, list):
        (item,) = get_args(annotation) or (Any,)
        for index, element in enumerate(value):
            yield from _walk(item, element, (*loc, index))
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
        yield from _walk_model(annotation, value, loc)


def _walk_union(members: tuple[Any, ...], value: Any, loc: Loc) -> Iterator[NearMiss]:
    """The members the value can still be (a discriminator such as `action` picks one); a key is a near miss only
    when none of them knows it."""
    candidates = [member for member in members if _may_be(member, value)]
    models = [member for member in candidates if isinstance(member, type) and issubclass(member, BaseModel)]
    if not models or not isinstance(value, dict):
        for member in candidates:
            yield from _walk(member, value, loc)
        return
    known = {name for model in models for name in _field_names(model)}
    for model in models:
        for miss in _walk_model(model, value, loc):
            if miss.loc[:-1] != loc or miss.name not in known:
                yield miss


def _may_be(member: Any, value: Any) -> bool:
    """False when a `Literal` field of the model (a discriminator) holds another value in `value`."""
    if not (isinstance(member, type) and issubclass(member, BaseModel) and isinstance(value, dict)):
        return True
    for name, field in member.model_fields.items():
        if get_origin(field.annotation) is Literal and name in value and value[name] not in get_args(field.annotation):
            return False
    return True


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """Every name the model knows (its fields, then their aliases) -> the field's own name. A near miss is told the
    last of them that folds alike: an alias, which is what a caller sends."""
    names: dict[str, str] = {}
    for name, field in model.model_fields.items():
        names[name] = name
        for alias in (field.alias, field.validation_alias):
            if isinstance(alias, str):
                names[alias] = name
    return names


def _walk_model(model: type[BaseModel], value: Mapping[str, Any], loc: Loc) -> Iterator[NearMiss]:
    names = _field_names(model)
    folded = {_folded(name): name for name in names}
    for key, content in value.items():
        if not isinstance(key, str):
            continue
        if key in names:
            field = model.model_fields[names[key]]
            annotation = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
            yield from _walk(annotation, content, (*loc, key))
        elif _folded(key) in folded:
            yield NearMiss(loc=(*loc, key), name=key, meant=folded[_folded(key)])
