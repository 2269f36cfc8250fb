"""The sandbox's control API (`/_sandbox/...`) over HTTP: views, settings, and errors in the service's body."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from local.chat_sandbox import SandboxServer, SandboxState
from svcconf.chat import ChatClient
from tests.helpers.chat_sandbox import (
    ALICE_ID,
    BOB_GUILD,
    BOB_ID,
    BOT_ID,
    BUILD_GUILD,
    CAROL_ID,
    DAVE_ID,
    DEMO_GUILD,
    LOCKED_GUILD,
    QUIET_GUILD,
    REDIRECT_URI,
    RIGHTS_LAB,
)


@pytest.fixture
def control(chat_sandbox: SandboxServer, chat_state: SandboxState) -> str:
    """The control API's root, e.g. http://127.0.0.1:PORT/_sandbox."""
    return chat_sandbox.base_url.removesuffix("/api/v10") + "/_sandbox"


def without_request_id(answer: requests.Response) -> dict[str, Any]:
    """An error body less its requestId, which every error carries, in the body and as x-request-id."""
    body = answer.json()
    assert body.pop("requestId") == answer.headers["x-request-id"]
    return body


def bad_request(message: str, *details: tuple[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {"error": "Bad Request", "message": message, "code": 400}
    if details:
        body["details"] = [{"field": field, "message": text} for field, text in details]
    return body


# -- errors -----------------------------------------------------------------------------------------------


def test_a_missing_field_is_named_in_the_services_error_body(control: str):
    answer = requests.post(f"{control}/oauth/codes", json={}, timeout=5)
    assert (answer.status_code, without_request_id(answer)) == (
        400,
        bad_request("Invalid request: user_id: Field required.", ("user_id", "Field required")),
    )


def test_an_unknown_user_is_refused_on_user_id(control: str):
    answer = requests.post(f"{control}/oauth/codes", json={"user_id": "1191000000000000999"}, timeout=5)
    assert answer.status_code == 400
    assert [detail["field"] for detail in answer.json()["details"]] == ["user_id"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{nope", bad_request("The body is not valid JSON.", ("body", "is not valid JSON"))),
        (b"[1]", bad_request("The body must be a JSON object.", ("body", "must be a JSON object"))),
    ],
)
def test_a_body_that_is_no_json_object_is_refused(control: str, raw: bytes, expected: dict[str, Any]):
    answer = requests.post(f"{control}/config", data=raw, headers={"Content-Type": "application/json"}, timeout=5)
    assert (answer.status_code, without_request_id(answer)) == (400, expected)


def test_unknown_endpoints_and_methods(control: str):
    unknown = requests.get(f"{control}/nothing-here", timeout=5)
    assert (unknown.status_code, unknown.json()["error"], unknown.json()["code"]) == (404, "Not Found", 404)
    wrong_method = requests.get(f"{control}/reset", timeout=5)
    assert (wrong_method.status_code, wrong_method.headers["Allow"], wrong_method.json()["error"]) == (
        405,
        "POST",
        "Method Not Allowed",
    )


# -- settings, codes, reset --------------------------------------------------------------------------------


def test_settings_are_validated_by_name_and_value(control: str, chat_state: SandboxState):
    refused = requests.post(f"{control}/config", json={"rate_limit_probability": 2, "rate_limits": 1}, timeout=5)
    assert refused.status_code == 400
    assert sorted(detail["field"] for detail in refused.json()["details"]) == ["rate_limit_probability", "rate_limits"]
    assert chat_state.config.rate_limit_probability == 0.0  # nothing changed
    accepted = requests.post(f"{control}/config", json={"rate_limit_probability": 0.25, "seed": 3}, timeout=5)
    assert (accepted.status_code, accepted.json()["rate_limit_probability"], accepted.json()["seed"]) == (200, 0.25, 3)


def test_a_minted_code_signs_the_user_in_once(control: str, chat_client: ChatClient):
    minted = requests.post(f"{control}/oauth/codes", json={"user_id": BOB_ID}, timeout=5)
    assert minted.status_code == 201
    grant = chat_client.exchange_code(minted.json()["code"], REDIRECT_URI)
    assert chat_client.get_current_user(grant.access_token.get_secret_value()).id == BOB_ID


def test_reset_restores_the_fixture_and_on_request_the_settings(
    control: str, chat_client: ChatClient, chat_state: SandboxState
):
    chat_client.create_channel(BUILD_GUILD, {"name": "scratch"})
    chat_state.configure(latency_seconds=0.01)
    refused = requests.post(f"{control}/reset", json={"config": "yes"}, timeout=5)
    assert [detail["field"] for detail in refused.json()["details"]] == ["config"]
    assert requests.post(f"{control}/reset", timeout=5).status_code == 204
    assert (chat_state.guild(BUILD_GUILD)["channels"], chat_state.config.latency_seconds) == ({}, 0.01)
    assert requests.post(f"{control}/reset", json={"config": True}, timeout=5).status_code == 204
    assert chat_state.config.latency_seconds == 0.0


# -- views ---------------------------------------------------------------------------------------------------


def test_users_lists_who_owns_or_manages_which_guild(control: str):
    answer = requests.get(f"{control}/users", timeout=5)
    assert answer.status_code == 200
    body = answer.json()
    assert body["bot"] == {"id": BOT_ID, "username": "svc-sandbox-bot"}
    users = {user["username"]: user for user in body["users"]}
    assert list(users) == ["alice", "bob", "carol", "dave"]
    assert users["alice"]["id"] == ALICE_ID
    manages = {name: {g["id"]: (g["owner"], g["bot_present"]) for g in user["manages"]} for name, user in users.items()}
    assert manages == {
        "alice": {
            DEMO_GUILD: (True, True),
            QUIET_GUILD: (False, False),  # ADMINISTRATOR through a role
            LOCKED_GUILD: (False, True),  # MANAGE_GUILD through a role
            BUILD_GUILD: (True, True),
            RIGHTS_LAB: (False, True),  # ADMINISTRATOR through a role
        },
        # the demo guild's Moderator has MANAGE_GUILD, and the rights lab's Managers
        "bob": {DEMO_GUILD: (False, True), BOB_GUILD: (True, True), RIGHTS_LAB: (False, True)},
        "carol": {QUIET_GUILD: (True, False), LOCKED_GUILD: (True, True), RIGHTS_LAB: (True, True)},
        "dave": {RIGHTS_LAB: (False, True)},  # MANAGE_GUILD under the lab's lowest role
    }
    assert {user["id"] for user in body["users"]} == {ALICE_ID, BOB_ID, CAROL_ID, DAVE_ID}


def test_a_guild_view_shows_the_live_state(control: str, chat_client: ChatClient):
    # Given a deploy-like sequence in the build guild
    category = chat_client.create_channel(BUILD_GUILD, {"name": "Team", "type": 4})
    role = chat_client.create_role(BUILD_GUILD, {"name": "Crew", "permissions": 1024, "color": 0xABCDEF, "hoist": True})
    chat_client.create_channel(
        BUILD_GUILD,
        {
            "name": "Daily Notes",
            "parent_id": category.id,
            "topic": "notes",
            "rate_limit_per_user": 10,
            "permission_overwrites": [{"id": role.id, "type": 0, "allow": 2048}],
        },
    )
    # When the guild is read from the control API
    answer = requests.get(f"{control}/guilds/{BUILD_GUILD}", timeout=5)
    # Then it shows roles and channels with the fields a deploy sets
    assert answer.status_code == 200
    guild = answer.json()
    assert (guild["name"], guild["owner_id"], guild["bot_present"]) == ("Alice's Build Lab", ALICE_ID, True)
    assert [(r["name"], r["position"], r["managed"]) for r in guild["roles"]] == [
        ("@everyone", 0, False),
        ("Crew", 1, False),
        ("svc-sandbox-bot", 2, True),
    ]
    crew = guild["roles"][1]
    assert (crew["permissions"], crew["color"], crew["hoist"], crew["mentionable"]) == ("1024", 0xABCDEF, True, False)
    team, notes = guild["channels"]
    assert (team["name"], team["type"], team["parent_id"]) == ("Team", 4, None)
    assert notes == {
        "id": notes["id"],
        "type": 0,
        "name": "daily-notes",
        "parent_id": category.id,
        "position": 0,
        "topic": "notes",
        "nsfw": False,
        "rate_limit_per_user": 10,
        "user_limit": None,
        "bitrate": None,
        "video_quality_mode": None,
        "flags": 0,
        "permission_overwrites": [{"id": role.id, "type": 0, "allow": "2048", "deny": "0"}],
    }
    assert guild["settings"] == {
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "afk_channel_id": None,
        "afk_timeout": 300,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "preferred_locale": "en-US",
        "description": "An empty guild for deploys: the bot holds every permission but ADMINISTRATOR.",
    }


def test_an_unknown_guild_view_is_404(control: str):
    answer = requests.get(f"{control}/guilds/1191000000000001999", timeout=5)
    assert (answer.status_code, answer.json()["error"]) == (404, "Not Found")
