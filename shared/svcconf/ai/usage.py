"""Token usage of one provider call: logged and emitted as metrics (cache reads and writes included), and added to
what the caller collects (`collected()`: a turn's calls, for the daily token budget of svcconf.limits)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from svcconf.observability import logger, metrics


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int = 0  # the uncached part of the prompt only
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0  # written to the prompt cache (billed 1.25x)
    cache_read_input_tokens: int = 0  # read from the prompt cache (billed 0.1x)

    @classmethod
    def from_api(cls, usage: Any) -> TokenUsage:
        """From the Messages API's `usage` object (a dict); absent or null counters count 0."""
        usage = usage if isinstance(usage, dict) else {}

        def count(name: str) -> int:
            value = usage.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(**{name: count(name) for name in cls.__dataclass_fields__})

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @property
    def counted_tokens(self) -> int:
        """What the call counts against a budget: everything sent and written, cache reads at a tenth (their price)."""
        cache_reads = -(-self.cache_read_input_tokens // 10)
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens + cache_reads


_collecting: ContextVar[list[TokenUsage] | None] = ContextVar("svcconf_ai_usage", default=None)


@contextmanager
def collected() -> Iterator[list[TokenUsage]]:
    """The usage of every provider call made inside the block, in order."""
    calls: list[TokenUsage] = []
    token = _collecting.set(calls)
    try:
        yield calls
    finally:
        _collecting.reset(token)


_METRICS = {
    "AiInputTokens": "input_tokens",
    "AiOutputTokens": "output_tokens",
    "AiCacheWriteTokens": "cache_creation_input_tokens",
    "AiCacheReadTokens": "cache_read_input_tokens",
}


def record_call(
    *,
    purpose: str,
    model: str,
    usage: TokenUsage | None,
    stop_reason: str | None,
    seconds: float,
    status: int | None = None,
    request_id: str | None = None,
    attempt: int = 1,
    estimated_input_tokens: int | None = None,
) -> None:
    """One log line and one set of metrics per provider call, whatever its outcome."""
    logger.info(
        "ai call",
        extra={
            "ai_purpose": purpose,
            "ai_model": model,
            "ai_status": status,
            "ai_stop_reason": stop_reason,
            "ai_request_id": request_id,
            "ai_attempt": attempt,
            "ai_seconds": round(seconds, 3),
            "ai_usage": usage.as_dict() if usage else None,
            "ai_estimated_input_tokens": estimated_input_tokens,  # before the call (svcconf.ai.token_estimate)
        },
    )
    calls = _collecting.get()
    if usage and calls is not None:
        calls.append(usage)
    metrics.add_metric(name="AiCalls", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="AiLatency", unit=MetricUnit.Milliseconds, value=round(seconds * 1000))
    if usage:
        for metric, field in _METRICS.items():
            metrics.add_metric(name=metric, unit=MetricUnit.Count, value=getattr(usage, field))
