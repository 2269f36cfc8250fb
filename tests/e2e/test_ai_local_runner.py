"""`make run` without a key: svcAiChat answers 503, and `SVC_AI_PROVIDER=local` serves the whole flow from the
deterministic local model over loopback HTTP, through the same adapter as the real provider."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from svcconf.config import ServerConfig
from tests.e2e.conftest import REQUEST_TIMEOUT_SECONDS, LocalService, running

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def local_ai_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SVC_AI_PROVIDER", "local")
        patch.delenv("ANTHROPIC_API_KEY", raising=False)
        patch.delenv("ANTHROPIC_BASE_URL", raising=False)
        with running(tmp_path_factory.mktemp("local-ai")) as (state, _started, log_path):
            yield LocalService(state=state, first_answer_seconds=0.0, log_path=log_path)


WARM_UP_SECONDS = 120  # the SDK's import in a cold sandbox takes seconds, many more on a busy machine


def chat(service: LocalService, body: dict[str, Any]) -> requests.Response:
    """One call; while the function's sandboxes are still starting (the runner answers 429), wait for them."""
    give_up_at = time.monotonic() + WARM_UP_SECONDS
    while True:
        response = requests.post(
            service.url("svcAiChat"),
            json=body,
            headers={"Authorization": f"Bearer {service.state['user_token']}"},
            timeout=REQUEST_TIMEOUT_SECONDS + 5,
        )
        if response.status_code != 429 or time.monotonic() > give_up_at:
            return response


def test_without_a_key_svc_ai_chat_answers_503(local_service: LocalService) -> None:
    if os.environ.get("ANTHROPIC_API_KEY"):
        pytest.skip("this shell sets ANTHROPIC_API_KEY, so make run has a provider")
    response = chat(local_service, {"messages": [{"role": "user", "content": "A server for my study group"}]})
    assert response.status_code == 503
    assert response.json()["error"] == "Service Unavailable"


def test_the_local_model_serves_a_whole_conversation(local_ai_service: LocalService) -> None:
    conversation = [{"role": "user", "content": "A server for our band and its fans"}]
    first = chat(local_ai_service, {"messages": conversation, "style": {"tone": "casual"}})
    assert first.status_code == 200, first.text
    conversation += [
        {"role": "assistant", "content": first.json()["reply"]},
        {"role": "user", "content": "Add a role named Roadie. Looks good!"},
    ]

    second = chat(local_ai_service, {"messages": conversation, "currentConfig": first.json()["config"]})

    assert second.status_code == 200, second.text
    body = second.json()
    assert ServerConfig.model_validate(body["config"]).name == "Music Lounge"
    assert "Roadie" in [role["name"] for role in body["config"]["roles"]]
    assert body["is_complete"] is True
    assert local_ai_service.state["ai_base_url"].startswith("http://127.0.0.1:")
    # The function's log shows each call's usage, the system prompt read from the cache the second time
    calls = [
        json.loads(line)
        for line in local_ai_service.log_path.read_text().splitlines()
        if line.startswith("{") and '"ai call"' in line
    ]
    assert len(calls) == 2
    assert calls[0]["ai_usage"]["cache_creation_input_tokens"] > 0
    assert calls[1]["ai_usage"]["cache_read_input_tokens"] > 0
