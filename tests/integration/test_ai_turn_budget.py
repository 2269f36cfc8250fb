"""svcAiChat v4 (issue 31, finding 5): the input budget counts everything a turn sends, and the day's tokens are
reserved before the call and settled after, so neither one turn nor parallel turns pass what they are allowed.

Today's main sent a 1 MB turn with a long `questionnaire_data` whole (187,489 input tokens against a 60,000
budget) and checked the day's tokens before a turn, counting them after: 10 parallel turns of a fresh user reached
1,881,830 against a day's 1,000,000."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest

from local.ai_model.server import Step
from svcconf import limits
from svcconf.settings import get_settings
from tests.helpers import ai_chat
from tests.helpers.ai_chat import user
from tests.helpers.handlers import bearer

NOON = datetime(2026, 11, 25, 12, 0, 20, tzinfo=UTC)
PROSE = "our reading group meets weekly and shares notes on each chapter before the meeting, with moderators. "


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.setattr(limits, "utc_now", lambda: NOON)
    monkeypatch.setattr(limits, "_refused_until", {})


@pytest.fixture
def reservations() -> Iterator[list[dict]]:
    """What each turn reserved and counted, from its log line."""
    found: list[dict] = []
    handler = logging.Handler()
    handler.emit = lambda record: (  # type: ignore[method-assign]
        found.append(record.__dict__) if getattr(record, "ai_tokens_reserved", None) is not None else None
    )
    logging.getLogger().addHandler(handler)
    yield found
    logging.getLogger().removeHandler(handler)


def day_count(sub: str) -> int:
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(get_settings().usage_table)
    item = table.get_item(Key={"key": f"ai-tokens#{sub}#{int(NOON.timestamp()) // 86_400 * 86_400}"}).get("Item")
    return int(item["used"]) if item else 0


def turns_counted(sub: str) -> int:
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(get_settings().usage_table)
    item = table.get_item(Key={"key": f"ai-turns#{sub}#{int(NOON.timestamp()) // 60 * 60}"}).get("Item")
    return int(item["used"]) if item else 0


def counted(usage: dict[str, int]) -> int:
    return (
        usage["input_tokens"]
        + usage["output_tokens"]
        + usage["cache_creation_input_tokens"]
        + -(-usage["cache_read_input_tokens"] // 10)
    )


def test_a_turn_whose_questionnaire_alone_passes_the_budget_is_400_naming_it_and_the_model_is_not_asked(
    invoke, chat, clock
):
    questionnaire = {"purpose": PROSE * 3_000}  # about 300,000 characters: some 75,000 tokens
    response = invoke(
        "svcAiChat", {"messages": [user("Build it")], "questionnaire_data": questionnaire}, headers=bearer("ana")
    )
    assert response.status == 400, response.body
    [detail] = response.body["details"]
    assert detail["field"] == "questionnaire_data"
    assert "SVC_AI_MAX_INPUT_TOKENS" in detail["message"]
    assert [r for r in chat.requests if r.path == "/v1/messages"] == []
    assert day_count("ana") == 0


def test_files_count_at_their_allowance_and_the_largest_field_is_named(invoke, chat, clock, monkeypatch):
    monkeypatch.setenv("SVC_AI_MAX_INPUT_TOKENS", "40000")
    get_settings.cache_clear()
    pdfs = [{"url": f"https://files.example/rules-{i}.pdf", "name": f"rules-{i}.pdf"} for i in range(2)]
    images = [f"https://files.example/shot-{i}.png" for i in range(3)]
    body = {"messages": [user("Use these")], "attachments": pdfs, "file_urls": images}
    response = invoke("svcAiChat", body, headers=bearer("ana"))
    assert response.status == 400, response.body
    assert [detail["field"] for detail in response.body["details"]] == ["attachments"]  # 2 PDFs: 80,000
    assert [r for r in chat.requests if r.path == "/v1/messages"] == []
    # One PDF and three images fit (40,000 + 4,800 beside a ~16,000-token prompt and schema would not in 40,000: the
    # budget is raised to let them)
    monkeypatch.setenv("SVC_AI_MAX_INPUT_TOKENS", "64000")
    get_settings.cache_clear()
    assert invoke("svcAiChat", {**body, "attachments": pdfs[:1]}, headers=bearer("ana")).status == 200


def test_a_turn_reserves_its_tokens_and_settles_them_from_the_reported_usage(invoke, chat, clock, reservations):
    response = invoke("svcAiChat", {"messages": [user("A server for my book club")]}, headers=bearer("ana"))
    assert response.status == 200
    [line] = reservations
    [usage] = chat.usages
    # The reservation covered the call and a repair round; the day keeps only what the provider reported
    assert line["ai_tokens_reserved"] > counted(usage)
    assert day_count("ana") == counted(usage) == line["ai_tokens_counted"]


def test_a_failing_turn_s_repair_round_is_inside_its_reservation(invoke, chat, clock, reservations):
    chat.script(Step(text="not json"), Step(text="still not json"))
    invoke("svcAiChat", {"messages": [user("A server for my book club")]}, headers=bearer("ana"))
    assert len([r for r in chat.requests if r.path == "/v1/messages"]) == 2
    [line] = reservations
    spent = sum(counted(usage) for usage in chat.usages)
    assert day_count("ana") == spent <= line["ai_tokens_reserved"]


def test_parallel_turns_cannot_pass_the_day_s_tokens_together(invoke, chat, clock, reservations, monkeypatch):
    # A turn reserves what the model may write in the time it has left (min(AI timeout, invocation's time left)):
    # with the invocation's time 30 s above the AI timeout, a turn that reaches its reservation late on a busy
    # machine still reserves what the probe did, and a held turn outlasts a slow refusal (set before the probe)
    monkeypatch.setenv("SVC_AI_TIMEOUT_SECONDS", "90")
    monkeypatch.setattr(ai_chat, "TIMEOUT_SECONDS", 120)
    get_settings.cache_clear()
    # Given a day's limit that holds two turns' reservations and not three (measured on another user's turn)
    assert invoke("svcAiChat", {"messages": [user("A server for my book club")]}, headers=bearer("probe")).status == 200
    reserved = reservations[0]["ai_tokens_reserved"]
    monkeypatch.setenv("SVC_AI_TOKENS_PER_DAY", str(int(reserved * 2.5)))
    get_settings.cache_clear()
    calls_before = len([r for r in chat.requests if r.path == "/v1/messages"])
    # The model answers only once three turns have come back (or a minute has passed): every turn reserves before
    # the first settles, however busy the machine (a turn builds a ~16,000-token prompt before it reserves)
    answered_three = threading.Event()

    def held(request: object) -> Step:
        answered_three.wait(timeout=60)
        return Step()

    chat.script(*[held for _ in range(5)])
    # When a fresh user sends five turns at once
    start = threading.Barrier(5)
    answers: list = [None] * 5

    def send(index: int) -> None:
        start.wait()
        answers[index] = invoke("svcAiChat", {"messages": [user("A server for my book club")]}, headers=bearer("eve"))
        if sum(answer is not None for answer in answers) >= 3:
            answered_three.set()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then two were answered, three refused 429 before the model was asked, and the day holds what was spent
    statuses = sorted(answer.status for answer in answers)
    assert statuses == [200, 200, 429, 429, 429], [answer.body for answer in answers]
    assert {a.body["limit"] for a in answers if a.status == 429} == {"SVC_AI_TOKENS_PER_DAY"}
    asked = [r for r in chat.requests if r.path == "/v1/messages"][calls_before:]
    assert len(asked) == 2
    spent = sum(counted(usage) for usage in chat.usages[-2:])
    assert day_count("eve") == spent <= int(reserved * 2.5)
    print(f"\n5 parallel turns, day's limit {int(reserved * 2.5):,} (2.5 reservations of {reserved:,}): {statuses}")


def test_a_turn_whose_reservation_passes_the_day_is_refused_before_the_call_and_gives_its_turn_back(
    invoke, chat, clock, reservations, monkeypatch
):
    assert invoke("svcAiChat", {"messages": [user("A server for my book club")]}, headers=bearer("probe")).status == 200
    reserved = reservations[0]["ai_tokens_reserved"]
    monkeypatch.setenv("SVC_AI_TOKENS_PER_DAY", str(reserved // 2))
    get_settings.cache_clear()
    calls_before = len([r for r in chat.requests if r.path == "/v1/messages"])

    refused = invoke("svcAiChat", {"messages": [user("A server for my book club")]}, headers=bearer("zoe"))

    assert refused.status == 429
    assert refused.body["limit"] == "SVC_AI_TOKENS_PER_DAY"
    assert len([r for r in chat.requests if r.path == "/v1/messages"]) == calls_before
    assert (day_count("zoe"), turns_counted("zoe")) == (0, 0)
