"""The invocation's time budget: what a call may still wait, given the Lambda context's clock."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from svcconf.api import budget


@dataclass
class Context:
    remaining_millis: int

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis


def test_outside_an_invocation_a_call_waits_what_it_asked_for() -> None:
    budget.start(object())
    assert budget.seconds_left() is None
    assert budget.clip(20.0) == 20.0


def test_a_call_is_clipped_to_the_time_left_less_the_margin_to_answer() -> None:
    budget.start(Context(remaining_millis=15_000))
    assert budget.clip(20.0) == pytest.approx(15.0 - budget.ANSWER_MARGIN_SECONDS, abs=0.05)
    assert budget.clip(3.0) == 3.0


def test_a_spent_budget_leaves_no_time_rather_than_a_negative_one() -> None:
    budget.start(Context(remaining_millis=500))
    assert budget.clip(10.0) == 0.0


def test_a_stopped_budget_no_longer_clips() -> None:
    budget.start(Context(remaining_millis=500))
    budget.stop()
    assert budget.seconds_left() is None
    assert budget.clip(10.0) == 10.0
