"""Edits to configuration version 4's objects (`svcconf.config.community`), applied by `svcconf.config.apply_edits`.

- kind `automod`: an AutoMod rule, addressed by its `name` (add, update, remove, rename, move), so "turn off the
  invite-link filter" is one `update` with `{"enabled": false}`, never the rules written again;
- kind `prompt`: an onboarding question, addressed by its title in `name` (add, update, remove, rename, move);
- kind `onboarding`: onboarding's own fields (`enabled`, `mode`, `default_channels`: update; remove drops it).
The welcome screen is small (five channels at most): it is a field of the server (`kind: server`).

Renaming or removing a role or a channel elsewhere keeps these objects' references to it right
(`retarget_references`): a rename follows, a removal drops the reference (an alert action whose channel is gone
goes, and a rule left without actions with it), as a removal drops the overwrites that name a role.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from svcconf.config.community import AutomodRule, Onboarding, OnboardingPrompt
from svcconf.config.edits import ConfigChange, Edit
from svcconf.errors import field_path

COMMUNITY_KINDS = ("automod", "prompt", "onboarding")
Loc = tuple[str | int, ...]


class EditRefused(Exception):
    """An edit that does not apply; its message says why (apply_edits names the edit)."""


def apply_community_edit(data: dict[str, Any], edit: Edit) -> list[ConfigChange]:
    if edit.kind == "onboarding":
        return _onboarding(data, edit)
    if edit.kind == "automod":
        data["automod"] = data.get("automod") or []
        return _named(data["automod"], ("automod",), "name", AutomodRule, edit)
    if data.get("onboarding") is None:
        if edit.op != "add":
            raise EditRefused("the configuration has no onboarding yet: add a prompt first")
        data["onboarding"] = Onboarding().model_dump(mode="json")
    return _named(data["onboarding"]["prompts"], ("onboarding", "prompts"), "title", OnboardingPrompt, edit)


def _onboarding(data: dict[str, Any], edit: Edit) -> list[ConfigChange]:
    old = data.get("onboarding")
    if edit.op == "remove":
        if old is None:
            raise EditRefused("the configuration has no onboarding to remove")
        data["onboarding"] = None
        return [ConfigChange(op="remove", path="onboarding", old=old)]
    if edit.op != "update":
        raise EditRefused(
            "onboarding takes update (enabled, mode, default_channels) and remove; prompts are kind prompt"
        )
    fields = _fields(edit, Onboarding, exclude=("prompts",))
    target = old if old is not None else Onboarding().model_dump(mode="json")
    data["onboarding"] = target
    return _set(target, ("onboarding",), fields, Onboarding)


def _named(items: list[dict[str, Any]], loc: Loc, key: str, model: type[BaseModel], edit: Edit) -> list[ConfigChange]:
    """An add, update, remove, rename or move of the item of `items` whose `key` is the edit's `name`."""
    what = "an AutoMod rule" if edit.kind == "automod" else "an onboarding prompt"
    if not edit.name:
        raise EditRefused(f"{edit.op} {edit.kind} needs `name` ({what}'s {key})")
    index = _position(items, key, edit.name)
    if edit.op == "add":
        if index is not None:
            raise EditRefused(f"{what} named '{edit.name}' already exists; update it instead")
        item = _validated(model, {key: edit.name, **(edit.set or {})})
        at = len(items) if edit.at is None else max(0, min(edit.at, len(items)))
        items.insert(at, item)
        return [ConfigChange(op="add", path=field_path((*loc, at)), new=item)]
    if index is None:
        raise EditRefused(f"there is no {what.removeprefix('an ')} named '{edit.name}'")
    if edit.op == "remove":
        return [ConfigChange(op="remove", path=field_path((*loc, index)), old=items.pop(index))]
    if edit.op == "rename":
        if not edit.to:
            raise EditRefused("rename needs `to`, the new name")
        other = _position(items, key, edit.to)
        if other is not None and other != index:
            raise EditRefused(f"{what} named '{edit.to}' already exists")
        old_name = items[index][key]
        items[index] = _validated(model, {**items[index], key: edit.to})
        return [ConfigChange(op="rename", path=field_path((*loc, index, key)), old=old_name, new=edit.to)]
    if edit.op == "move":
        item = items.pop(index)
        at = len(items) if edit.at is None else max(0, min(edit.at, len(items)))
        items.insert(at, item)
        return [ConfigChange(op="move", path=field_path((*loc, at)), old=field_path((*loc, index)), new=item[key])]
    return _set(items[index], (*loc, index), _fields(edit, model), model)


