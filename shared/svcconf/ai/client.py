"""Structured calls to the Messages API: `ask_structured(OutputModel, system=..., messages=...)`.

Importing this module loads the `anthropic` SDK: only the AI functions do (see the package's docstring).
One client per key and base URL, built at first use and kept while the Lambda instance lives.

- Structured output: the request `messages.parse(output_format=OutputModel)` sends (`output_config.format`,
  the model's JSON schema rewritten by the SDK's public `transform_schema`), sent with `messages.create` and
  validated against the model here. `parse()` would raise its ValidationError after dropping the message, and
  with it the usage, the stop reason (a truncated answer is invalid JSON too) and the text a repair round
  needs. The provider does not enforce numeric and length constraints; this validation does.
- The system prompt is one text block with `cache_control`, so repeated turns read it from the prompt cache.
- No sampling parameters (the 2.x SDK and the 5.5 models refuse them); thinking stays the model's default.
- Retries are ours, not the SDK's: 429, 529, 5xx and connection failures are retried while the invocation's
  budget (`svcconf.api.budget`) leaves time for another attempt, honouring `retry-after`; a timeout is not retried.
"""

from __future__ import annotations

import gc
import threading
import time
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from svcconf.ai import require_provider
from svcconf.ai.errors import AiFailed, AiOutputInvalid, AiRefused, AiTimeout, AiTruncated, problems_of
from svcconf.ai.token_estimate import estimated_request_tokens
from svcconf.ai.usage import TokenUsage, record_call
from svcconf.api import budget
from svcconf.errors import FieldError
from svcconf.observability import logger
from svcconf.settings import get_settings

# The SDK's import makes ~145,000 objects that live as long as the process: collecting while it runs finds
# nothing to free, and once they are frozen no full collection scans them again, neither in the rest of the
# init nor between invocations (svcAiChat's init: 2,270 -> 2,147 ms median, `python -m bench ai`).
_collecting = gc.isenabled()
gc.disable()
try:
    import anthropic
finally:
    gc.freeze()
    if _collecting:
        gc.enable()

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MAX_ATTEMPTS = 3
# Not worth starting an attempt with less time than this: it could not produce an answer.
MIN_ATTEMPT_SECONDS = 2.0
BACKOFF_SECONDS = (0.5, 1.0)
MAX_RETRY_AFTER_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 5.0
# Statuses worth another attempt: timeouts, conflicts, rate limits, the provider's own failures (529 overloaded).
_RETRYABLE = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class StructuredAnswer[T: BaseModel]:
    output: T  # the validated envelope
    text: str  # the JSON the model wrote
    usage: TokenUsage
    stop_reason: str | None
    model: str
    request_id: str | None


_client_lock = threading.Lock()


@cache
def _client(api_key: str, base_url: str | None) -> anthropic.Anthropic:
    # max_retries=0: the attempts are counted and timed against the invocation's budget here.
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0)


def get_client() -> anthropic.Anthropic:
    """The SDK client for the configured key and base URL (`AiNotConfigured` without a key)."""
    key = require_provider()
    with _client_lock:
        return _client(key, get_settings().anthropic_base_url)


def system_blocks(system: str, *, cache_ttl: Literal["5m", "1h"] = "5m") -> list[dict[str, Any]]:
    """The system prompt as one text block marked for the prompt cache."""
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral", "ttl": cache_ttl}}]


