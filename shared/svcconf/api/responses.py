"""openapi.json's account of every operation's answers: the security schemes, the success answer with its
examples, and each error status with when it happens, its body model and its headers."""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import content_types
from aws_lambda_powertools.event_handler.openapi.models import Example

from svcconf.errors import ErrorBody, LimitBody, reason_phrase

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse, OpenAPIResponseHeader

REQUEST_ID_HEADER = "x-request-id"

BEARER_AUTH = "bearerAuth"
BOT_TOKEN_AUTH = "botToken"  # noqa: S105 - the name of a security scheme, not a secret
SECURITY_SCHEMES: dict[str, Any] = {
    BEARER_AUTH: {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
    BOT_TOKEN_AUTH: {"type": "apiKey", "in": "header", "name": "x-bot-token"},
}


# Every operation can answer these: the transport rules (docs/03-api.md, Transport) and API Gateway's own answers.
TRANSPORT_ERRORS: dict[int, str] = {
    400: "a field is invalid, is a near miss of a known one (`current_config`: did you mean `currentConfig`?), or the "
    "body is not a JSON object; `details` names each field as a path",
    405: "the method is not POST (the `Allow` header says so)",
    413: "the body is larger than the operation's limit",
    415: "a body was sent whose Content-Type is not application/json",
    429: "API Gateway throttled the request; try again shortly",
    500: "an unexpected failure; `requestId` names it in the service's logs",
    502: "the function behind API Gateway failed",
    504: "the function did not answer within API Gateway's time limit",
}
# The errors of each kind of authentication (docs/03-api.md, Authentication), for the operations that use it.
BEARER_ERRORS: dict[int, str] = {
    401: "the bearer token is missing, malformed, expired, badly signed, or of the wrong issuer or audience",
    503: "bearer authentication is not configured, or its signing keys cannot be fetched right now",
}
BOT_ERRORS: dict[int, str] = {
    403: "the x-bot-token header is missing or wrong",
    503: "no bot token is configured on the service",
}
REQUEST_ID_DOC: dict[str, OpenAPIResponseHeader] = {
    REQUEST_ID_HEADER: {
        "description": "The request's id (API Gateway's, or the local runner's); error bodies of 5xx repeat it.",
        "schema": {"type": "string"},
    }
}


def success(description: str, model: Any, examples: Mapping[str, Any]) -> OpenAPIResponse:
    """An operation's success answer: its model, one example per action (name -> body) and the request id."""
    return {
        "description": description,
        "headers": REQUEST_ID_DOC,
        "content": {
            content_types.APPLICATION_JSON: {
                "model": model,
                "examples": {name: {"value": body} for name, body in examples.items()},
            }
        },
    }


def request_examples(examples: Mapping[str, Any]) -> dict[str, Example]:
    """`Body(openapi_examples=...)`: one request example per action (name -> body)."""
    return {name: Example(value=body) for name, body in examples.items()}


def error_responses(own: Mapping[int, str] | None = None, *, limited: bool = False) -> dict[int, OpenAPIResponse]:
    """Every error an operation can answer, all with the contract's body: its own (status -> when) and the
    transport's, which its own may reword. `limited`: the operation counts against the limits per user (its 429
    names the limit, with `Retry-After`) and the users' share of the bot's rate (a 503 with `Retry-After`)."""
    meanings = {**TRANSPORT_ERRORS, **(LIMIT_ERRORS if limited else {}), **(own or {})}
    if limited:
        known = meanings.get(HTTPStatus.SERVICE_UNAVAILABLE)
        meanings[HTTPStatus.SERVICE_UNAVAILABLE] = f"{known}; or {BOT_SHARE_FULL}" if known else BOT_SHARE_FULL

    def headers(status: int) -> dict[str, OpenAPIResponseHeader]:
        retry = limited and status in (HTTPStatus.TOO_MANY_REQUESTS, HTTPStatus.SERVICE_UNAVAILABLE)
        allow = status == HTTPStatus.METHOD_NOT_ALLOWED
        return {**REQUEST_ID_DOC, **(_ALLOW_DOC if allow else {}), **(_RETRY_AFTER_DOC if retry else {})}

    return {
        status: {
            "description": f"{reason_phrase(status)}: {meanings[status]}.",
            "headers": headers(status),
            "content": {
                content_types.APPLICATION_JSON: {
                    "model": LimitBody if limited and status == HTTPStatus.TOO_MANY_REQUESTS else ErrorBody
                }
            },
        }
        for status in sorted(meanings)
    }


# The limits per user (svcconf.limits, docs/07-operations.md, Limits), for the operations they count.
LIMIT_ERRORS: dict[int, str] = {
    429: "a limit per user is reached: `limit` names it and `retry_after` (the `Retry-After` header) says in how "
    "many seconds it frees; without `limit`, API Gateway throttled the request",
}
BOT_SHARE_FULL = "the users' share of the bot's rate on the chat platform is taken this second (`Retry-After: 1`)"
_RETRY_AFTER_DOC: dict[str, OpenAPIResponseHeader] = {
    "Retry-After": {
        "description": "Whole seconds to wait before trying again (a limit per user, or the bot's share).",
        "schema": {"type": "integer", "minimum": 1},
    }
}


_ALLOW_DOC: dict[str, OpenAPIResponseHeader] = {
    "Allow": {"description": "The methods the operation allows: POST.", "schema": {"type": "string"}}
}
