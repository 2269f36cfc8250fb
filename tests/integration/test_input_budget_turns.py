"""svcAiChat's input budget through its handler and the local model: a long conversation is sent within
SVC_AI_MAX_INPUT_TOKENS, newest messages first, and the answer says how many were left out; the estimate made
before the call is held to the provider's reported count."""

from __future__ import annotations

import json
import random

import pytest

from local.samples import large_community
from svcconf.conversation.prompt import CONTEXT_OPEN
from svcconf.settings import get_settings
from tests.helpers.ai_chat import ask

PROSE = (
    "we would like a channel for the weekly reading group where members can share their notes and questions about "
    "each chapter before the meeting also please make sure moderators can pin messages and that newcomers only see "
    "the welcome area until they accept the rules thanks everyone organisers volunteers 2026 schedule"
)
WORDS = PROSE.split()


def long_message(rng: random.Random, index: int, length: int = 8000) -> str:
    """Prose of exactly `length` characters, numbered so each message can be found in what the model got."""
    sentences = [f"Message {index}."]
    while sum(len(s) + 1 for s in sentences) < length:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))
        sentences.append(words.capitalize() + rng.choice([".", ",", "?", "!"]))
    return " ".join(sentences)[:length]


def history(count: int) -> list[dict[str, str]]:
    rng = random.Random(7)
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": long_message(rng, i)} for i in range(count - 1)] + [
        {"role": "user", "content": long_message(rng, count - 1)}
    ]


def reported_input(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]


def sent_texts(body: dict) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


def test_a_hundred_long_messages_reach_the_model_within_the_budget_newest_first(invoke, chat, record_property):
    messages = history(100)
    budget = get_settings().ai_max_input_tokens

    response = ask(invoke, {"messages": messages, "currentConfig": large_community()})

    assert response.status == 200, response.body
    [request] = [r for r in chat.requests if r.path == "/v1/messages"]
    [usage] = chat.usages
    sent = sent_texts(request.body)
    trimmed = response.body["history_trimmed"]
    assert 0 < trimmed < 100
    assert "Message 99." in sent  # the newest message is in it
    assert f"Message {trimmed}." in sent  # the oldest ones left out, the newer ones all there
    assert f"Message {trimmed - 1}." not in sent
    assert CONTEXT_OPEN in sent  # with the configuration
    reported = reported_input(usage)
    assert reported <= budget
    record_property(
        "figures",
        f"input budget {budget:,}: {100 - trimmed} of 100 messages sent, "
        f"{trimmed} left out; reported input tokens {reported:,}",
    )


def test_a_short_conversation_is_sent_whole(invoke, chat):
    response = ask(invoke, {"messages": history(3)})
    assert response.status == 200
    assert response.body["history_trimmed"] == 0
    [request] = [r for r in chat.requests if r.path == "/v1/messages"]
    assert all(f"Message {i}." in sent_texts(request.body) for i in range(3))


def test_a_smaller_budget_sends_fewer_messages(invoke, chat, monkeypatch):
    monkeypatch.setenv("SVC_AI_MAX_INPUT_TOKENS", "20000")
    get_settings.cache_clear()
    response = ask(invoke, {"messages": history(40)})
    assert response.status == 200
    [usage] = chat.usages
    assert reported_input(usage) <= 20_000
    assert response.body["history_trimmed"] > 30


@pytest.mark.parametrize("count", [1, 20, 100])
def test_the_estimate_is_within_15_percent_of_the_providers_reported_input(invoke, chat, count, record_property):
    import logging

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    try:
        ask(invoke, {"messages": history(count), "currentConfig": large_community()})
    finally:
        logging.getLogger().removeHandler(handler)
    [estimated] = [r.ai_estimated_input_tokens for r in records if getattr(r, "ai_purpose", None) == "chat"]
    [usage] = chat.usages
    reported = reported_input(usage)
    assert abs(estimated - reported) <= 0.15 * reported
    record_property(
        "figures",
        f"{count} messages: estimated {estimated:,} input tokens, reported {reported:,} "
        f"({(estimated - reported) / reported:+.1%})",
    )


def test_the_next_turn_of_a_trimmed_conversation_reads_its_history_from_the_prompt_cache(invoke, chat, record_property):
    messages = history(60)  # a conversation under the 100 messages a request may carry, longer than the budget
    first = ask(invoke, {"messages": messages, "currentConfig": large_community()})
    messages += [
        {"role": "assistant", "content": first.body["reply"]},
        {"role": "user", "content": "Message 61. And a voice channel for the meetings, please."},
    ]

    second = ask(invoke, {"messages": messages, "currentConfig": first.body["config"]})

    assert second.status == 200
    assert second.body["history_trimmed"] == first.body["history_trimmed"]  # the same first message sent
    read = chat.usages[1]["cache_read_input_tokens"]
    # What the first turn wrote to the cache (the system prompt and the history up to its last assistant message) is
    # read back: the history, not only the system prompt. (Its share of the input depends on how many messages fit
    # beside the fixed part: 0.6 of it before configuration v4's prompt, which left ten more out, 0.46 after.)
    assert read >= 0.99 * chat.usages[0]["cache_creation_input_tokens"]
    assert read > 0.4 * reported_input(chat.usages[1])
    record_property(
        "figures", f"the next trimmed turn read {read:,} of {reported_input(chat.usages[1]):,} from the cache"
    )
