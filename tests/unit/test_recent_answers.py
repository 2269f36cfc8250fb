"""Public answers kept briefly per instance (svcconf/chat/recent.py), on a fake clock."""

from __future__ import annotations

import pytest

from svcconf.chat import recent
from svcconf.chat.recent import RecentAnswers


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_answer_is_kept_for_its_seconds_then_fetched_again() -> None:
    clock, fetched = Clock(), []
    answers = RecentAnswers[str](60.0, clock=clock)

    def fetch() -> str:
        fetched.append(clock.now)
        return f"answer at {clock.now:g}"

    assert answers.get_or_fetch("svcStudyHall", fetch) == "answer at 100"
    clock.now += 59.9
    assert answers.get_or_fetch("svcStudyHall", fetch) == "answer at 100"
    clock.now += 0.1
    assert answers.get_or_fetch("svcStudyHall", fetch) == "answer at 160"
    assert fetched == [100.0, 160.0]


def test_a_refusal_is_not_kept() -> None:
    answers = RecentAnswers[str](60.0, clock=Clock())
    calls = []

    def unknown() -> str:
        calls.append(1)
        raise LookupError("unknown code")

    for _ in range(2):
        with pytest.raises(LookupError):
            answers.get_or_fetch("nope", unknown)
    assert len(calls) == 2


def test_the_oldest_answers_are_dropped_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recent, "MAX_ENTRIES", 2)
    answers = RecentAnswers[int](60.0, clock=Clock())
    for key in ("a", "b", "c"):
        answers.get_or_fetch(key, lambda key=key: ord(key))
    assert answers.get_or_fetch("b", lambda: -1) == ord("b")
    assert answers.get_or_fetch("a", lambda: -1) == -1  # "a" was dropped for "c"