def ask_structured[T: BaseModel](
    output_format: type[T],
    *,
    system: str,
    messages: Sequence[Mapping[str, Any]],  # the Messages API's message shapes, sent as JSON
    model: str | None = None,
    max_tokens: int | None = None,
    purpose: str = "chat",
    timeout: float | None = None,
    cache_ttl: Literal["5m", "1h"] = "5m",
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None,
) -> StructuredAnswer[T]:
    """One structured answer from the model, validated against `output_format`.

    `timeout` caps the whole call, retries included (default `SVC_AI_TIMEOUT_SECONDS`); the invocation's time
    left clips it further. Raises the errors of `svcconf.ai.errors` (see the package's docstring).
    """
    settings = get_settings()
    client = get_client()
    model = model or settings.ai_model
    max_tokens = max_tokens or settings.ai_max_tokens
    cap = timeout if timeout is not None else settings.ai_timeout_seconds
    give_up_at = time.monotonic() + cap
    output_config: dict[str, Any] = {"format": output_schema(output_format)}
    if effort:
        output_config["effort"] = effort
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system_blocks(system, cache_ttl=cache_ttl),
        "messages": list(messages),
        "output_config": output_config,
    }
    estimated = estimated_request_tokens(system, request["messages"], output_config)  # logged beside the usage

    for attempt in range(1, MAX_ATTEMPTS + 1):
        wait = budget.clip(give_up_at - time.monotonic())
        if wait < MIN_ATTEMPT_SECONDS:
            logger.warning("ai call skipped: no time left", extra={"ai_purpose": purpose, "ai_attempt": attempt})
            raise AiTimeout()
        started = time.monotonic()
        try:
            message = client.messages.create(
                **request, timeout=anthropic.Timeout(wait, connect=min(wait, CONNECT_TIMEOUT_SECONDS))
            )
        except anthropic.APITimeoutError:
            record_call(purpose=purpose, model=model, usage=None, stop_reason=None, seconds=_since(started))
            raise AiTimeout() from None
        except anthropic.APIStatusError as exc:
            record_call(
                purpose=purpose,
                model=model,
                usage=None,
                stop_reason=None,
                seconds=_since(started),
                status=exc.status_code,
                request_id=exc.request_id,
                attempt=attempt,
            )
            logger.warning(
                "ai provider refused the call",
                extra={"ai_status": exc.status_code, "ai_error_type": _error_type(exc), "ai_attempt": attempt},
            )
            delay = _retry_delay(exc, attempt)
            if delay is None or not _time_for_another(give_up_at, delay):
                raise AiFailed() from None
            time.sleep(delay)
            continue
        except anthropic.APIConnectionError:
            record_call(purpose=purpose, model=model, usage=None, stop_reason=None, seconds=_since(started))
            logger.warning("ai provider unreachable", extra={"ai_attempt": attempt})
            delay = BACKOFF_SECONDS[min(attempt, len(BACKOFF_SECONDS)) - 1]
            if attempt == MAX_ATTEMPTS or not _time_for_another(give_up_at, delay):
                raise AiFailed() from None
            time.sleep(delay)
            continue
        return _answer(
            message, output_format, purpose=purpose, model=model, started=started, attempt=attempt, estimated=estimated
        )
    raise AiFailed()  # not reached: the last attempt returns or raises


def _since(started: float) -> float:
    return time.monotonic() - started


def _error_type(exc: anthropic.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def _retry_delay(exc: anthropic.APIStatusError, attempt: int) -> float | None:
    """Seconds to wait before the next attempt, or None when this failure is final."""
    headers = exc.response.headers
    should_retry = (headers.get("x-should-retry") or "").lower()
    if attempt >= MAX_ATTEMPTS or should_retry == "false":
        return None
    if exc.status_code not in _RETRYABLE and should_retry != "true":
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) / scale
        except ValueError:
            continue
        if 0 <= seconds <= MAX_RETRY_AFTER_SECONDS:
            return seconds
        return None  # the provider asks for a longer pause than an interactive call can give
    return BACKOFF_SECONDS[min(attempt, len(BACKOFF_SECONDS)) - 1]


def _time_for_another(give_up_at: float, delay: float) -> bool:
    left = budget.clip(give_up_at - time.monotonic())
    return left - delay >= MIN_ATTEMPT_SECONDS


def _answer[T: BaseModel](
    message: anthropic.types.Message,
    output_format: type[T],
    *,
    purpose: str,
    model: str,
    started: float,
    attempt: int,
    estimated: int | None = None,
) -> StructuredAnswer[T]:
    usage = TokenUsage.from_api(message.usage.model_dump() if message.usage else None)
    stop_reason = message.stop_reason
    request_id = message._request_id
    record_call(
        purpose=purpose,
        model=model,
        usage=usage,
        stop_reason=stop_reason,
        seconds=_since(started),
        status=200,
        request_id=request_id,
        attempt=attempt,
        estimated_input_tokens=estimated,
    )
    text = "".join(block.text for block in message.content if block.type == "text")  # thinking blocks skipped
    if stop_reason == "refusal":
        raise AiRefused(text=text, usage=usage)
    if stop_reason == "max_tokens":
        raise AiTruncated(text=text, usage=usage)
    if not text.strip():
        problem = FieldError(field="body", message="the answer holds no JSON text")
        raise AiOutputInvalid(problems=[problem], text=text, usage=usage)
    try:
        output = output_format.model_validate_json(text)
    except ValidationError as exc:
        raise AiOutputInvalid(problems=problems_of(exc), text=text, usage=usage) from None
    return StructuredAnswer(
        output=output,
        text=text,
        usage=usage,
        stop_reason=stop_reason,
        model=message.model or model,
        request_id=request_id,
    )


@cache
def output_schema(output_format: type[BaseModel]) -> dict[str, Any]:
    """`output_config.format` for a model, as `messages.parse(output_format=...)` builds it."""
    return {"type": "json_schema", "schema": anthropic.transform_schema(output_format.model_json_schema())}
