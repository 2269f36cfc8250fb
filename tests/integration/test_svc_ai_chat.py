"""svcAiChat through its handler, as in AWS (the key from Secrets Manager, the function's time budget), against
the fake Messages API over loopback HTTP: conversations, malformed output repaired or rejected, refusals,
truncation, provider failures and timeouts, files, transport and auth."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters

from local.ai_model import Step
from local.samples import large_community
from local.template import load_template
from svcconf import budget
from svcconf.ai_chat import KEPT_REPLY, NOT_BUILT_REPLY, REFUSED_REPLY, UNUSABLE_REPLY
from svcconf.config import ServerConfig
from svcconf.settings import get_settings
from tests.ai_helpers import TEST_KEY
from tests.integration.conftest import ROOT, bearer

FUNCTION = "SvcAiChatFunction"
TIMEOUT_SECONDS = int(load_template(ROOT / "template.yaml").resources[FUNCTION]["Properties"]["Timeout"])
MIB = 1024 * 1024


@dataclass
class FunctionContext:
    remaining_millis: int

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis


CURRENT = {
    "name": "Night Owls",
    "roles": [{"name": "Mods", "color": "#3498DB", "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]}],
    "categories": [
        {
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": "mod-chat", "type": "text"}],
        }
    ],
    "channels": [{"name": "general", "type": "text"}],
}
CURRENT_NORMALISED = ServerConfig.model_validate(CURRENT).model_dump(mode="json")


@pytest.fixture
def chat(aws, fake_provider, function_environment, monkeypatch):
    """The function's environment from template.yaml, the key in its Secrets Manager secret, a 26 s budget."""
    function_environment(FUNCTION)
    secret_id = aws.environment_for(FUNCTION)["ANTHROPIC_API_KEY_SECRET_ID"]
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(SecretId=secret_id, SecretString=TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the key comes from the secret, as in AWS
    start_budget = budget.start  # each invocation starts with the function's whole Timeout left, as in Lambda
    monkeypatch.setattr(budget, "start", lambda _context: start_budget(FunctionContext(TIMEOUT_SECONDS * 1000)))
    get_settings.cache_clear()
    parameters.clear_caches()
    return fake_provider


def ask(invoke, body: dict[str, Any] | str, **kwargs):
    return invoke("svcAiChat", body, headers=bearer(), **kwargs)


def turn(reply: str = "Done.", config: Any = None, quick_replies: Any = None, complete: bool = False) -> dict:
    return {"reply": reply, "config": config, "quick_replies": quick_replies or [], "is_complete": complete}


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assert_valid_or_none(config: Any) -> None:
    if config is not None:
        assert ServerConfig.model_validate(config).model_dump(mode="json") == config


# ---------------------------------------------------------------- conversations


def test_a_questionnaire_alone_gets_a_first_configuration(invoke, chat) -> None:
    response = ask(invoke, {"questionnaire_data": {"server_name": "Study Buddies", "purpose": "homework help"}})

    assert response.status == 200
    body = response.body
    assert set(body) == {"reply", "config", "quick_replies", "suggested_templates", "is_complete", "warnings", "plan"}
    assert body["config"]["name"] == "Study Buddies"
    assert_valid_or_none(body["config"])
    assert "study server" in body["reply"]
    assert 0 < len(body["quick_replies"]) <= 4
    # The library's starter template for study servers ranks first for a homework-help questionnaire
    assert [t["id"] for t in body["suggested_templates"]][:1] == ["study-group"]
    assert set(body["suggested_templates"][0]) == {"id", "name", "description", "tags"}
    assert body["is_complete"] is False
    assert body["warnings"] == []
    [request] = chat.requests
    assert request.body["messages"][-1]["role"] == "user"  # no assistant prefill


def test_a_multi_turn_conversation_edits_the_configuration_and_reads_the_prompt_cache(invoke, chat, caplog) -> None:
    conversation = [user("A server for our gaming clan")]
    first = ask(invoke, {"messages": conversation}).body
    assert "gaming-community" in [t["id"] for t in first["suggested_templates"]]
    assert len(first["suggested_templates"]) <= 3
    conversation += [{"role": "assistant", "content": first["reply"]}, user("Add a voice channel named Raid Night.")]

    second = ask(invoke, {"messages": conversation, "currentConfig": first["config"]}).body
    conversation += [{"role": "assistant", "content": second["reply"]}, user("Remove the role Member. Looks good!")]
    third = ask(invoke, {"messages": conversation, "currentConfig": second["config"]}).body

    channels = [c["name"] for category in second["config"]["categories"] for c in category["channels"]]
    assert "Raid Night" in channels
    assert "Member" not in [role["name"] for role in third["config"]["roles"]]
    assert (first["is_complete"], second["is_complete"], third["is_complete"]) == (False, False, True)
    for answer in (first, second, third):
        assert_valid_or_none(answer["config"])
    # The conversation reached the provider whole, alternating, with the context in the last user turn only
    last = chat.requests[-1].body["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert "<service_context>" in last[-1]["content"][-1]["text"]
    assert not any("<service_context>" in block["text"] for m in last[:-1] for block in m["content"])
    assert last[-2]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # the history's breakpoint
    # The logs show each call's usage: the system prompt written once, then read
    usages = [record.ai_usage for record in caplog.records if record.getMessage() == "ai call"]
    assert len(usages) == 3
    assert usages[0]["cache_creation_input_tokens"] > 0
    assert usages[1]["cache_read_input_tokens"] >= usages[0]["cache_creation_input_tokens"]
    assert usages[2]["cache_read_input_tokens"] > usages[1]["cache_read_input_tokens"]  # the history too


def test_warnings_are_the_permission_safety_lint_of_the_returned_configuration(invoke, chat) -> None:
    unsafe = {
        "name": "Open House",
        "roles": [{"name": "Admin", "permissions": ["ADMINISTRATOR", "KICK_MEMBERS"]}],
        "channels": [
            {"name": "lobby", "overwrites": [{"role": "@everyone", "allow": ["MANAGE_CHANNELS", "VIEW_CHANNEL"]}]}
        ],
    }
    chat.script(Step(json=turn(config=unsafe)))

    body = ask(invoke, {"messages": [user("Let everyone manage channels")]}).body

    rules = [(w["rule"], w["field"]) for w in body["warnings"]]
    assert ("everyone-dangerous-permission", "channels[0].overwrites[0].allow") in rules
    assert ("administrator-redundant-permissions", "roles[0].permissions") in rules
    assert all(w["message"] for w in body["warnings"])


def test_quick_replies_are_at_most_four_short_distinct_answers(invoke, chat) -> None:
    replies = ["Yes", "yes", "  ", "No", "x" * 200, "Maybe", "Later", "Never"]
    chat.script(Step(json=turn(config=CURRENT, quick_replies=replies)))

    body = ask(invoke, {"messages": [user("hi")]}).body

    assert body["quick_replies"] == ["Yes", "No", "x" * 80, "Maybe"]


def test_is_complete_needs_a_configuration(invoke, chat) -> None:
    chat.script(Step(json=turn(config=None, complete=True)))
    body = ask(invoke, {"messages": [user("done")]}).body
    assert (body["config"], body["is_complete"]) == (None, False)


# ---------------------------------------------------------------- malformed output: repaired or rejected

BAD_CONFIGS: list[Any] = [
    {"name": ""},
    {"name": "x" * 101},
    {"name": "A", "roles": [{"name": "Boss", "permissions": ["SUPERUSER"]}]},
    {"name": "A", "roles": [{"name": "Mods"}, {"name": "mods"}]},
    {"name": "A", "channels": [{"name": "c", "overwrites": [{"role": "Ghosts", "allow": ["VIEW_CHANNEL"]}]}]},
    {"name": "A", "roles": [{"name": "@everyone"}]},
    {"name": "A", "roles": [{"name": "Red", "color": "red"}]},
    {"name": "A", "roles": [{"name": "Big", "color": 0x1000000}]},
    {"name": "A", "channels": [{"name": "c", "type": "video"}]},
    {"name": "A", "channels": [{"name": "c", "slowmode_seconds": 99999}]},
    {"name": "A", "channels": [{"name": "c", "type": "text", "user_limit": 5}]},
    {"name": "A", "channels": [{"name": "c", "type": "text", "topic": "t" * 2000}]},
    {"name": "A", "categories": [{"name": "Big", "channels": [{"name": f"c{i}"} for i in range(51)]}]},
    {"name": "A", "channels": [{"name": f"c{i}"} for i in range(501)]},
    {
        "name": "A",
        "channels": [{"name": "c", "overwrites": [{"role": "@everyone", "allow": ["SPEAK"], "deny": ["SPEAK"]}]}],
    },
    {"name": "A", "channels": [{"name": "c", "overwrites": [{"role": "@everyone"}, {"role": "@everyone"}]}]},
    "my server",
    {"name": "A", "roles": "Admin"},
    {"name": "A", "roles": [{"name": "Admin", "permissions": 8}]},
    {"name": "A", "channels": [{"name": ""}]},
    {"roles": []},
]
BAD_ENVELOPES = [
    "not json at all",
    "",
    '{"reply": "hi"}',
    "[]",
    "null",
    '{"reply": 5, "config": null, "quick_replies": [], "is_complete": false}',
    '{"reply": "ok", "config": {"name": "A"',
    '{"reply": "ok", "config": null, "quick_replies": "Yes", "is_complete": false}',
    '{"reply": "ok", "config": null, "quick_replies": [], "is_complete": "maybe"}',
]
MALFORMED = [json.dumps(turn("Here it is.", config)) for config in BAD_CONFIGS] + BAD_ENVELOPES


def test_there_are_over_twenty_malformed_outputs() -> None:
    assert len(MALFORMED) > 20


@pytest.mark.parametrize("bad", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_output_twice_never_returns_an_invalid_configuration(invoke, chat, bad) -> None:
    chat.script(Step(text=bad), Step(text=bad))  # the answer and its repair round are both unusable

    response = ask(invoke, {"messages": [user("Build it")], "currentConfig": CURRENT})

    assert response.status == 200
    body = response.body
    assert body["config"] == CURRENT_NORMALISED  # the previous configuration, never the invalid one
    assert body["reply"].endswith(KEPT_REPLY) or body["reply"] == UNUSABLE_REPLY
    assert body["is_complete"] is False
    assert len(chat.requests) == 2  # one repair round, no more


@pytest.mark.parametrize("bad", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_output_without_a_previous_configuration_returns_none_or_502(invoke, chat, bad) -> None:
    chat.script(Step(text=bad), Step(text=bad))

    response = ask(invoke, {"messages": [user("Build it")]})

    if response.status == 200:
        assert response.body["config"] is None
        assert response.body["reply"].endswith(NOT_BUILT_REPLY)
    else:
        assert response.status == 502
        assert response.body["error"] == "Error"


@pytest.mark.parametrize("bad", BAD_CONFIGS[:8], ids=range(8))
def test_an_invalid_configuration_is_repaired_in_one_round_with_its_errors(invoke, chat, bad) -> None:
    chat.script(Step(text=json.dumps(turn("Here it is.", bad))))  # then the local model answers the repair

    response = ask(invoke, {"messages": [user("Add a role named VIP")], "currentConfig": CURRENT})

    assert response.status == 200
    assert_valid_or_none(response.body["config"])
    assert [role["name"] for role in response.body["config"]["roles"]] == ["Mods", "VIP"]  # repaired, not kept
    assert response.body["reply"].startswith("Added the role VIP.")
    first, repair = (request.body["messages"] for request in chat.requests)
    assert repair[: len(first)] == first  # the same conversation, then the failed answer and the problems
    assert repair[-2] == {"role": "assistant", "content": json.dumps(turn("Here it is.", bad))}
    assert repair[-1]["content"].startswith("Your previous answer is not valid:\n- config")


def test_a_truncated_answer_is_asked_again_more_briefly(invoke, chat) -> None:
    chat.script(Step(text='{"reply": "Here', stop_reason="max_tokens"))

    response = ask(invoke, {"messages": [user("A music server")]})

    assert response.status == 200
    assert response.body["config"]["name"] == "Music Lounge"
    repair = chat.requests[1].body["messages"]
    assert repair[-1]["role"] == "user"
    assert "cut off" in repair[-1]["content"]


def test_a_refusal_keeps_the_configuration(invoke, chat) -> None:
    chat.script(Step(text="", stop_reason="refusal"))

    body = ask(invoke, {"messages": [user("something harmful")], "currentConfig": CURRENT}).body

    assert body["reply"] == REFUSED_REPLY
    assert body["config"] == CURRENT_NORMALISED
    assert body["is_complete"] is False


def test_an_invalid_current_configuration_is_never_returned(invoke, chat) -> None:
    invalid = {"name": "Broken", "roles": [{"name": "A", "permissions": ["NOPE"]}]}
    bad = json.dumps(turn("Kept.", {"name": ""}))
    chat.script(Step(text=bad), Step(text=bad))

    body = ask(invoke, {"messages": [user("fix it")], "currentConfig": invalid}).body

    assert body["config"] is None


# ---------------------------------------------------------------- provider failures and time


@pytest.mark.parametrize(
    ("status", "error_type"), [(429, "rate_limit_error"), (529, "overloaded_error"), (500, "api_error")]
)
def test_a_provider_failing_past_the_retries_is_a_502(invoke, chat, status, error_type) -> None:
    chat.script(*(Step(status=status, headers={"retry-after-ms": "10"}) for _ in range(3)))

    response = ask(invoke, {"messages": [user("hi")]})

    assert response.status == 502
    assert response.body["error"] == "Error"
    assert response.body["code"] == 502
    assert error_type not in json.dumps(response.body)  # the provider's words stay in the log
    assert response.body["requestId"]
    assert len(chat.requests) == 3


def test_one_overload_is_retried_and_answered(invoke, chat) -> None:
    chat.script(Step(status=529, headers={"retry-after-ms": "10"}))
    response = ask(invoke, {"messages": [user("A gaming server")]})
    assert response.status == 200
    assert len(chat.requests) == 2


def test_a_provider_slower_than_the_budget_is_a_504_before_the_lambda_times_out(invoke, chat) -> None:
    chat.script(Step(delay=TIMEOUT_SECONDS + 10, json=turn(config=CURRENT)))
    started = time.monotonic()

    response = ask(invoke, {"messages": [user("hi")]})

    elapsed = time.monotonic() - started
    assert response.status == 504
    assert response.body["error"] == "Gateway Timeout"
    assert elapsed < TIMEOUT_SECONDS - 1  # answered with the contract's 504, not cut by Lambda's timeout


def test_a_hundred_messages_near_the_body_limit_answer_in_time_from_a_20_second_provider(invoke, chat) -> None:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:03d} " + "w" * 7996} for i in range(99)
    ] + [user("Add a role named VIP")]
    body: dict[str, Any] = {"messages": messages, "currentConfig": large_community(40, 8, 120), "style": {}}
    body["style"]["notes"] = "s" * (MIB - 4096 - len(json.dumps(body)))
    raw = json.dumps(body)
    assert MIB - 4096 <= len(raw.encode()) <= MIB
    chat.script(Step(delay=20))  # then the local model's own answer
    started = time.monotonic()

    response = ask(invoke, raw)

    elapsed = time.monotonic() - started
    assert response.status == 200
    assert "VIP" in [role["name"] for role in response.body["config"]["roles"]]
    assert 20 <= elapsed < TIMEOUT_SECONDS - 1
    [request] = chat.requests
    texts = [block["text"] for message in request.body["messages"] for block in message["content"]]
    assert len(texts) == 101  # the 100 messages (the last two users' turns merged into one) and the context


# ---------------------------------------------------------------- files


def test_files_reach_the_provider_as_url_blocks_and_are_never_fetched(invoke, chat) -> None:
    body = {
        "messages": [user("Use these")],
        "attachments": [
            {"url": "https://files.example/rules.pdf", "name": "Rules", "media_type": "application/pdf"},
            {"url": "https://files.example/shot", "media_type": "image/webp"},
        ],
        "file_urls": ["https://files.example/layout.png", "https://files.example/guide.pdf?v=2"],
    }

    response = ask(invoke, body)

    assert response.status == 200
    content = chat.requests[0].body["messages"][-1]["content"]
    assert content[:4] == [
        {"type": "document", "source": {"type": "url", "url": "https://files.example/rules.pdf"}, "title": "Rules"},
        {"type": "image", "source": {"type": "url", "url": "https://files.example/shot"}},
        {"type": "image", "source": {"type": "url", "url": "https://files.example/layout.png"}},
        {"type": "document", "source": {"type": "url", "url": "https://files.example/guide.pdf?v=2"}},
    ]
    assert "I received 4 file(s)" in response.body["reply"]
    assert {request.path for request in chat.requests} == {"/v1/messages"}


# ---------------------------------------------------------------- refusals before the provider


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "messages"),
        ({"messages": [{"role": "assistant", "content": "Hi!"}]}, "messages"),
        ({"messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": ""}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": "x" * 8001}]}, "messages[0].content"),
        ({"messages": [user("x")] * 101}, "messages"),
        ({"messages": [user("x")], "file_urls": ["http://example.com/a.pdf"]}, "file_urls[0]"),
        ({"messages": [user("x")], "file_urls": ["https://user:pw@example.com/a.pdf"]}, "file_urls[0]"),
        ({"messages": [user("x")], "file_urls": ["file:///etc/passwd"]}, "file_urls[0]"),
        ({"messages": [user("x")], "file_urls": ["https://e.com/a.pdf"] * 11}, "file_urls"),
        ({"messages": [user("x")], "attachments": [{"url": "ftp://e.com/a"}]}, "attachments[0].url"),
        (
            {"messages": [user("x")], "attachments": [{"url": "https://e.com/a", "media_type": "text/html"}]},
            "attachments[0].media_type",
        ),
        ({"messages": [user("x")], "attachments": [{"url": "https://e.com/a"}] * 11}, "attachments"),
        ({"messages": [user("x")], "currentConfig": "my server"}, "currentConfig"),
        ({"messages": [user("x")], "style": ["casual"]}, "style"),
        ({"messages": "hello"}, "messages"),
    ],
)
def test_invalid_requests_are_400_naming_the_field(invoke, chat, body, field) -> None:
    response = ask(invoke, body)

    assert response.status == 400
    assert field in [detail["field"] for detail in response.body["details"]]
    assert chat.requests == []


