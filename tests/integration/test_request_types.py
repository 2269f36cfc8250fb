"""A request field is read as the type openapi.json gives it, never coerced: pydantic's lax mode took `0` for false,
`"true"` for true and `"5"` for 5, so a body the document calls invalid was answered 200 (schemathesis ST201).
Each such body is a 400 naming the field, and the value of the right type is accepted (an integer as JSON Schema
has it: 24.0 is one, which pydantic's strict mode would refuse, schemathesis ST202)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.handlers import BOT_TOKEN, bearer

ROOT = Path(__file__).resolve().parents[2]
GUILD = "1187392640113156136"


def _event_body(operation: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.loads((ROOT / "events" / f"{operation}.json").read_text())["body"])
    return body


SCHEDULE = {"action": "schedule", "guild_id": GUILD, "every_hours": 24, "keep": 7}
DEPLOY = _event_body("deployToChat")


def _deploy_with(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    body = copy.deepcopy(DEPLOY)
    target: Any = body["config"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


BOT = {"x-bot-token": BOT_TOKEN}
ADMIN = bearer("admin-1", role="admin")
HEADERS = {"manageBackup": BOT, "getConfigByCode": BOT, "seedTemplates": ADMIN}

# (operation, body, the field the 400 names)
MISTYPED = {
    "schedule members 0": ("manageBackup", {**SCHEDULE, "members": 0}, "members"),
    "schedule members 'true'": ("manageBackup", {**SCHEDULE, "members": "true"}, "members"),
    "schedule every_hours '24'": ("manageBackup", {**SCHEDULE, "every_hours": "24"}, "every_hours"),
    "schedule keep true": ("manageBackup", {**SCHEDULE, "keep": True}, "keep"),
    "schedule keep 1.5": ("manageBackup", {**SCHEDULE, "keep": 1.5}, "keep"),
    "create members 1": ("manageBackup", {"action": "create", "guild_id": GUILD, "members": 1}, "members"),
    "chatAuth replace 1": (
        "chatAuth",
        {"redirect_uri": "http://127.0.0.1:5173/auth/callback", "replace": 1},
        "replace",
    ),
    "getConfigByCode consume 0": ("getConfigByCode", {**_event_body("getConfigByCode"), "consume": 0}, "consume"),
    "seedTemplates count '10'": ("seedTemplates", {"count": "10"}, "count"),
    "deploy dry_run 1": ("deployToChat", {**DEPLOY, "dry_run": 1}, "dry_run"),
    "a role's hoist 1": ("deployToChat", _deploy_with(("roles", 0, "hoist"), 1), "hoist"),
    "a voice channel's user_limit '10'": (
        "deployToChat",
        _deploy_with(("categories", 0, "channels", 1, "user_limit"), "10"),
        "user_limit",
    ),
    "a channel's nsfw 'false'": (
        "deployToChat",
        _deploy_with(("categories", 0, "channels", 0, "nsfw"), "false"),
        "nsfw",
    ),
}


@pytest.mark.parametrize(("operation", "body", "field"), MISTYPED.values(), ids=MISTYPED.keys())
def test_a_value_of_another_type_is_a_400_naming_its_field(invoke, operation, body, field):
    response = invoke(operation, body, headers=HEADERS.get(operation, bearer()))
    assert response.status == 400, response.body
    named = [detail["field"] for detail in response.body["details"]]
    assert any(name.split(".")[-1].split("[")[0] == field for name in named), named


def test_the_same_fields_with_their_own_types_are_accepted(invoke, platform, function_environment):
    function_environment("ManageBackupFunction", "ChatAuthFunction")
    # 24.0 is an integer to JSON Schema (openapi.json), so it is one here too
    scheduled = invoke("manageBackup", {**SCHEDULE, "every_hours": 24.0, "members": False}, headers=BOT)
    assert scheduled.status == 200, scheduled.body
    assert (scheduled.body["schedule"]["every_hours"], scheduled.body["schedule"]["members"]) == (24, False)
    started = invoke(
        "chatAuth", {"redirect_uri": "http://127.0.0.1:5173/auth/callback", "replace": True}, headers=bearer()
    )
    assert started.status == 200, started.body
    assert set(started.body) == {"state", "authorize_url", "expires_at"}
