"""`make run` without a key: svcAiChat answers 503, and `SVC_AI_PROVIDER=local` serves the whole flow from the
deterministic local model over loopback HTTP, through the same adapter as the real provider."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from local.samples import large_community
from svcconf.config import ServerConfig
from tests.helpers.local_service import LocalService, ai_chat, local_ai_runner, running

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def local_ai_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    with local_ai_runner(tmp_path_factory.mktemp("local-ai")) as service:
        yield service


@pytest.fixture(scope="module")
def keyless_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """`make run` with no AI provider at all, whatever the shell that runs the tests sets."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "SVC_AI_PROVIDER"):
            patch.delenv(name, raising=False)
        with running(tmp_path_factory.mktemp("keyless")) as (state, _started, log_path):
            yield LocalService(state=state, first_answer_seconds=0.0, log_path=log_path)


def test_without_a_key_svc_ai_chat_answers_503(keyless_service: LocalService) -> None:
    response = ai_chat(keyless_service, {"messages": [{"role": "user", "content": "A server for my study group"}]})
    assert response.status_code == 503
    assert response.json()["error"] == "Service Unavailable"
    message = response.json()["message"]
    assert message.startswith("The AI assistant is not configured on this service: set the AI provider's key")
    assert "SVC_AI_PROVIDER=local" in message  # what a person running it locally must set


def test_the_local_model_serves_a_whole_conversation(local_ai_service: LocalService) -> None:
    conversation = [{"role": "user", "content": "A server for our band and its fans"}]
    first = ai_chat(local_ai_service, {"messages": conversation, "style": {"tone": "casual"}})
    assert first.status_code == 200, first.text
    conversation += [
        {"role": "assistant", "content": first.json()["reply"]},
        {"role": "user", "content": "Add a role named Roadie. Looks good!"},
    ]

    second = ai_chat(local_ai_service, {"messages": conversation, "currentConfig": first.json()["config"]})

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


# ---------------------------------------------------------------- at a real model's pace (the local model's default)


def _channels(config: dict[str, Any]) -> list[tuple[str, str]]:
    inside = [
        (category["name"], channel["name"]) for category in config["categories"] for channel in category["channels"]
    ]
    return inside + [("", channel["name"]) for channel in config.get("channels", [])]


def test_a_one_line_edit_on_40_roles_and_120_channels_answers_within_10_seconds(local_ai_service) -> None:
    current = ServerConfig.model_validate(large_community(40, 8, 120)).model_dump(mode="json")
    body = {
        "messages": [{"role": "user", "content": "Add a text channel named memes-corner to Area 1"}],
        "currentConfig": current,
    }
    ai_chat(local_ai_service, body)  # the function's sandbox warm, as it is for every turn but a cold start's
    started = time.monotonic()

    response = ai_chat(local_ai_service, body)

    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    assert elapsed < 10
    config = response.json()["config"]
    assert [role["name"] for role in config["roles"]] == [role["name"] for role in current["roles"]]
    assert set(_channels(current)) < set(_channels(config))
    assert ("Area 1", "memes-corner") in _channels(config)
    [change] = response.json()["changes"]
    assert (change["op"], change["path"], change["new"]["name"]) == (
        "add",
        "categories[0].channels[15]",
        "memes-corner",
    )


def test_ten_categories_of_ten_channels_on_250_roles_is_built_as_far_as_the_time_allows(local_ai_service) -> None:
    # 250 roles and 390 channels: the 110 asked fit the platform's 500, so only the turn's time limits them
    current = large_community(250, 10, 380)
    body = {
        "messages": [{"role": "user", "content": "Add ten categories with ten channels each"}],
        "currentConfig": current,
    }
    started = time.monotonic()

    response = ai_chat(local_ai_service, body)

    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    answer = response.json()
    config = ServerConfig.model_validate(answer["config"])
    assert len(config.roles) == 250
    assert 390 < config.channel_count() < 500  # part of it, each edit whole
    assert answer["is_complete"] is False
    assert answer["quick_replies"] == ["Go on"]
    assert "ran out of time" in answer["reply"]
    assert len(answer["changes"]) == config.channel_count() - 390
    assert elapsed < 26
