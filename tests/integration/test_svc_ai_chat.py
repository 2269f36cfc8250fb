"""svcAiChat through its handler, as in AWS (the key from Secrets Manager, the function's time budget), against
the fake Messages API over loopback HTTP: conversations, provider failures and timeouts, files, transport and
auth (the model's answers that do not apply: test_svc_ai_chat_answers.py)."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3
import pytest

from local.ai_model import Step
from local.samples import large_community
from svcconf.settings import get_settings
from tests.helpers.ai_chat import (
    CURRENT,
    MIB,
    TIMEOUT_SECONDS,
    ask,
    assert_valid_or_none,
    turn,
    user,
)

# ---------------------------------------------------------------- conversations


def test_a_questionnaire_alone_gets_a_first_configuration(invoke, chat) -> None:
    response = ask(invoke, {"questionnaire_data": {"server_name": "Study Buddies", "purpose": "homework help"}})

    assert response.status == 200
    body = response.body
    assert set(body) == {
        *("reply", "config", "quick_replies", "suggested_templates", "is_complete", "changes", "warnings"),
        *("plan", "plan_id", "problems"),  # a live guild's (guild_id); null without one
        "history_trimmed",
        "attachments_used",
    }
    assert (body["plan"], body["plan_id"], body["problems"]) == (None, None, None)
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
    [added] = second["changes"]
    assert (added["op"], added["new"]["name"], added["new"]["type"]) == ("add", "Raid Night", "voice")
    assert added["path"].startswith("categories[")
    assert ".channels[" in added["path"]
    assert {change["op"] for change in third["changes"]} == {"remove"}  # the role, and nothing else changed
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
    chat.script(Step(json=turn(build=unsafe)))

    body = ask(invoke, {"messages": [user("Let everyone manage channels")]}).body

    rules = [(w["rule"], w["field"]) for w in body["warnings"]]
    assert ("everyone-dangerous-permission", "channels[0].overwrites[0].allow") in rules
    assert ("administrator-redundant-permissions", "roles[0].permissions") in rules
    assert all(w["message"] for w in body["warnings"])


def test_quick_replies_are_at_most_four_short_distinct_answers(invoke, chat) -> None:
    replies = ["Yes", "yes", "  ", "No", "x" * 200, "Maybe", "Later", "Never"]
    chat.script(Step(json=turn(build=CURRENT, quick_replies=replies)))

    body = ask(invoke, {"messages": [user("hi")]}).body

    assert body["quick_replies"] == ["Yes", "No", "x" * 80, "Maybe"]


def test_is_complete_needs_a_configuration(invoke, chat) -> None:
    chat.script(Step(json=turn(build=None, complete=True)))
    body = ask(invoke, {"messages": [user("done")]}).body
    assert (body["config"], body["is_complete"]) == (None, False)


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
    chat.script(Step(delay=TIMEOUT_SECONDS + 10, json=turn(build=CURRENT)))
    started = time.monotonic()

    response = ask(invoke, {"messages": [user("hi")]})

    elapsed = time.monotonic() - started
    assert response.status == 504
    assert response.body["error"] == "Gateway Timeout"
    assert elapsed < TIMEOUT_SECONDS - 1  # answered with the contract's 504, not cut by Lambda's timeout


def _a_hundred_messages_at_the_body_limit() -> str:
    """99 older messages of 8,000 characters (the most a message holds), the newest asking for a role, a
    120-channel configuration and the style's notes filling the body to within 4 KiB of its 1 MiB limit."""
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:03d} " + "w" * 7996} for i in range(99)
    ] + [user("Add a role named VIP")]
    body: dict[str, Any] = {"messages": messages, "currentConfig": large_community(40, 8, 120), "style": {}}
    body["style"]["notes"] = "s" * (MIB - 4096 - len(json.dumps(body)))
    raw = json.dumps(body)
    assert MIB - 4096 <= len(raw.encode()) <= MIB
    return raw


