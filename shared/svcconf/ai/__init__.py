"""The AI provider adapter (the Messages API through the `anthropic` SDK).

Only the AI functions import the SDK: importing `svcconf.ai` (this package), `svcconf.ai.errors` or
`svcconf.ai.usage` does not; `svcconf.ai.client` does (about 1 s of init), so import it at the top of the AI
handlers and workers only, never from code the other functions share.

How to call it::

    from svcconf.ai.client import ask_structured          # loads the SDK
    from svcconf.settings import get_settings

    class TemplateBatch(BaseModel):                       # one envelope model; its class name is the schema's
        templates: list[Template]                         # title, which the local model dispatches on

    answer = ask_structured(
        TemplateBatch,
        system="You write server templates ...",          # sent as one system block with cache_control
        messages=[{"role": "user", "content": "Write 10 templates."}],
        model=get_settings().template_model,              # default: get_settings().ai_model (SVC_AI_MODEL)
        purpose="templates",                              # names the call in logs and metrics
    )
    answer.output      # a validated TemplateBatch
    answer.usage       # TokenUsage(input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens)

It raises (all `svcconf.errors.ServiceError`s, so a handler's answer is the contract's):
`AiNotConfigured` (503: no key), `AiTimeout` (504: slower than the invocation's time left or
`SVC_AI_TIMEOUT_SECONDS`), `AiFailed` (502: error status, connection failure, 429/529/5xx past the retries),
and three `AiUnusableAnswer`s (502, carrying `.text` and `.usage`): `AiRefused` (stop_reason refusal),
`AiTruncated` (stop_reason max_tokens) and `AiOutputInvalid` (the JSON does not match the model;
`.problems` is a list of `FieldError(field, message)` to send back in a repair round).

`require_provider()` (503 without a key) does not load the SDK: an operation that only queues AI work can
refuse early with it.

Time: every call is clipped to `svcconf.api.budget` (the Lambda invocation's time left, started by
`lambda_entry_point`); a worker started otherwise should call `svcconf.api.budget.start(context)` itself. The
budget is a ContextVar: threads started with `contextvars.copy_context().run` see it, plain threads do not.

May import: the foundation (errors, settings, clock, observability) and api (the time budget).
"""

from __future__ import annotations

from svcconf.ai.errors import (
    AiFailed,
    AiNotConfigured,
    AiOutputInvalid,
    AiRefused,
    AiTimeout,
    AiTruncated,
    AiUnusableAnswer,
)
from svcconf.ai.usage import TokenUsage
from svcconf.observability import logger
from svcconf.settings import get_settings


def require_provider() -> str:
    """The provider's key; `AiNotConfigured` (503) when none is set or its secret cannot be read."""
    try:
        key = get_settings().resolved_anthropic_api_key()
    except Exception as exc:  # e.g. the template's secret before a value was put into it
        logger.warning("the AI provider's key could not be read", extra={"error": type(exc).__name__})
        raise AiNotConfigured() from None
    if not key:
        raise AiNotConfigured()
    return key


__all__ = [
    "AiFailed",
    "AiNotConfigured",
    "AiOutputInvalid",
    "AiRefused",
    "AiTimeout",
    "AiTruncated",
    "AiUnusableAnswer",
    "TokenUsage",
    "require_provider",
]
