"""Fixtures for tests that talk to the chat-platform sandbox over real loopback HTTP.

tests/integration/conftest.py imports the fixtures. (PYTEST_DONT_REWRITE: the test modules import its
constants before pytest loads it as a plugin, and it holds no assertions.)
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from local.chat_sandbox import SandboxServer, SandboxState, start_sandbox
from svcconf.chat import ChatClient
from svcconf.settings import Settings

# The sandbox fixture's dev values (local/chat_sandbox/fixture.json).
BOT_TOKEN = "dev-bot-token"
CLIENT_ID = "1191000000000000001"
CLIENT_SECRET = "dev-client-secret"
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
BOT_ID = "1191000000000000001"
ALICE_ID, BOB_ID, CAROL_ID = "1191000000000000101", "1191000000000000102", "1191000000000000103"
DAVE_ID = "1191000000000000104"  # a manager under the rights lab's lowest role
ALICE_TOKEN, BOB_EXPIRED_TOKEN, CAROL_TOKEN = "dev-access-alice", "dev-access-bob-expired", "dev-access-carol"
ALICE_REFRESH, BOB_REFRESH = "dev-refresh-alice", "dev-refresh-bob"
ALICE_CODE, BOB_CODE = "dev-code-alice", "dev-code-bob"
DEMO_GUILD = "1191000000000001001"  # bot present with deploy permissions; alice owns it
BOB_GUILD = "1191000000000001002"  # bot present as ADMINISTRATOR; alice is a plain member
QUIET_GUILD = "1191000000000001003"  # bot absent; alice is ADMINISTRATOR there
LOCKED_GUILD = "1191000000000001004"  # bot present without MANAGE_ROLES/MANAGE_CHANNELS
BUILD_GUILD = "1191000000000001005"  # empty, for deploys: alice owns it; the bot holds all but ADMINISTRATOR
RIGHTS_LAB = "1191000000000001006"  # carol owns it; callers of every standing (docs/04-chat-platform.md, "Users")
INFO_CATEGORY = "1191000000000003011"  # a category of DEMO_GUILD
QUIET_GENERAL = "1191000000000003031"  # a text channel of QUIET_GUILD
SECRETS = (BOT_TOKEN, CLIENT_SECRET, ALICE_TOKEN, BOB_EXPIRED_TOKEN, CAROL_TOKEN, ALICE_REFRESH, BOB_REFRESH)


def chat_settings_for(base_url: str, **overrides: Any) -> Settings:
    values = {
        "CHAT_API_BASE_URL": base_url,
        "CHAT_CDN_BASE_URL": "https://cdn.chat.test",
        "CHAT_CLIENT_ID": CLIENT_ID,
        "CHAT_CLIENT_SECRET": CLIENT_SECRET,
        "CHAT_REDIRECT_URIS": REDIRECT_URI,
        "SVC_BOT_TOKEN": BOT_TOKEN,
        "CHAT_TIMEOUT_SECONDS": 5,
        "CHAT_MAX_WAIT_SECONDS": 10,
        **overrides,
    }
    return Settings.model_validate(values)


def new_chat_client(settings: Settings, **kwargs: Any) -> ChatClient:
    """A client with fast, seeded backoff so retry tests stay quick and repeatable."""
    kwargs.setdefault("backoff_base", 0.02)
    kwargs.setdefault("rng", random.Random(7))
    return ChatClient(settings, **kwargs)


@pytest.fixture(scope="session")
def chat_sandbox() -> Iterator[SandboxServer]:
    """One sandbox for the session, on a free loopback port."""
    server, _ = start_sandbox()
    yield server
    server.shutdown()


@pytest.fixture
def chat_state(chat_sandbox: SandboxServer) -> SandboxState:
    """The sandbox as the fixture file describes it, default faults (none) and an empty log."""
    chat_sandbox.state.reset(config=True)
    return chat_sandbox.state


@pytest.fixture
def chat_settings(chat_sandbox: SandboxServer, chat_state: SandboxState) -> Settings:
    return chat_settings_for(chat_sandbox.base_url)


@pytest.fixture
def chat_client(chat_settings: Settings) -> Iterator[ChatClient]:
    client = new_chat_client(chat_settings)
    yield client
    client.session.close()


def platform_requests(state: SandboxState) -> list[tuple[str, str | None, int]]:
    """(method, route, status) of each request the sandbox answered, in order."""
    return [(entry["method"], entry["route"], entry["status"]) for entry in state.request_log]
