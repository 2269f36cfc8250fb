"""Domain exceptions. Each carries its HTTP status; `api.resolver` is the one place that renders them."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from pydantic import BaseModel, Field


class FieldError(BaseModel):
    field: str
    message: str
    rule: str | None = Field(None, description="The lint rule that found it, when `acknowledge` may name it.")


class ErrorBody(BaseModel):
    """The error body of every refusal (docs/03-api.md, Errors)."""

    error: str
    message: str
    code: int
    details: list[FieldError] | None = None
    requestId: str | None = None  # noqa: N815 - the contract's spelling
    deployment_id: str | None = Field(
        None, description="deployToChat's 409 about a deployment: which one (to cancel, wait for, or roll back first)."
    )


class LimitBody(ErrorBody):
    """A 429's body: which limit per user is reached and when it frees (absent when API Gateway throttled)."""

    limit: str | None = Field(None, examples=["SVC_AI_TURNS_PER_MINUTE"], description="The limit's setting.")
    retry_after: int | None = Field(None, examples=[42], description="Whole seconds until it frees: `Retry-After`.")
    frees_at: str | None = Field(None, examples=["2026-11-25T12:01:00Z"], description="When it frees (UTC).")


def field_path(loc: tuple[str | int, ...] | list[str | int]) -> str:
    """("body", "categories", 2, "channels", 0, "name") -> "categories[2].channels[0].name"."""
    parts = list(loc)
    if parts and parts[0] == "body":
        parts = parts[1:]
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part != "":
            path += f".{part}" if path else str(part)
    return path or "body"


# The API's names where Python's (RFC 9110) differ; the 502's is plain "Error" (docs/03-api.md, Errors).
_CONTRACT_PHRASES = {413: "Payload Too Large", 422: "Unprocessable Entity", 502: "Error"}


def reason_phrase(status: int) -> str:
    return _CONTRACT_PHRASES.get(status) or HTTPStatus(status).phrase


class ServiceError(Exception):
    """Base of every error the service answers with on purpose."""

    status: int = HTTPStatus.INTERNAL_SERVER_ERROR
    default_message: str = "The service failed unexpectedly."

    def __init__(
        self,
        message: str | None = None,
        *,
        details: list[FieldError] | None = None,
        retry_after_seconds: int | None = None,
        **extra: Any,
    ):
        self.message = message or self.default_message
        self.details = details
        self.retry_after_seconds = retry_after_seconds  # the `Retry-After` header of a 429 or 503
        self.extra = extra  # additional body fields, e.g. install_url on a 409
        super().__init__(self.message)

    def headers(self) -> dict[str, str]:
        return {} if self.retry_after_seconds is None else {"Retry-After": str(self.retry_after_seconds)}


class BadRequest(ServiceError):
    status = HTTPStatus.BAD_REQUEST
    default_message = "The request is not valid."

    @classmethod
    def for_field(cls, field: str, message: str) -> BadRequest:
        return cls(f"{field}: {message}", details=[FieldError(field=field, message=message)])


class Unauthorized(ServiceError):
    status = HTTPStatus.UNAUTHORIZED
    default_message = "Authentication is missing or the token is invalid."


class Forbidden(ServiceError):
    status = HTTPStatus.FORBIDDEN
    default_message = "The caller is not allowed to do this."


class NotFound(ServiceError):
    status = HTTPStatus.NOT_FOUND
    default_message = "The requested resource was not found."


class MethodNotAllowed(ServiceError):
    status = HTTPStatus.METHOD_NOT_ALLOWED
    default_message = "Only POST is allowed on this operation."


class Conflict(ServiceError):
    status = HTTPStatus.CONFLICT
    default_message = "The request conflicts with the current state."


class PayloadTooLarge(ServiceError):
    status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    default_message = "The request body is too large."


class UnsupportedMediaType(ServiceError):
    status = HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    default_message = "The request body must be sent as Content-Type: application/json."


class TooManyRequests(ServiceError):
    status = HTTPStatus.TOO_MANY_REQUESTS
    default_message = "Too many requests; try again later."


class LimitReached(TooManyRequests):
    """A per-user limit (svcconf.limits): the body names it (`limit`) and when it frees (`retry_after`, `frees_at`)."""

    default_message = "A limit per user is reached; try again later."

    def __init__(self, message: str, *, limit: str, retry_after: int, frees_at: str):
        super().__init__(
            message, retry_after_seconds=retry_after, limit=limit, retry_after=retry_after, frees_at=frees_at
        )


class ServiceUnavailable(ServiceError):
    status = HTTPStatus.SERVICE_UNAVAILABLE
    default_message = "The service is not available right now."


class UpstreamFailed(ServiceError):
    """An outside service (the chat platform, the AI provider) failed: 502."""

    status = HTTPStatus.BAD_GATEWAY
    default_message = "A call to an outside service failed."


class UpstreamTimeout(ServiceError):
    status = HTTPStatus.GATEWAY_TIMEOUT
    default_message = "An outside service did not answer in time."


# Deployment codes
class CodeNotFound(NotFound):
    default_message = "The deployment code is unknown, expired or already used."


class CodeBoundToAnotherUser(Forbidden):
    default_message = "This deployment code was issued to another user."


# Backups
class BackupNotFound(NotFound):
    default_message = "No backup with this backup_id exists."


class BackupTooLarge(PayloadTooLarge):
    default_message = "The backup is too large to store, even compressed."