def _fields(edit: Edit, model: type[BaseModel], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    fields = dict(edit.set or {})
    if not fields:
        raise EditRefused(f"{edit.op} needs `set`, the fields to set")
    unknown = [name for name in fields if name not in model.model_fields or name in exclude]
    if unknown:
        raise EditRefused(f"{model.__name__} has no field {', '.join(map(repr, unknown))} to set")
    return fields


def _set(target: dict[str, Any], loc: Loc, fields: dict[str, Any], model: type[BaseModel]) -> list[ConfigChange]:
    merged = _validated(model, {**target, **fields})
    changes = [
        ConfigChange(op="update", path=field_path((*loc, name)), old=target.get(name), new=merged.get(name))
        for name in fields
        if target.get(name) != merged.get(name)
    ]
    target.update({name: merged.get(name) for name in fields})
    return changes


def _validated(model: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    try:
        return model.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise EditRefused(f"{field_path(tuple(first['loc']))}: {first['msg']}") from None


def _position(items: list[dict[str, Any]], key: str, name: str) -> int | None:
    """By the exact name, else ignoring case."""
    exact = next((i for i, item in enumerate(items) if item[key] == name), None)
    if exact is not None:
        return exact
    return next((i for i, item in enumerate(items) if item[key].casefold() == name.casefold()), None)


# --- references to roles and channels --------------------------------------------------------------------------


def retarget_references(data: dict[str, Any], kind: str, old: str, new: str | None) -> list[ConfigChange]:
    """The v4 objects' references to the role or channel `old` renamed to `new`, or dropped (None); a channel's only
    when no other channel of the configuration still has that name."""
    if kind not in ("role", "channel") or (kind == "channel" and any(c["name"] == old for c in _channels(data))):
        return []
    changes: list[ConfigChange] = []
    for loc, names in _reference_lists(data, kind):
        for i in reversed(range(len(names))):
            if names[i] != old:
                continue
            path = field_path((*loc, i))
            if new is None:
                changes.append(ConfigChange(op="remove", path=path, old=names.pop(i)))
            else:
                names[i] = new
                changes.append(ConfigChange(op="update", path=path, old=old, new=new))
    if kind == "channel":
        changes += _retarget_channel_objects(data, old, new)
    return changes


def _channels(data: dict[str, Any]) -> list[dict[str, Any]]:
    inside: list[dict[str, Any]] = [channel for category in data["categories"] for channel in category["channels"]]
    return inside + list(data["channels"])


def _reference_lists(data: dict[str, Any], kind: str) -> list[tuple[Loc, list[str]]]:
    found: list[tuple[Loc, list[str]]] = []
    onboarding = data.get("onboarding")
    if onboarding is not None:
        if kind == "channel":
            found.append((("onboarding", "default_channels"), onboarding["default_channels"]))
        for p, prompt in enumerate(onboarding["prompts"]):
            for o, option in enumerate(prompt["options"]):
                field = "roles" if kind == "role" else "channels"
                found.append((("onboarding", "prompts", p, "options", o, field), option[field]))
    for r, rule in enumerate(data.get("automod") or []):
        field = "exempt_roles" if kind == "role" else "exempt_channels"
        found.append((("automod", r, field), rule[field]))
    return found


def _retarget_channel_objects(data: dict[str, Any], old: str, new: str | None) -> list[ConfigChange]:
    """Alert actions and welcome-screen entries that name the channel: renamed, or dropped."""
    changes: list[ConfigChange] = []
    rules = data.get("automod") or []
    for r in reversed(range(len(rules))):
        actions = rules[r]["actions"]
        for a in reversed(range(len(actions))):
            if actions[a].get("channel") != old:
                continue
            path = field_path(("automod", r, "actions", a))
            if new is not None:
                actions[a]["channel"] = new
                changes.append(ConfigChange(op="update", path=f"{path}.channel", old=old, new=new))
            else:
                changes.append(ConfigChange(op="remove", path=path, old=actions.pop(a)))
        if not actions:  # an alert-only rule whose channel is gone does nothing
            changes.append(ConfigChange(op="remove", path=field_path(("automod", r)), old=rules.pop(r)))
    screen = data.get("welcome_screen")
    entries = screen["channels"] if screen is not None else []
    for i in reversed(range(len(entries))):
        if entries[i]["channel"] != old:
            continue
        path = field_path(("welcome_screen", "channels", i))
        if new is not None:
            entries[i]["channel"] = new
            changes.append(ConfigChange(op="update", path=f"{path}.channel", old=old, new=new))
        else:
            changes.append(ConfigChange(op="remove", path=path, old=entries.pop(i)))
    return changes
