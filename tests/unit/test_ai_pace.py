"""What a turn may write in its time, the salvage of a cut-off answer, and the prompt cache's minimum prefix."""

from __future__ import annotations

import json

import pytest

from svcconf.ai.pace import CACHE_MIN_TOKENS, cache_min_tokens, estimated_tokens, tokens_within, turn_max_tokens
from svcconf.conversation.envelope import salvage
from svcconf.conversation.prompt import SYSTEM_PROMPT
from svcconf.settings import get_settings
from svcconf.templates.generation import SYSTEM_PROMPT as TEMPLATE_SYSTEM_PROMPT


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch):
    for name in ("SVC_AI_FIRST_TOKEN_SECONDS", "SVC_AI_OUTPUT_TOKENS_PER_SECOND", "SVC_AI_MAX_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_max_tokens_is_what_the_model_writes_in_the_time_left_less_a_repair_round() -> None:
    # 20 s: 1.5 s to answer, a 400-token repair (1.8 + 400/63 s), then 1.8 s to the first token at 63 tokens/s
    assert turn_max_tokens(reserve_tokens=400, seconds_left=20) == int((20 - 1.5 - 1.8 - 400 / 63 - 1.8) * 63)
    assert turn_max_tokens(reserve_tokens=0, seconds_left=60) == int((25 - 1.5 - 1.8) * 63)  # the call's own cap
    assert turn_max_tokens(reserve_tokens=0, seconds_left=10) == int((10 - 1.5 - 1.8) * 63)


def test_max_tokens_follows_the_configured_pace_and_caps(monkeypatch) -> None:
    monkeypatch.setenv("SVC_AI_OUTPUT_TOKENS_PER_SECOND", "200")
    monkeypatch.setenv("SVC_AI_FIRST_TOKEN_SECONDS", "0.5")
    monkeypatch.setenv("SVC_AI_MAX_TOKENS", "2000")
    get_settings.cache_clear()

    assert tokens_within(10.5) == 2000
    assert turn_max_tokens(reserve_tokens=0, seconds_left=26) == 2000  # SVC_AI_MAX_TOKENS caps it
    assert turn_max_tokens(reserve_tokens=0, seconds_left=1) == 256  # never below a usable answer


CUT_OFF_EDITS = [{"op": "add", "kind": "channel", "name": f"room-{n}", "cat": "Area 1"} for n in range(5)]
CUT_OFF_TEXT = json.dumps({"reply": "Adding rooms.", "edits": CUT_OFF_EDITS})
REPLY_ENDS = CUT_OFF_TEXT.index('"Adding rooms."') + len('"Adding rooms."')  # just past its closing quote


def test_an_answer_cut_off_before_its_reply_closes_gives_no_reply_and_no_edits() -> None:
    for cut in range(REPLY_ENDS):
        assert salvage(CUT_OFF_TEXT[:cut]) == (None, [])


def test_an_answer_cut_off_after_its_reply_gives_the_reply_and_its_complete_edits() -> None:
    for cut in range(REPLY_ENDS, len(CUT_OFF_TEXT)):
        reply, salvaged = salvage(CUT_OFF_TEXT[:cut])
        whole = min(5, CUT_OFF_TEXT[:cut].count("}"))  # every complete edit closes with a brace
        assert reply == "Adding rooms."
        assert [e.name for e in salvaged] == [f"room-{n}" for n in range(whole)]


def test_salvage_stops_at_an_edit_that_does_not_parse() -> None:
    text = '{"reply": "x", "edits": [{"op": "add", "kind": "role", "name": "A"}, {"op": "fly"}, {"op": "add"'
    reply, salvaged = salvage(text)
    assert (reply, [e.name for e in salvaged]) == ("x", ["A"])
    assert salvage("not json") == (None, [])


@pytest.mark.parametrize(
    ("model", "prompt"),
    [(get_settings().ai_model, SYSTEM_PROMPT), (get_settings().template_model, TEMPLATE_SYSTEM_PROMPT)],
    ids=["svcAiChat", "template worker"],
)
def test_the_system_prompts_reach_their_models_cacheable_minimum(model, prompt) -> None:
    assert model in CACHE_MIN_TOKENS
    assert estimated_tokens(prompt) >= cache_min_tokens(model)


def test_an_unknown_model_is_given_the_highest_minimum_known() -> None:
    assert cache_min_tokens("claude-someday-9") == max(CACHE_MIN_TOKENS.values())
