"""What a model can write in the time a turn has, and the prompt-cache minimum of each model.

A model answers after its first token's delay and then writes at its output speed (settings
`SVC_AI_FIRST_TOKEN_SECONDS`, `SVC_AI_OUTPUT_TOKENS_PER_SECOND`); `max_tokens` for a call is what it can write in
the invocation's time left, less the time a repair round would take. Importing this does not load the SDK.
"""

from __future__ import annotations

from svcconf.api import budget
from svcconf.settings import get_settings

# The smallest prefix each model caches (docs/06-ai.md, Cost); below it nothing is cached, without an error.
CACHE_MIN_TOKENS = {
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 2048,
    "claude-sonnet-5": 1024,
    "claude-opus-5": 512,
    "claude-haiku-5-5": 512,
    "claude-sonnet-5-5": 2048,  # not published: the highest Sonnet minimum known
}
UNKNOWN_MODEL_CACHE_MIN_TOKENS = 4096  # the highest minimum known
# A low estimate of a prompt's tokens (tokenizers give ~3.5 characters a token, the newer ones more tokens).
CHARS_PER_TOKEN = 4
MIN_OUTPUT_TOKENS = 256


def cache_min_tokens(model: str) -> int:
    return CACHE_MIN_TOKENS.get(model.removesuffix("-latest"), UNKNOWN_MODEL_CACHE_MIN_TOKENS)


def estimated_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


def seconds_to_write(tokens: int) -> float:
    """How long the configured model takes to answer `tokens` output tokens."""
    settings = get_settings()
    return settings.ai_first_token_seconds + tokens / settings.ai_output_tokens_per_second


def tokens_within(seconds: float) -> int:
    """How many output tokens the configured model writes in `seconds` (its first token's delay included)."""
    settings = get_settings()
    return max(0, int((seconds - settings.ai_first_token_seconds) * settings.ai_output_tokens_per_second))


def turn_max_tokens(*, reserve_tokens: int, seconds_left: float | None = None) -> int:
    """`max_tokens` for a call with `seconds_left` (default: the invocation's, else the call's cap), keeping time
    to answer and for a repair round of `reserve_tokens` (0: none); never above SVC_AI_MAX_TOKENS."""
    settings = get_settings()
    left = seconds_left if seconds_left is not None else budget.seconds_left()
    left = min(settings.ai_timeout_seconds, left if left is not None else settings.ai_timeout_seconds)
    reserve = seconds_to_write(reserve_tokens) if reserve_tokens else 0.0
    tokens = tokens_within(left - budget.ANSWER_MARGIN_SECONDS - reserve)
    return max(MIN_OUTPUT_TOKENS, min(settings.ai_max_tokens, tokens))
