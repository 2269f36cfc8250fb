"""The AI provider's failures as the contract answers them: 503 not configured, 502 failed, 504 too slow.

Importing this module does not load the provider's SDK, so a handler can refuse early (`require_provider`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from svcconf.errors import FieldError, ServiceUnavailable, UpstreamFailed, UpstreamTimeout, field_path

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import ValidationError

    from svcconf.ai.usage import TokenUsage


class AiNotConfigured(ServiceUnavailable):
    # What to set, for whoever runs the service: a person trying it from the README meets this first.
    default_message = (
        "The AI assistant is not configured on this service: set the AI provider's key (ANTHROPIC_API_KEY, or "
        "in AWS its secret AiApiKeySecret); to run locally without a key, start with SVC_AI_PROVIDER=local."
    )


class AiFailed(UpstreamFailed):
    """The provider answered with an error, could not be reached, or rate-limited us past our retries."""

    default_message = "The AI provider failed to answer."


class AiTimeout(UpstreamTimeout):
    """The provider did not answer within the invocation's time left (or the configured cap)."""

    default_message = "The AI provider did not answer in time."


class AiUnusableAnswer(AiFailed):
    """The provider answered, but not with what was asked. Carries the answer's text and usage."""

    def __init__(self, message: str | None = None, *, text: str = "", usage: TokenUsage | None = None):
        super().__init__(message)
        self.text = text
        self.usage = usage


class AiRefused(AiUnusableAnswer):
    """`stop_reason: refusal`: the model declined to answer."""

    default_message = "The AI declined to answer this request."


class AiTruncated(AiUnusableAnswer):
    """`stop_reason: max_tokens`: the answer was cut off, so its JSON is incomplete."""

    default_message = "The AI's answer was cut off before it was complete."


class AiOutputInvalid(AiUnusableAnswer):
    """The answer's JSON does not match the requested model; `problems` names each field (for a repair round)."""

    default_message = "The AI's answer did not have the requested shape."

    def __init__(
        self,
        message: str | None = None,
        *,
        problems: list[FieldError],
        text: str = "",
        usage: TokenUsage | None = None,
    ):
        super().__init__(message, text=text, usage=usage)
        self.problems = problems


def problems_of(exc: ValidationError, *, limit: int = 30) -> list[FieldError]:
    """A validation error as `FieldError`s (`config.roles[2].name`), the first `limit`, for a repair round."""
    problems = []
    for error in exc.errors(include_url=False)[:limit]:
        message = "is not valid JSON" if error.get("type") == "json_invalid" else error.get("msg", "is invalid")
        problems.append(FieldError(field=field_path(tuple(error.get("loc", ()))), message=message))
    return problems


def describe_problems(problems: Sequence[FieldError]) -> str:
    """Problems as prompt lines: `- roles[2].name: duplicate role name 'Mods'`."""
    return "\n".join(f"- {problem.field}: {problem.message}" for problem in problems)
