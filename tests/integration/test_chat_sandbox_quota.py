"""The sandbox's creation quota over HTTP: 250 roles per guild per 48 hours on its own clock, deletions counted,
and past it a 429 with the bucket's headers, as the platform answers (docs/04-chat-platform.md, Rate limits)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from local.chat_sandbox import SandboxServer, SandboxState
from tests.helpers.chat_sandbox import BOT_TOKEN, BUILD_GUILD

WINDOW = 48 * 3600


class Sandbox:
    def __init__(self, server: SandboxServer):
        self.api = server.base_url
        self.control = server.base_url.removesuffix("/api/v10") + "/_sandbox"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bot {BOT_TOKEN}"

    def create_role(self, name: str) -> requests.Response:
        body = json.dumps({"name": name})
        headers = {"Content-Type": "application/json"}
        return self.session.post(f"{self.api}/guilds/{BUILD_GUILD}/roles", data=body, headers=headers, timeout=5)

    def delete_role(self, role_id: str) -> requests.Response:
        return self.session.delete(f"{self.api}/guilds/{BUILD_GUILD}/roles/{role_id}", timeout=5)

    def use_quota(self, **body: Any) -> requests.Response:
        return requests.post(f"{self.control}/guilds/{BUILD_GUILD}/quota", json=body, timeout=5)

    def advance(self, seconds: float) -> dict[str, Any]:
        return requests.post(f"{self.control}/clock", json={"advance_seconds": seconds}, timeout=5).json()


@pytest.fixture
def sandbox(chat_sandbox: SandboxServer, chat_state: SandboxState):
    chat_state.configure(route_limits={"POST /guilds/{guild_id}/roles": None})  # the 5-per-second bucket aside
    caller = Sandbox(chat_sandbox)
    yield caller
    caller.session.close()


def test_past_the_quota_a_role_creation_answers_429_with_the_buckets_headers(sandbox: Sandbox):
    used = sandbox.use_quota(roles=249, age_seconds=3600)
    assert used.json()["roles"] == {
        "limit": 250,
        "used": 249,
        "remaining": 1,
        "reset_after": pytest.approx(WINDOW - 3600, abs=5),
    }

    assert sandbox.create_role("Last one").status_code == 200
    refused = sandbox.create_role("One too many")

    assert refused.status_code == 429
    body = refused.json()
    assert body["global"] is False
    assert body["retry_after"] == pytest.approx(WINDOW - 3600, abs=5)
    assert refused.headers["X-RateLimit-Limit"] == "250"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert float(refused.headers["X-RateLimit-Reset-After"]) == pytest.approx(WINDOW - 3600, abs=5)
    assert refused.headers["X-RateLimit-Scope"] == "user"
    assert "X-RateLimit-Bucket" in refused.headers


def test_a_deleted_role_still_counts_against_the_quota(sandbox: Sandbox):
    sandbox.use_quota(roles=248)
    created = sandbox.create_role("Short-lived").json()
    assert sandbox.delete_role(created["id"]).status_code == 204

    assert sandbox.create_role("The 250th").status_code == 200
    assert sandbox.create_role("The 251st").status_code == 429


def test_moving_the_clock_past_the_window_frees_the_oldest_creations(sandbox: Sandbox, chat_state: SandboxState):
    sandbox.use_quota(roles=200, age_seconds=40 * 3600)
    sandbox.use_quota(roles=50)
    assert sandbox.create_role("Blocked").status_code == 429

    moved = sandbox.advance(8 * 3600 + 1)

    assert moved["offset_seconds"] == 8 * 3600 + 1
    quota = requests.get(f"{sandbox.control}/guilds/{BUILD_GUILD}/quota", timeout=5).json()["roles"]
    assert (quota["used"], quota["remaining"]) == (50, 200)
    assert sandbox.create_role("Free again").status_code == 200
    assert [entry["status"] for entry in chat_state.requests("POST", "/guilds/{guild_id}/roles")] == [429, 200]


def test_the_clock_answers_its_time_and_refuses_a_backward_move(sandbox: Sandbox):
    before = requests.get(f"{sandbox.control}/clock", timeout=5).json()
    refused = requests.post(f"{sandbox.control}/clock", json={"advance_seconds": -5}, timeout=5)

    assert before["offset_seconds"] == 0
    assert refused.status_code == 400
    assert refused.json()["details"][0]["field"] == "advance_seconds"


def test_quota_pre_use_names_a_bad_field(sandbox: Sandbox):
    refused = sandbox.use_quota(roles="many")

    assert refused.status_code == 400
    assert refused.json()["details"][0]["field"] == "roles"


def test_channels_and_categories_share_a_quota_of_500(sandbox: Sandbox, chat_state: SandboxState):
    sandbox.use_quota(channels=499, age_seconds=60)
    headers = {"Content-Type": "application/json"}
    url = f"{sandbox.api}/guilds/{BUILD_GUILD}/channels"

    category = sandbox.session.post(url, data=json.dumps({"name": "Last", "type": 4}), headers=headers, timeout=5)
    refused = sandbox.session.post(url, data=json.dumps({"name": "one-more"}), headers=headers, timeout=5)

    assert category.status_code == 201
    assert refused.status_code == 429
    assert refused.headers["X-RateLimit-Limit"] == "500"
    assert refused.json()["retry_after"] == pytest.approx(WINDOW - 60, abs=5)
    assert chat_state.quota(BUILD_GUILD)["channels"]["used"] == 500
