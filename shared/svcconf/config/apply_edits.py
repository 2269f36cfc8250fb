"""Applying edits (`svcconf.config.edits`) to a server configuration.

`apply_edits(config, edits)` is pure: it returns the edited configuration, validated by the schema, and `changes`
(`[{op, path, old, new}]`, the paths as the configuration's, e.g. `categories[2].channels[5]`). An edit that
does not apply raises `EditsRejected` naming the edit's index and the reason (v4's objects: `community_edits`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from svcconf.config.channels import Category, Channel, Overwrite
from svcconf.config.community_edits import COMMUNITY_KINDS, apply_community_edit, retarget_references
from svcconf.config.community_edits import EditRefused as _Refused
from svcconf.config.edits import NO_ID_EDITS, ConfigChange, Edit, EditResult, EditsRejected
from svcconf.config.permissions import MAX_CHANNELS, MAX_CHANNELS_PER_CATEGORY, MAX_ROLES
from svcconf.config.roles import EVERYONE, Role
from svcconf.config.schema import ServerConfig
from svcconf.errors import FieldError, field_path

_LISTS = ("roles", "categories", "channels")
Loc = tuple[str | int, ...]
Items = list[dict[str, Any]]
_MODELS: dict[str, type[BaseModel]] = {"role": Role, "category": Category, "channel": Channel, "overwrite": Overwrite}


def apply_edits(config: ServerConfig, edits: Sequence[Edit]) -> EditResult:
    """`config` with `edits` applied in order, validated by the schema; `EditsRejected` when one does not apply."""
    data = config.model_dump(mode="json")
    changes: list[ConfigChange] = []
    for index, edit in enumerate(edits):
        try:
            changes.extend(_apply(data, edit))
        except _Refused as exc:
            raise EditsRejected([FieldError(field=f"edits[{index}]", message=str(exc))], applied=index) from None
    try:
        result = ServerConfig.model_validate(data)
    except ValidationError as exc:
        problems = [
            FieldError(field=field_path(tuple(e["loc"])), message=f"after the edits: {e['msg']}")
            for e in exc.errors(include_url=False)[:20]
        ]
        raise EditsRejected(problems, applied=len(edits)) from None
    return EditResult(config=result, changes=changes)


def apply_prefix(config: ServerConfig, edits: Sequence[Edit]) -> tuple[EditResult, int, str | None]:
    """The longest prefix of `edits` that applies (for a cut-off answer): the result, how many edits it holds, and
    why the next one did not apply (None when all did)."""
    count, reason = len(edits), None
    while True:
        try:
            return apply_edits(config, edits[:count]), count, reason
        except EditsRejected as exc:
            count, reason = min(exc.applied, count - 1), exc.problems[0].message


# --- one edit -------------------------------------------------------------------------------------------------


def _apply(data: dict[str, Any], edit: Edit) -> list[ConfigChange]:
    if _carries_id(edit.set):
        raise _Refused(NO_ID_EDITS)
    if edit.kind == "server":
        if edit.op != "update" and edit.op != "rename":
            raise _Refused("the server takes only update (name, description, settings ...) and rename")
        fields = {"name": edit.to} if edit.op == "rename" else _fields(edit, ServerConfig, exclude=_LISTS)
        return _set_fields(data, (), fields, ServerConfig)
    if edit.kind == "overwrite":
        return _apply_overwrite(data, edit)
    if edit.kind in COMMUNITY_KINDS:
        return apply_community_edit(data, edit)
    if edit.op == "add":
        return _add(data, edit)
    holder, loc, index = _find(data, edit)
    item = holder[index]
    path = (*loc, index)
    if edit.op == "remove":
        del holder[index]
        changes = [ConfigChange(op="remove", path=field_path(path), old=item)]
        if edit.kind == "role":
            changes += _retarget_overwrites(data, item["name"], None)
        gone = [c["name"] for c in item["channels"]] if edit.kind == "category" else [item["name"]]
        kind = "role" if edit.kind == "role" else "channel"  # a category's references are its channels'
        return changes + [change for name in gone for change in retarget_references(data, kind, name, None)]
    if edit.op == "rename" or (edit.op == "update" and edit.set and "name" in edit.set):
        new_name = edit.to if edit.op == "rename" else (edit.set or {}).get("name")
        if not isinstance(new_name, str) or not new_name:
            raise _Refused("rename needs `to`, the new name")
        return _rename(data, edit, holder, loc, index, new_name) + (
            _update(edit, holder, path) if edit.op == "update" else []
        )
    if edit.op == "update":
        return _update(edit, holder, path)
    return _move(data, edit, holder, loc, index)


def _carries_id(value: Any) -> bool:
    """An `id` anywhere in what an edit sets (a category's channels carry their own)."""
    if isinstance(value, dict):
        return "id" in value or any(_carries_id(item) for item in value.values())
    return isinstance(value, list) and any(_carries_id(item) for item in value)


def _fields(edit: Edit, model: type[BaseModel], exclude: Sequence[str] = ()) -> dict[str, Any]:
    fields = dict(edit.set or {})
    if not fields:
        raise _Refused(f"{edit.op} needs `set`, the fields to set")
    unknown = [key for key in fields if key not in model.model_fields or key in exclude]
    if unknown:
        raise _Refused(f"{model.__name__} has no field {', '.join(map(repr, unknown))} to set")
    return fields


def _set_fields(
    target: dict[str, Any], path: Loc, fields: dict[str, Any], model: type[BaseModel]
) -> list[ConfigChange]:
    merged = {**target, **fields}
    if model is not ServerConfig:  # the whole configuration is validated once, after the last edit
        merged = _validated(model, merged)
    changes = []
    for key in fields:
        if target.get(key) != merged.get(key):
            changes.append(
                ConfigChange(op="update", path=field_path((*path, key)), old=target.get(key), new=merged.get(key))
            )
        target[key] = merged.get(key)
    return changes


def _validated(model: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    try:
        return model.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        # Only ServerConfig, never validated here, has rules across fields: each error names its field.
        first = exc.errors(include_url=False)[0]
        raise _Refused(f"{field_path(tuple(first['loc']))}: {first['msg']}") from None


def _add(data: dict[str, Any], edit: Edit) -> list[ConfigChange]:
    loc: Loc
    fields = dict(edit.set or {})
    if edit.name is not None:
        fields.setdefault("name", edit.name)
    if edit.kind == "role":
        if len(data["roles"]) >= MAX_ROLES:
            raise _Refused(f"the configuration already has {MAX_ROLES} roles, the platform's limit")
        holder, loc = data["roles"], ("roles",)
    elif edit.kind == "category":
        holder, loc = data["categories"], ("categories",)
    else:
        holder, loc = _channel_list(data, edit.cat)
        if edit.cat and len(holder) >= MAX_CHANNELS_PER_CATEGORY:
            raise _Refused(f"category '{edit.cat}' already holds {MAX_CHANNELS_PER_CATEGORY} channels")
    if edit.kind != "role" and _channel_count(data) >= MAX_CHANNELS:
        raise _Refused(f"the configuration already has {MAX_CHANNELS} channels (categories included)")
    item = _validated(_MODELS[edit.kind], fields)
    if _position(holder, item["name"]) is not None:
        raise _Refused(f"a {edit.kind} named '{item['name']}' already exists there; update it instead")
    at = _insert_at(holder, edit.at)
    holder.insert(at, item)
    return [ConfigChange(op="add", path=field_path((*loc, at)), new=item)]


def _update(edit: Edit, holder: Items, path: Loc) -> list[ConfigChange]:
    # A name in `set` has been applied by _rename: setting it again changes and reports nothing.
    return _set_fields(holder[int(path[-1])], path, _fields(edit, _MODELS[edit.kind]), _MODELS[edit.kind])


def _rename(data: dict[str, Any], edit: Edit, holder: Items, loc: Loc, index: int, new_name: str) -> list[ConfigChange]:
    item = holder[index]
    old_name = item["name"]
    other = _position(holder, new_name)
    if other is not None and other != index:
        raise _Refused(f"a {edit.kind} named '{new_name}' already exists")
    if edit.kind == "role" and new_name.casefold() == EVERYONE:
        raise _Refused("'@everyone' is the platform's built-in role")
    item["name"] = _validated(_MODELS[edit.kind], {**item, "name": new_name})["name"]
    changes = [ConfigChange(op="rename", path=field_path((*loc, index, "name")), old=old_name, new=item["name"])]
    if edit.kind == "role":
        changes += _retarget_overwrites(data, old_name, item["name"])
    return changes + retarget_references(data, edit.kind, old_name, item["name"])


def _move(data: dict[str, Any], edit: Edit, holder: Items, loc: Loc, index: int) -> list[ConfigChange]:
    old_path = field_path((*loc, index))
    item = holder.pop(index)
    old_category = loc
    if edit.kind == "channel" and edit.to is not None:
        holder, loc = _channel_list(data, edit.to)
        if edit.to and len(holder) >= MAX_CHANNELS_PER_CATEGORY:
            raise _Refused(f"category '{edit.to}' already holds {MAX_CHANNELS_PER_CATEGORY} channels")
        if _position(holder, item["name"]) is not None:
            raise _Refused(f"category '{edit.to}' already has a channel named '{item['name']}'")
    at = _insert_at(holder, edit.at)
    holder.insert(at, item)
    changes = [ConfigChange(op="move", path=field_path((*loc, at)), old=old_path, new=item["name"])]
    if loc != old_category:  # a channel moved to another category (a category's loc stays ("categories",))
        old, new = _category_overwrites(data, old_category), _category_overwrites(data, loc)
        changes += _keep_access_on_move(item, old, new, (*loc, at))
    return changes


def _category_overwrites(data: dict[str, Any], channels_loc: Loc) -> dict[str, dict[str, Any]]:
    """The overwrites by role of the category whose channel list is at `channels_loc` (none outside any)."""
    if channels_loc[0] != "categories":
        return {}
    return {o["role"]: o for o in data["categories"][int(channels_loc[1])].get("overwrites") or []}


def _keep_access_on_move(
    channel: dict[str, Any], old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], loc: Loc
) -> list[ConfigChange]:
    """A channel with overwrites of its own keeps who can do what in it when it moves (as the platform keeps a
    moved channel's overwrites): what it had from its old category becomes its own, and a role the new category
    has an overwrite for gets a neutral one; what equals the new category's is left to it. A channel without
    overwrites of its own follows its new category."""
    own = channel.get("overwrites") or []
    if not own:
        return []
    had = old | {o["role"]: o for o in own}
    kept = {role: {"role": role, "allow": [], "deny": []} for role in new} | had
    overwrites = [o for role, o in kept.items() if not _same_grant(new.get(role), o)]
    if _same_overwrites(overwrites, own):
        return []
    channel["overwrites"] = overwrites
    return [ConfigChange(op="update", path=field_path((*loc, "overwrites")), old=own, new=overwrites)]


def _grant(overwrite: dict[str, Any] | None) -> tuple[frozenset[str], frozenset[str]] | None:
    """What an overwrite allows and denies, whatever the order of its lists (None: no overwrite)."""
    if overwrite is None:
        return None
    return frozenset(overwrite.get("allow") or []), frozenset(overwrite.get("deny") or [])


def _same_grant(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    return _grant(a) == _grant(b)


def _same_overwrites(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    return {o["role"]: _grant(o) for o in a} == {o["role"]: _grant(o) for o in b}


def _apply_overwrite(data: dict[str, Any], edit: Edit) -> list[ConfigChange]:
    index = _position(data["categories"], edit.cat) if edit.cat and edit.ch is None else None
    if index is None:  # a channel's, or refused below
        return _edit_overwrite(data, edit)
    category, role = data["categories"][index], edit.name or (edit.set or {}).get("role") or ""
    before = _role_overwrite(category, role)
    changes = _edit_overwrite(data, edit)
    return changes + _keep_channels_closed(category, index, before, _role_overwrite(category, role))


def _role_overwrite(holder: dict[str, Any], role: str) -> dict[str, Any]:
    """The holder's overwrite for the role, or a neutral one."""
    found = next((o for o in holder.get("overwrites") or [] if o["role"] == role), None)
    return dict(found) if found else {"role": role, "allow": [], "deny": []}


def _keep_channels_closed(
    category: dict[str, Any], index: int, before: dict[str, Any], after: dict[str, Any]
) -> list[ConfigChange]:
    """A channel's overwrites are its category's with its own replacing them, so a category's overwrite reaches
    every channel without one for that role. Where the edit grants more (allows more, or denies less) and the
    channel has overwrites of its own (it is not simply its category's: a private channel, say), the channel keeps
    the role's overwrite as it was, the category's old one or a neutral one; what only takes away reaches all."""
    allows_more = set(after.get("allow") or []) - set(before.get("allow") or [])
    denies_less = set(before.get("deny") or []) - set(after.get("deny") or [])
    if not (allows_more or denies_less):
        return []
    changes = []
    for n, channel in enumerate(category.get("channels") or []):
        own = channel["overwrites"]
        if own and all(o["role"] != before["role"] for o in own):
            own.append(dict(before))
            path = field_path(("categories", index, "channels", n, "overwrites", len(own) - 1))
            changes.append(ConfigChange(op="add", path=path, new=dict(before)))
    return changes


def _edit_overwrite(data: dict[str, Any], edit: Edit) -> list[ConfigChange]:
    if edit.ch is not None:
        channels, loc = _channel_list(data, edit.cat)
        index = _position(channels, edit.ch)
        if index is None:
            raise _Refused(_missing("channel", edit.ch, edit.cat))
        target, loc = channels[index], (*loc, index)
    elif edit.cat is not None:
        index = _position(data["categories"], edit.cat)
        if index is None:
            raise _Refused(_missing("category", edit.cat, None))
        target, loc = data["categories"][index], ("categories", index)
    else:
        raise _Refused("an overwrite is addressed by `cat` (a category) and/or `ch` (a channel in `cat`)")
    role = edit.name or (edit.set or {}).get("role")
    if not role:
        raise _Refused("an overwrite edit names its role in `name`")
    if role != EVERYONE and all(r["name"] != role for r in data["roles"]):
        raise _Refused(f"no role named '{role}' (overwrites name a role of the configuration, or '@everyone')")
    overwrites = target["overwrites"]
    position = next((i for i, o in enumerate(overwrites) if o["role"] == role), None)
    where = (*loc, "overwrites")
    if edit.op == "add" or (edit.op == "update" and position is None):
        if position is not None:
            raise _Refused(f"an overwrite for '{role}' already exists there; update it instead")
        item = _validated(Overwrite, {**(edit.set or {}), "role": role})
        overwrites.append(item)
        return [ConfigChange(op="add", path=field_path((*where, len(overwrites) - 1)), new=item)]
    if position is None:
        raise _Refused(f"no overwrite for '{role}' there")
    if edit.op == "remove":
        old = overwrites.pop(position)
        return [ConfigChange(op="remove", path=field_path((*where, position)), old=old)]
    if edit.op != "update":
        raise _Refused("an overwrite takes add, update or remove")
    fields = {k: v for k, v in _fields(edit, Overwrite).items() if k != "role"}
    return _set_fields(overwrites[position], (*where, position), fields, Overwrite)


# --- finding things by name -----------------------------------------------------------------------------------


def _position(items: list[dict[str, Any]], name: str) -> int | None:
    """By the exact name, else ignoring case (role names are unique ignoring case, the schema: one match at most)."""
    exact = next((i for i, item in enumerate(items) if item["name"] == name), None)
    folded = name.casefold()
    return (
        exact if exact is not None else next((i for i, it in enumerate(items) if it["name"].casefold() == folded), None)
    )


def _channel_list(data: dict[str, Any], category: str | None) -> tuple[list[dict[str, Any]], tuple[str | int, ...]]:
    if not category:
        return data["channels"], ("channels",)
    index = _position(data["categories"], category)
    if index is None:
        raise _Refused(_missing("category", category, None))
    return data["categories"][index]["channels"], ("categories", index, "channels")


def _find(data: dict[str, Any], edit: Edit) -> tuple[list[dict[str, Any]], tuple[str | int, ...], int]:
    if not edit.name:
        raise _Refused(f"{edit.op} {edit.kind} needs `name`")
    if edit.kind == "channel":
        holder, loc = _channel_list(data, edit.cat)
    else:
        key = "roles" if edit.kind == "role" else "categories"
        holder, loc = data[key], (key,)
    index = _position(holder, edit.name)
    if index is None:
        raise _Refused(_missing(edit.kind, edit.name, edit.cat if edit.kind == "channel" else None))
    return holder, loc, index


def _missing(kind: str, name: str, category: str | None) -> str:
    where = f" in category '{category}'" if category else (" outside the categories" if kind == "channel" else "")
    return f"no {kind} named '{name}'{where}"


def _channel_count(data: dict[str, Any]) -> int:
    """As the platform counts against its limit: categories included (ServerConfig.channel_count's rule)."""
    return len(data["categories"]) + sum(len(c["channels"]) for c in data["categories"]) + len(data["channels"])


def _insert_at(holder: list[Any], at: int | None) -> int:
    return len(holder) if at is None else max(0, min(at, len(holder)))


def _holders(data: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    for c, category in enumerate(data["categories"]):
        yield ("categories", c), category
        for n, channel in enumerate(category["channels"]):
            yield ("categories", c, "channels", n), channel
    for n, channel in enumerate(data["channels"]):
        yield ("channels", n), channel


def _retarget_overwrites(data: dict[str, Any], old: str, new: str | None) -> list[ConfigChange]:
    """The overwrites that name role `old` renamed to `new`, or removed (None)."""
    changes = []
    for loc, holder in _holders(data):
        overwrites = holder.get("overwrites") or []
        for i in reversed(range(len(overwrites))):
            if overwrites[i]["role"] != old:
                continue
            path = field_path((*loc, "overwrites", i))
            if new is None:
                changes.append(ConfigChange(op="remove", path=path, old=overwrites.pop(i)))
            else:
                overwrites[i] = {**overwrites[i], "role": new}
                changes.append(ConfigChange(op="update", path=f"{path}.role", old=old, new=new))
    return changes
