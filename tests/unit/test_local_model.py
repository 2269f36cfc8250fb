"""The local model: the Messages API's checks, the responder registry, prompt-cache accounting, and svcAiChat's
deterministic answers, which always pass the service's schema."""

from __future__ import annotations

import json

import httpx2
import pytest

from local.ai_model import LOCAL_API_KEY, Request, instance_of, responder
from local.ai_model.chat import THEMES, chat_turn
from local.ai_model.responders import answer
from svcconf.config import ServerConfig
from svcconf.config.apply_edits import apply_edits
from svcconf.config.compact import expand
from svcconf.conversation.envelope import ChatTurn, build_of, edits_of
from svcconf.conversation.models import ChatMessage as Message
from svcconf.conversation.prompt import build_messages

HEADERS = {"authorization": f"Bearer {LOCAL_API_KEY}", "anthropic-version": "2026-10-21"}


def post(server, body, headers=HEADERS):
    return httpx2.post(f"{server.base_url}/v1/messages", json=body, headers=headers, timeout=10)


def body(**extra):
    return {"model": "claude-haiku-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}], **extra}


def chat_request(*texts: str, current=None, questionnaire=None, files=()) -> Request:
    messages = [Message(role="user" if i % 2 == 0 else "assistant", content=t) for i, t in enumerate(texts)]
    return Request({"messages": build_messages(messages, current, None, questionnaire, list(files))})


# ---------------------------------------------------------------- the API's checks


@pytest.mark.parametrize(
    ("request_body", "headers", "status", "words"),
    [
        (body(), {"anthropic-version": "2026-10-21"}, 401, "x-api-key"),
        (body(), {"authorization": "Bearer k"}, 400, "anthropic-version"),
        (body(temperature=0.2), HEADERS, 400, "temperature"),
        (
            body(messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "{"}]),
            HEADERS,
            400,
            "prefill",
        ),
        ({"model": "m", "messages": []}, HEADERS, 400, "max_tokens"),
        (body(messages=[]), HEADERS, 400, "messages"),
    ],
)
def test_requests_the_api_refuses_are_refused(local_model_server, request_body, headers, status, words) -> None:
    response = post(local_model_server, request_body, headers)

    assert response.status_code == status
    error = response.json()
    assert error["type"] == "error"
    assert words in error["error"]["message"]
    assert response.headers["request-id"].startswith("req_local_")


def test_a_plain_request_gets_a_text_message(local_model_server) -> None:
    message = post(local_model_server, body()).json()
    assert message["type"] == "message"
    assert message["content"][0]["type"] == "text"
    assert message["stop_reason"] == "end_turn"
    assert set(message["usage"]) >= {"input_tokens", "output_tokens", "cache_read_input_tokens"}


def test_the_prompt_cache_is_written_then_read_and_nothing_below_the_floor(local_model_server) -> None:
    local_model_server.reset()
    cached = [{"type": "text", "text": "s" * 8000, "cache_control": {"type": "ephemeral"}}]
    short = [{"type": "text", "text": "s" * 100, "cache_control": {"type": "ephemeral"}}]
    unmarked = [{"type": "text", "text": "u" * 8000}]

    first, second = (post(local_model_server, body(system=cached)).json()["usage"] for _ in range(2))
    below = post(local_model_server, body(system=short)).json()["usage"]
    plain = [post(local_model_server, body(system=unmarked)).json()["usage"] for _ in range(2)][1]

    written = first["cache_creation_input_tokens"]
    assert written >= 2000  # 8,000 characters, 4 to a token
    assert first["cache_read_input_tokens"] == 0
    assert (second["cache_creation_input_tokens"], second["cache_read_input_tokens"]) == (0, written)
    assert second["input_tokens"] == first["input_tokens"]
    assert below["cache_creation_input_tokens"] == below["cache_read_input_tokens"] == 0
    assert plain["cache_read_input_tokens"] == 0


# ---------------------------------------------------------------- the registry


def test_a_structured_request_is_answered_by_the_responder_of_its_schema_title(local_model_server) -> None:
    @responder("EchoEnvelope")
    def echo(request: Request) -> dict:
        return {"said": request.last_text()}

    schema = {"title": "EchoEnvelope", "type": "object", "properties": {"said": {"type": "string"}}}
    request = body(
        messages=[{"role": "user", "content": "ping"}],
        output_config={"format": {"type": "json_schema", "schema": schema}},
    )

    message = post(local_model_server, request).json()

    assert json.loads(message["content"][0]["text"]) == {"said": "ping"}