def test_a_turn_at_the_body_limit_whose_style_alone_passes_the_input_budget_is_400_naming_it(invoke, chat) -> None:
    # v4 (issue 31, finding 5; docs/06-ai.md, Input budget): `style` is part of what every turn sends; a hundred
    # messages take at most 800,000 characters, so the rest of a body at its limit (its style's notes: about 57,500
    # tokens) passes the default 60,000 with the prompt and the configuration. Before v4 it was sent whatever it cost.
    response = ask(invoke, _a_hundred_messages_at_the_body_limit())

    assert response.status == 400, response.body
    [detail] = response.body["details"]
    assert detail["field"] == "style"
    assert "input budget of 60,000 tokens (SVC_AI_MAX_INPUT_TOKENS)" in detail["message"]
    assert chat.requests == []  # the model is not asked


def test_a_hundred_messages_near_the_body_limit_answer_in_time_from_a_20_second_provider(
    invoke, chat, monkeypatch
) -> None:
    # An operator's budget that takes this body's fixed part (its style's notes count in it since v4: the test above)
    monkeypatch.setenv("SVC_AI_MAX_INPUT_TOKENS", "100000")
    get_settings.cache_clear()
    raw = _a_hundred_messages_at_the_body_limit()
    chat.script(Step(delay=20))  # then the local model's own answer
    started = time.monotonic()

    response = ask(invoke, raw)

    elapsed = time.monotonic() - started
    assert response.status == 200, response.body
    assert "VIP" in [role["name"] for role in response.body["config"]["roles"]]
    assert 20 <= elapsed < TIMEOUT_SECONDS - 1
    [request] = chat.requests
    texts = [block["text"] for message in request.body["messages"] for block in message["content"]]
    # The newest message goes with the fixed part (the context block: the configuration and the style's notes), then
    # the newest older messages that fit the rest of the budget, left out ten at a time (docs/06-ai.md, Input budget)
    *sent, newest, context = texts
    assert newest == "Add a role named VIP"
    assert context.startswith("<service_context>")
    assert "s" * 100_000 in context
    assert sent == [f"{i:03d} " + "w" * 7996 for i in range(90, 99)]
    assert response.body["history_trimmed"] == 90


# ---------------------------------------------------------------- files


def test_files_reach_the_provider_as_url_blocks_and_are_never_fetched(invoke, chat, monkeypatch) -> None:
    # v4: each PDF counts 40,000 tokens of the input budget (20 pages at 2,000): two need more than the default
    monkeypatch.setenv("SVC_AI_MAX_INPUT_TOKENS", "120000")
    get_settings.cache_clear()
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


def test_a_file_neither_image_nor_pdf_is_not_sent_and_the_warnings_point_to_import(invoke, chat) -> None:
    body = {
        "messages": [user("Use these")],
        "attachments": [
            {"url": "https://files.example/backup.json", "name": "xenon-backup.json"},
            {"url": "https://files.example/rules.pdf", "name": "Rules"},
        ],
        "file_urls": ["https://files.example/notes.txt"],
    }

    response = ask(invoke, body)

    assert response.status == 200
    content = chat.requests[0].body["messages"][-1]["content"]
    blocks = [block for block in content if block["type"] in ("document", "image")]
    assert blocks == [
        {"type": "document", "source": {"type": "url", "url": "https://files.example/rules.pdf"}, "title": "Rules"}
    ]
    context = json.loads(content[-1]["text"].split("\n")[1])
    assert context["files"] == [{"name": "Rules", "url": "https://files.example/rules.pdf"}]
    unsent = [w for w in response.body["warnings"] if w["rule"] == "attachment-not-sent"]
    assert [w["field"] for w in unsent] == ["attachments[0]", "file_urls[0]"]
    assert "xenon-backup.json is neither an image nor a PDF" in unsent[0]["message"]
    assert all("deployToChat `import`" in w["message"] for w in unsent)


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
    message = response.body["message"]
    assert message.startswith("The AI assistant is not configured on this service: set the AI provider's key")
    assert "ANTHROPIC_API_KEY" in message
    assert "SVC_AI_PROVIDER=local" in message
    assert chat.requests == []


def test_a_key_secret_without_a_value_is_503_too(invoke, chat, monkeypatch) -> None:
    # As the template creates it: the secret exists, its value is put after the first deploy
    empty = boto3.client("secretsmanager", region_name="us-east-1").create_secret(Name="ai-key-not-set-yet")["ARN"]
    monkeypatch.setenv("ANTHROPIC_API_KEY_SECRET_ID", empty)
    get_settings.cache_clear()

    response = ask(invoke, {"messages": [user("hi")]})

    assert response.status == 503
    assert chat.requests == []
