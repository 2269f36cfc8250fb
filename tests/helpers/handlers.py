"""What handler tests share: the events/ JSON, the values the `aws` fixture provisions, a bearer token, a Lambda
context, and the functions pointed at the chat-platform sandbox. tests/integration/conftest.py builds its fixtures
on these."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from local.chat_sandbox import SandboxServer
from local.tokens import issue_token
from svcconf.chat import get_chat_client
from svcconf.settings import get_settings

ROOT = Path(__file__).resolve().parents[2]
BOT_TOKEN = "local-dev-bot-token"  # the value events/*.json carry
CHAT_CLIENT_SECRET = "dev-client-secret"  # the sandbox fixture's OAuth client
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
CDN = "https://cdn.chat.test"
JWT_SECRET = "integration-test-jwt-secret-0123456789-0123456789-0123456789-abcd"


@dataclass
class LambdaContext:
    function_name: str = "test-function"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:test-function"
    aws_request_id: str = "test-request"

    def get_remaining_time_in_millis(self) -> int:
        return 15_000


@dataclass
class ApiResponse:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]


def point_functions_at(server: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reset the sandbox and set the functions' chat settings to it, as `make run` does."""
    server.state.reset(config=True)
    monkeypatch.setenv("CHAT_API_BASE_URL", server.base_url)
    monkeypatch.setenv("CHAT_AUTHORIZE_URL", server.base_url.split("/api/", 1)[0] + "/oauth2/authorize")
    monkeypatch.setenv("CHAT_CDN_BASE_URL", CDN)
    monkeypatch.setenv("CHAT_CLIENT_ID", server.state.application["client_id"])
    monkeypatch.setenv("CHAT_REDIRECT_URIS", REDIRECT_URI)
    monkeypatch.setenv("CHAT_MAX_WAIT_SECONDS", "10")
    get_settings.cache_clear()
    get_chat_client.cache_clear()


def bearer(sub: str = "web-user-1", **claims: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(JWT_SECRET, sub, **claims)}"}


def load_event(operation: str) -> dict[str, Any]:
    return json.loads((ROOT / "events" / f"{operation}.json").read_text())
