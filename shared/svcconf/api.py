"""The resolver factory: one Powertools REST resolver per operation, with the contract's transport rules.

Every answer, success or error, leaves through here: the body limits (413), the media type (415), auth before
body validation, pydantic validation errors as the contract's 400 with one `details` entry per field, domain
errors with their status, unknown routes (404), other methods (405), unexpected exceptions (500 with
`requestId`, nothing else), and the `x-request-id` header on all of them.
"""

from __future__ import annotations

import base64
import uuid
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import _DEPENDS_CACHE_KEY
from aws_lambda_powertools.event_handler.depends import (
    DependencyResolutionError,
    build_dependency_tree,
    solve_dependencies,
)
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares.openapi_validation import OpenAPIRequestValidationMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

from svcconf import budget
from svcconf.errors import (
    BadRequest,
    ErrorBody,
    FieldError,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    UnsupportedMediaType,
    field_path,
    reason_phrase,
)
from svcconf.observability import logger, metrics, tracer
from svcconf.settings import get_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
    from aws_lambda_powertools.event_handler.types import EventHandlerInstance
    from aws_lambda_powertools.utilities.typing import LambdaContext

KIB = 1024
MIB = 1024 * KIB
REQUEST_ID_HEADER = "x-request-id"

BEARER_AUTH = "bearerAuth"
BOT_TOKEN_AUTH = "botToken"  # noqa: S105 - the name of a security scheme, not a secret
SECURITY_SCHEMES: dict[str, Any] = {
    BEARER_AUTH: {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
    BOT_TOKEN_AUTH: {"type": "apiKey", "in": "header", "name": "x-bot-token"},
}

_HUMAN_MESSAGES = {
    "missing": "is required",
    "json_invalid": "is not valid JSON",
    "model_attributes_type": "must be a JSON object",
    "dict_type": "must be a JSON object",
    "model_type": "must be a JSON object",
}


class SparseResponse(BaseModel):
    """A response body that leaves out the top-level fields an action does not fill, instead of sending null."""

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


def error_responses(*statuses: int) -> dict[int, OpenAPIResponse]:
    """OpenAPI entries for the error statuses an operation can answer, all with the contract's body."""
    return {
        status: {
            "description": reason_phrase(status),
            "content": {content_types.APPLICATION_JSON: {"model": ErrorBody}},
        }
        for status in statuses
    }


def _without_union_tag(loc: tuple[Any, ...], body: Any) -> tuple[Any, ...]:
    """pydantic puts a discriminated union's tag into the loc (body.deploy.config...); the caller sent none."""
    tagged = len(loc) > 1 and isinstance(body, dict) and isinstance(loc[1], str) and loc[1] not in body
    return (loc[0], *loc[2:]) if tagged and loc[1] in body.values() else loc


def _union_tag_detail(error: Mapping[str, Any]) -> FieldError:
    context = error.get("ctx") or {}
    discriminator = str(context.get("discriminator", "")).strip("'") or "body"
    if error.get("type") == "union_tag_not_found":
        return FieldError(field=discriminator, message="is required")
    expected = str(context.get("expected_tags", "")).replace("'", "")
    return FieldError(field=discriminator, message=f"must be one of: {expected}")


def _details_from(exc: RequestValidationError, body: Any = None) -> list[FieldError]:
    details: list[FieldError] = []
    for error in exc.errors():
        kind = error.get("type", "")
        if kind in ("union_tag_invalid", "union_tag_not_found"):
            details.append(_union_tag_detail(error))
            continue
        loc = _without_union_tag(tuple(error.get("loc", ())), body)
        if kind == "json_invalid":
            loc = ("body",)  # Powertools adds the character offset
        if loc == ("body",) and kind == "missing":
            kind = "model_type"  # a JSON null body
        message = _HUMAN_MESSAGES.get(kind) or error.get("msg") or "is invalid"
        details.append(FieldError(field=field_path(loc), message=message))
    return details


class RequestGuard(OpenAPIRequestValidationMiddleware):
    """Runs first on a matched route: transport checks, then auth, then Powertools' body validation.

    Powertools resolves `Depends()` after validating the body; we resolve the route's auth dependencies first
    (into the same per-request cache) so an unauthenticated caller learns nothing about the body's shape.
    """

    def __init__(self, max_body_bytes: int):
        super().__init__()  # type: ignore[no-untyped-call]  # Powertools' __init__ is not annotated
        self.max_body_bytes = max_body_bytes

    def handler(self, app: EventHandlerInstance, next_middleware: NextMiddleware) -> Response[Any]:
        event = app.current_event
        body = event.body or ""
        raw = base64.b64decode(body) if event.is_base64_encoded else body.encode()  # API Gateway base64s non-text
        if len(raw) > self.max_body_bytes:
            raise PayloadTooLarge(f"The request body is larger than {self.max_body_bytes} bytes.")
        media_type = (event.headers.get("content-type") or "").split(";")[0].strip().lower()
        if body and media_type != content_types.APPLICATION_JSON:
            raise UnsupportedMediaType()
        try:
            raw.decode()
        except UnicodeDecodeError:
            raise BadRequest.for_field("body", "is not UTF-8 encoded JSON") from None

        route = app.context["_route"]
        if route.has_dependencies:
            try:
                solve_dependencies(
                    dependant=build_dependency_tree(route.func),
                    request=app.request,
                    dependency_overrides=app.dependency_overrides or None,
                    dependency_cache=app.context.setdefault(_DEPENDS_CACHE_KEY, {}),
                )
            except DependencyResolutionError as exc:
                raise (exc.__cause__ if isinstance(exc.__cause__, ServiceError) else exc) from None
        return super().handler(app, next_middleware)


class OperationResolver(APIGatewayRestResolver):
    """A resolver for exactly one operation, `POST /functions/<operation>`."""

    def __init__(self, operation: str, *, max_body_bytes: int):
        settings = get_settings()
        super().__init__(
            enable_validation=True,
            cors=CORSConfig(
                allow_origin=settings.cors_allow_origin,
                allow_headers=["Authorization", "Content-Type", "x-bot-token"],
                expose_headers=[REQUEST_ID_HEADER],
                max_age=600,
            ),
        )
        self.operation = operation
        self.path = f"/functions/{operation}"
        self._request_validation_middleware = RequestGuard(max_body_bytes)
        self.exception_handler(RequestValidationError)(self._invalid_request)
        self.exception_handler(ServiceError)(self._service_error)
        self.exception_handler(NotFoundError)(self._no_route)
        self.exception_handler(Exception)(self._unexpected)

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        event = dict(event)
        request_context = dict(event.get("requestContext") or {})
        request_context.setdefault("requestId", str(uuid.uuid4()))  # direct invokes carry none
        event["requestContext"] = request_context
        if event.get("httpMethod") == "POST" and not event.get("body"):
            # Operations without fields may be called without a body (and so without a Content-Type).
            event["body"] = "{}"
            event["headers"] = {**(event.get("headers") or {}), "content-type": content_types.APPLICATION_JSON}
            event.pop("multiValueHeaders", None)
        response = super().resolve(event, context)
        request_id = request_context["requestId"]
        if "multiValueHeaders" in response:
            response["multiValueHeaders"][REQUEST_ID_HEADER] = [request_id]
        else:
            response.setdefault("headers", {})[REQUEST_ID_HEADER] = request_id
        return response

    # -- rendering ------------------------------------------------------------------------------------------
    def error_response(self, error: ServiceError, headers: dict[str, str] | None = None) -> Response[Any]:
        status = int(error.status)
        body = ErrorBody(
            error=reason_phrase(status),
            message=error.message,
            code=status,
            details=error.details,
            requestId=self.current_event.request_context.request_id,
        ).model_dump(exclude_none=True)
        return Response(
            status_code=status,
            content_type=content_types.APPLICATION_JSON,
            body={**error.extra, **body},
            headers=headers,
        )

    def _invalid_request(self, exc: RequestValidationError) -> Response[Any]:
        details = _details_from(exc, self._json_body_or_none())
        summary = f"{details[0].field}: {details[0].message}" if len(details) == 1 else f"{len(details)} invalid fields"
        return self.error_response(BadRequest(f"Invalid request: {summary}.", details=details))

    def _json_body_or_none(self) -> Any:
        try:
            return self.current_event.json_body
        except ValueError:  # the body is not JSON: its error names "body" anyway
            return None

    def _service_error(self, exc: ServiceError) -> Response[Any]:
        if exc.status >= HTTPStatus.INTERNAL_SERVER_ERROR:
            logger.error("request failed", extra={"error": type(exc).__name__, "status": int(exc.status)})
        else:
            logger.info("request refused", extra={"error": type(exc).__name__, "status": int(exc.status)})
        return self.error_response(exc)

    def _no_route(self, _exc: NotFoundError) -> Response[Any]:
        if self.current_event.resource == self.path or self.current_event.path.endswith(self.path):
            return self.error_response(MethodNotAllowed(), headers={"Allow": "POST"})
        return self.error_response(NotFound("No such operation."))

    def _unexpected(self, exc: Exception) -> Response[Any]:
        # The exception's text may hold library internals or secrets: it goes to the log, never to the caller.
        logger.exception("unexpected error", extra={"error": type(exc).__name__})
        return self.error_response(ServiceError())


def require_fields(request: BaseModel, *names: str, action: str) -> None:
    """400 naming every field that this action of an operation needs and the request lacks."""
    missing = [name for name in names if getattr(request, name) is None]
    if missing:
        message = f"is required for action '{action}'"
        details = [FieldError(field=name, message=message) for name in missing]
        verb = "is" if len(missing) == 1 else "are"
        raise BadRequest(
            f"Invalid request: {' and '.join(missing)} {verb} required for action '{action}'.", details=details
        )


def create_app(operation: str, *, max_body_bytes: int = 256 * KIB) -> OperationResolver:
    return OperationResolver(operation, max_body_bytes=max_body_bytes)


def lambda_entry_point(app: OperationResolver) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The function's handler: the resolver under Logger (correlation id = API Gateway's request id),
    Metrics and Tracer, in Powertools' documented order."""

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @metrics.log_metrics(capture_cold_start_metric=True)
    @tracer.capture_lambda_handler(capture_response=False)
    def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        budget.start(context)
        return app.resolve(event, context)

    # Powertools' handler decorators are typed to return Any: this is the function they wrap, unchanged.
    return cast("Callable[[dict[str, Any], Any], dict[str, Any]]", lambda_handler)
