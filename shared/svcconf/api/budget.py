"""The invocation's time budget: every outbound call (chat platform, AI provider) gives up before Lambda does.

`lambda_entry_point` starts the budget from the Lambda context; clients ask `clip()` for how long they may
wait. Outside an invocation (tests, scripts) there is no budget and `clip()` returns what it was given.
"""

from __future__ import annotations

import time
from contextvars import ContextVar

# Left after a call gives up: enough to log, render the 502/504 and return before the function times out.
ANSWER_MARGIN_SECONDS = 1.5

_deadline: ContextVar[float | None] = ContextVar("svcconf_deadline", default=None)


def start(context: object) -> None:
    """Begin the budget of one invocation from its Lambda context (a context without a clock sets none)."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    millis = remaining() if callable(remaining) else None
    _deadline.set(time.monotonic() + millis / 1000 if isinstance(millis, int | float) else None)


def seconds_left() -> float | None:
    """Seconds until the function's timeout, or None outside a budgeted invocation."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def clip(seconds: float, margin: float = ANSWER_MARGIN_SECONDS) -> float:
    """`seconds`, or less if the invocation ends sooner (never below zero): what a call may still wait."""
    left = seconds_left()
    return seconds if left is None else max(0.0, min(seconds, left - margin))


def stop() -> None:
    """End the invocation's budget: what runs next in this context (a test, a script) has none."""
    _deadline.set(None)