def test_a_body_over_one_mebibyte_is_413(invoke, chat) -> None:
    response = ask(invoke, {"messages": [user("x")], "style": {"notes": "s" * MIB}})
    assert response.status == 413
    assert chat.requests == []


def test_no_bearer_token_is_401_before_the_body_is_read(invoke, chat) -> None:
    response = invoke("svcAiChat", {"messages": "not a list"}, drop_headers=("Authorization",))
    assert response.status == 401
    assert "details" not in response.body


def test_without_a_key_the_operation_answers_503(invoke, chat, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY_SECRET_ID")
    get_settings.cache_clear()

    response = ask(invoke, {"messages": [user("hi")]})

    assert response.status == 503
    assert response.body["error"] == "Service Unavailable"
    assert response.body["message"] == "The AI assistant is not configured on this service."
    assert chat.requests == []


def test_a_key_secret_without_a_value_is_503_too(invoke, chat, monkeypatch) -> None:
    # As the template creates it: the secret exists, its value is put after the first deploy
    empty = boto3.client("secretsmanager", region_name="us-east-1").create_secret(Name="ai-key-not-set-yet")["ARN"]
    monkeypatch.setenv("ANTHROPIC_API_KEY_SECRET_ID", empty)
    get_settings.cache_clear()
    parameters.clear_caches()

    response = ask(invoke, {"messages": [user("hi")]})

    assert response.status == 503
    assert chat.requests == []