def test_a_schema_without_a_responder_gets_a_generic_instance() -> None:
    schema = {
        "title": "Unknown",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "size": {"type": "integer"},
            "kind": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "child": {"$ref": "#/$defs/Child"},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
        },
        "required": ["name", "size", "kind", "tags", "child", "maybe"],
        "$defs": {"Child": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}},
    }
    value = answer(Request({"output_config": {"format": {"type": "json_schema", "schema": schema}}}))
    assert value == {"name": "local", "size": 0, "kind": "a", "tags": ["local"], "child": {"ok": False}, "maybe": False}
    assert instance_of(schema, schema) == value


# ---------------------------------------------------------------- svcAiChat's answers


def built(turn: ChatTurn) -> ServerConfig:
    return expand(build_of(turn) or {})


def applied(turn: ChatTurn, start: ServerConfig) -> ServerConfig:
    return apply_edits(start, edits_of(turn.edits or [])).config


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_every_theme_builds_a_valid_configuration(theme) -> None:
    words = " ".join(THEMES[theme]["words"][:1]) or "friends"
    result = ChatTurn.model_validate(chat_turn(chat_request(f"A {words} server please")))
    assert built(result).roles
    assert result.edits is None
    assert theme in result.reply


def test_a_first_build_is_sized_by_the_questionnaire_and_stays_compact() -> None:
    turn = chat_turn(chat_request(questionnaire={"purpose": "gaming", "roles": 20, "channels": 60}))

    config = built(ChatTurn.model_validate(turn))

    assert (len(config.roles), config.channel_count()) == (20, 60)
    assert len(json.dumps(turn, separators=(",", ":"))) // 4 <= 1200  # output tokens, as the local model counts


def edited(asked: str) -> tuple[ChatTurn, ServerConfig]:
    """The local model's answer to `asked` about its gaming first build, and that build with its edits applied."""
    start = built(ChatTurn.model_validate(chat_turn(chat_request("gaming"))))
    current = start.model_dump(mode="json", exclude_defaults=True)
    result = ChatTurn.model_validate(chat_turn(chat_request("gaming", "ok", asked, current=current)))
    return result, applied(result, start)


def test_edits_change_the_current_configuration_and_stay_valid() -> None:
    result, config = edited(
        "Add a voice channel named Raid Night. Add a role called VIP. Remove the role Moderator. "
        "Remove the channel off-topic. Rename the server to Night Owls"
    )

    assert config.name == "Night Owls"
    assert "VIP" in config.role_names()
    assert "Moderator" not in config.role_names()
    channels = [(c.name, c.type) for category in config.categories for c in category.channels]
    assert ("Raid Night", "voice") in channels
    assert "off-topic" not in [name for name, _ in channels]
    assert len(json.dumps([e.model_dump(exclude_none=True) for e in result.edits or []])) // 4 < 200


def test_the_questionnaire_names_the_server_and_done_completes() -> None:
    first = ChatTurn.model_validate(chat_turn(chat_request(questionnaire={"server_name": "Chess Club"})))
    done = ChatTurn.model_validate(chat_turn(chat_request("x", "y", "Looks good, done")))
    assert built(first).name == "Chess Club"
    assert (first.is_complete, done.is_complete) == (False, True)


def test_renames_moves_removals_and_grants_joined_by_and_are_edits_that_apply() -> None:
    _, config = edited(
        "Rename the channel general to lobby and move the channel clips to Community and remove the category Staff "
        "and rename the role Moderator to Mods. Add a role called Banner with BAN_MEMBERS and KICK_MEMBERS."
    )

    by_category = {category.name: [channel.name for channel in category.channels] for category in config.categories}
    assert by_category["Community"] == ["lobby", "off-topic", "Lounge", "clips"]
    assert "clips" not in by_category["Gaming"]
    assert "Staff" not in by_category
    assert config.role_names() == ["Admin", "Mods", "Gamer", "Member", "Minecraft", "Valorant", "Fortnite", "Banner"]
    assert config.roles[-1].permissions == ["BAN_MEMBERS", "KICK_MEMBERS"]
    # What the community objects name follows: the renamed role and channel, the staff's mod-log gone with its alerts
    # (the alert-only rule with them)
    assert config.onboarding is not None
    assert "lobby" in config.onboarding.default_channels
    rules = {rule.name: rule for rule in config.automod or []}
    assert sorted(rules) == ["Invite links", "Mention spam", "Spam"]
    assert rules["Invite links"].exempt_roles == ["Admin", "Mods"]
    assert [action.type for action in rules["Invite links"].actions] == ["block"]
