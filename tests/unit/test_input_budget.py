"""The input budget's estimate beside the local model's tokenizer-like count, and which messages fit."""

from __future__ import annotations

import json

import pytest

from local.ai_model.tokenizer import count_tokens
from local.samples import large_community
from svcconf.ai.token_estimate import MESSAGE_OVERHEAD_TOKENS, estimated_tokens
from svcconf.conversation.input_budget import TRIM_STEP, first_sent, newest_that_fit
from svcconf.conversation.models import ChatMessage
from svcconf.conversation.prompt import SYSTEM_PROMPT

PROSE = (
    "Could we have a quiet channel for the reading group, where members share notes on each chapter before the "
    "meeting? Moderators should pin the schedule, and newcomers only see the welcome area until they accept the rules."
)
TEXTS = {
    "prose": PROSE * 20,
    "a configuration's JSON": json.dumps(large_community(), separators=(",", ":")),
    "the system prompt": SYSTEM_PROMPT,
    "another script": "サーバーの設定を手伝ってください。役割とチャンネルを作りたいです。" * 20,
    "numbers": " ".join(str(n * 7919) for n in range(500)),
}


@pytest.mark.parametrize("kind", TEXTS)
def test_the_estimate_is_within_15_percent_of_a_tokenizers_count(kind: str) -> None:
    text = TEXTS[kind]
    counted = count_tokens(text)
    assert abs(estimated_tokens(text) - counted) <= 0.15 * counted, (estimated_tokens(text), counted)


def test_the_tokenizer_counts_prose_cheaper_per_character_than_json_and_long_words_dearer() -> None:
    prose, config = TEXTS["prose"], TEXTS["a configuration's JSON"]
    assert len(prose) / count_tokens(prose) > 1.4 * len(config) / count_tokens(config)
    assert count_tokens(" cat") == 1
    assert count_tokens(" internationalisation") == 5  # 20 letters: one token for six, one more for each four
    assert count_tokens('{"name":"general"}') == 7  # {" name ":"(2) general(2) "}


def messages(*sizes: int) -> list[ChatMessage]:
    return [ChatMessage(role="user" if i % 2 == 0 else "assistant", content="a" * size) for i, size in enumerate(sizes)]


def test_the_newest_messages_that_fit_are_kept_and_always_the_newest() -> None:
    cost = MESSAGE_OVERHEAD_TOKENS + 100  # 400 letters
    assert newest_that_fit(messages(400, 400, 400, 400), room=2 * cost) == 2
    assert newest_that_fit(messages(400, 400, 400, 400), room=2 * cost - 1) == 1
    assert newest_that_fit(messages(400, 400, 400, 400), room=10 * cost) == 4
    assert newest_that_fit(messages(8000), room=0) == 1  # the newest, even alone past the budget
    assert newest_that_fit([], room=1000) == 0


def test_messages_are_left_out_ten_at_a_time_so_the_first_one_sent_stays_for_several_turns() -> None:
    cost = MESSAGE_OVERHEAD_TOKENS + 100
    room = 30 * cost  # 30 messages fit
    assert first_sent(messages(*[400] * 30), room) == 0
    assert [first_sent(messages(*[400] * n), room) for n in (31, 35, 40, 41, 50)] == [10, 10, 10, 20, 20]
    assert TRIM_STEP == 10
    assert first_sent(messages(*[400] * 5), room=0) == 4  # nothing fits: the newest alone is sent
