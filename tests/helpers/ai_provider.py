"""Fixtures for the AI tests: the local model as the fake provider over loopback HTTP, the adapter pointed at it.

Every request the fake receives is checked after each test: the system prompt carries `cache_control`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from local.ai_model import LocalModelServer, start_local_model
from svcconf.api import budget
from svcconf.observability import metrics
from svcconf.settings import get_settings

TEST_KEY = "test-provider-key"


def system_is_cached(body: Any) -> bool:
    system = body.get("system") if isinstance(body, dict) else None
    return (
        isinstance(system, list)
        and bool(system)
        and all(
            isinstance(block, dict) and block.get("cache_control", {}).get("type") == "ephemeral" for block in system
        )
    )


@pytest.fixture(scope="session")
def local_model_server() -> Iterator[LocalModelServer]:
    server = start_local_model(tokens_per_second=0)  # at once: the tests that time it start their own
    yield server
    server.shutdown()


@pytest.fixture
def fake_provider(local_model_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalModelServer]:
    """The local model, reset, as the provider: ANTHROPIC_BASE_URL points at it and a key is set."""
    local_model_server.reset()
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", local_model_server.base_url)
    monkeypatch.delenv("ANTHROPIC_API_KEY_SECRET_ID", raising=False)
    get_settings.cache_clear()
    budget.start(object())  # no invocation: no budget unless a test starts one
    metrics.clear_metrics()
    yield local_model_server
    get_settings.cache_clear()
    budget.start(object())
    metrics.clear_metrics()
    # The must-show: every request the provider received had its system prompt marked for the prompt cache.
    messages = [request for request in local_model_server.requests if request.path == "/v1/messages"]
    assert all(system_is_cached(request.body) for request in messages), "a request without cache_control"
