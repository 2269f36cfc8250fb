"""The resolver factory: one Powertools REST resolver per operation, with the contract's transport rules.

Every answer, success or error, leaves through here: the body limits (413), the media type (415), the strict
body decoder (`strict_json`), auth before body validation (with Powertools' public APIs only), pydantic
validation errors as the contract's 400 with one `details` entry per field, domain errors with their status,
unknown routes (404), other methods (405), unexpected exceptions (500 with `requestId`, nothing else), and the
`x-request-id` header on all of them. The 400's `details` are worded in `validation_details.py`; what openapi.json
says the operations answer is `responses.py`.
"""

from __future__ import annotations

import base64
import json
import uuid
from http import HTTPStatus
from typing import TYPE_CHECKING, Annotated, Any, cast, get_args, get_origin, get_type_hints

from aws_lambda_powertools.event_handler import (
    APIGatewayRestResolver,
    CORSConfig,
    DependencyResolutionError,
    Depends,
    Request,
    Response,
    content_types,
)
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.logging import correlation_paths

from svcconf.api import budget, strict_json
from svcconf.api.near_miss import near_misses
from svcconf.api.responses import REQUEST_ID_HEADER
from svcconf.api.validation_details import validation_details
from svcconf.errors import (
    BadRequest,
    ErrorBody,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    UnsupportedMediaType,
    reason_phrase,
)
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
    from aws_lambda_powertools.utilities.typing import LambdaContext

KIB = 1024
MIB = 1024 * KIB
_TRANSPORT_REFUSAL = "svc_transport_refusal"  # key in the resolver's per-request context


def _dependencies_of(func: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The `Annotated[..., Depends(f)]` parameters of a route function or dependency: name -> f."""
    found = {}
    for name, annotation in get_type_hints(func, include_extras=True).items():
        if get_origin(annotation) is Annotated:
            depends = next((meta for meta in get_args(annotation)[1:] if isinstance(meta, Depends)), None)
            if depends is not None:
                found[name] = depends.dependency
    return found


def _body_annotation_of(func: Callable[..., Any]) -> Any:
    """The type of a route function's `Body()` parameter (its request model), or None."""
    for annotation in get_type_hints(func, include_extras=True).values():
        if get_origin(annotation) is Annotated and any(isinstance(meta, Body) for meta in get_args(annotation)[1:]):
            return get_args(annotation)[0]
    return None


def _request_parameters_of(func: Callable[..., Any]) -> list[str]:
    return [name for name, annotation in get_type_hints(func).items() if annotation is Request]


def _raw_body(event: Mapping[str, Any]) -> tuple[bytes, str | None]:
    """The body's bytes, and its text when they are UTF-8 (API Gateway base64s bodies that are not text)."""
    body = event.get("body") or ""
    try:
        raw = base64.b64decode(body, validate=True) if event.get("isBase64Encoded") else None
    except ValueError:
        raw = None
    # Direct invokes can hold lone surrogates, which UTF-8 cannot: kept as such, they fail the decode below.
    raw = body.encode("utf-8", "surrogatepass") if raw is None else raw
    try:
        return raw, raw.decode()
    except UnicodeDecodeError:
        return raw, None


def _with_empty_json_body(event: dict[str, Any]) -> dict[str, Any]:
    headers = {key: value for key, value in (event.get("headers") or {}).items() if key.lower() != "content-type"}
    headers["content-type"] = content_types.APPLICATION_JSON
    event = {**event, "body": "{}", "isBase64Encoded": False, "headers": headers}
    event.pop("multiValueHeaders", None)
    return event


def _body_guard(app: OperationResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Global middleware, after body validation: the checks of `check_body` for routes that read no body."""
    app.check_body()
    return next_middleware(app)


class OperationResolver(APIGatewayRestResolver):
    """A resolver for exactly one operation, `POST /functions/<operation>`.

    The order of refusals is the contract's: transport (413, 415, a body that is not UTF-8), then the
    operation's authentication (401/403), then the body (400). Powertools validates the body before it resolves
    `Depends()`, so a request whose body fails validation has its route's auth dependencies run by the
    `RequestValidationError` handler before the 400 is rendered; a request that passes gets them from `Depends`.
    Transport refusals are found in `resolve` and raised by the body decoder (or, for a route without a body,
    by a global middleware), before validation and auth.
    """

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
            json_body_deserializer=self._decode_body,
        )
        self.operation = operation
        self.path = f"/functions/{operation}"
        self.max_body_bytes = max_body_bytes
        self._route_functions: dict[tuple[str, str], Callable[..., Any]] = {}
        self.use([_body_guard])
        self.exception_handler(RequestValidationError)(self._invalid_request)
        self.exception_handler(DependencyResolutionError)(self._dependency_failed)
        self.exception_handler(ServiceError)(self._service_error)
        self.exception_handler(NotFoundError)(self._no_route)
        self.exception_handler(Exception)(self._unexpected)

    def route(self, rule: str, method: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        """Powertools' route decorator, remembering each route's function to run its auth on a bad body."""
        register = super().route(rule, method, *args, **kwargs)

        def remember(func: Callable[..., Any]) -> Any:
            for name in (method,) if isinstance(method, str) else method:
                self._route_functions[(name.upper(), rule)] = func
            return register(func)

        return remember

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        event = dict(event)
        request_context = dict(event.get("requestContext") or {})
        request_context.setdefault("requestId", str(uuid.uuid4()))  # direct invokes carry none
        event["requestContext"] = request_context
        if (str(event.get("httpMethod", "")).upper(), event.get("path")) in self._route_functions:
            event = self._with_readable_body(event)
        if event.get("httpMethod") == "POST" and not event.get("body"):
            # Operations without fields may be called without a body (and so without a Content-Type).
            event = _with_empty_json_body(event)
        response = super().resolve(event, context)
        request_id = request_context["requestId"]
        if "multiValueHeaders" in response:
            response["multiValueHeaders"][REQUEST_ID_HEADER] = [request_id]
        else:
            response.setdefault("headers", {})[REQUEST_ID_HEADER] = request_id
        return response

    # -- transport, body, auth -----------------------------------------------------------------------------
    def _with_readable_body(self, event: dict[str, Any]) -> dict[str, Any]:
        """The event with its body as UTF-8 text, or, for a transport refusal (413, 415, not UTF-8), with `{}`.

        API Gateway base64s bodies that are not text; Powertools would decode them when it reads the body and
        fail with a bare UnicodeDecodeError, and it parses other media types itself (with errors of its own).
        A refused request keeps its refusal in the context and gets an empty JSON body instead, so the first
        thing that reads the body is our decoder, which raises the refusal (routes without a body: the
        transport middleware).
        """
        raw, text = _raw_body(event)
        headers = {key.lower(): value for key, value in (event.get("headers") or {}).items()}
        media_type = str(headers.get("content-type") or "").split(";")[0].strip().lower()
        refusal: ServiceError | None = None
        if len(raw) > self.max_body_bytes:
            refusal = PayloadTooLarge(f"The request body is larger than {self.max_body_bytes} bytes.")
        elif raw and media_type != content_types.APPLICATION_JSON:
            refusal = UnsupportedMediaType()
        elif text is None:
            refusal = BadRequest.for_field("body", "is not UTF-8 encoded JSON")
        if refusal is None:
            return {**event, "body": text, "isBase64Encoded": False}
        self.append_context(**{_TRANSPORT_REFUSAL: refusal})  # type: ignore[no-untyped-call]  # not annotated
        return _with_empty_json_body(event)

    def refuse_bad_transport(self) -> None:
        """Raises the request's transport refusal, if it has one (see `_with_readable_body`)."""
        refusal = self.context.get(_TRANSPORT_REFUSAL)
        if refusal is not None:
            raise refusal

    def check_body(self) -> None:
        """On an operation's route: the transport refusal, then the body decoded (strictly) as a JSON object.

        Powertools reads the body only for routes with a `Body()` parameter; this holds the others (an operation
        without fields) to the same rules. Validation errors raised here still get auth first (the handler).
        """
        if (self.request.method.upper(), self.request.route) not in self._route_functions:
            return  # 404, 405 and CORS preflights answer before any body rule
        self.refuse_bad_transport()
        if not isinstance(self.current_event.json_body, dict):
            raise RequestValidationError([{"type": "model_type", "loc": ("body",), "msg": "is not an object"}])

    def _decode_body(self, text: str) -> Any:
        """Powertools' json_body_deserializer: the strict decoder, after the transport checks (no parsing of a
        body over the limit). Its errors are validation errors, so the caller's credentials are checked first."""
        self.refuse_bad_transport()
        try:
            body = strict_json.loads(text)
        except json.JSONDecodeError as exc:
            raise RequestValidationError([{"type": "json_invalid", "loc": ("body",), "msg": exc.msg}]) from None
        except strict_json.NotPlainJSON as exc:
            errors = [
                {"type": "json_not_plain", "loc": ("body", *path), "msg": message} for path, message in exc.problems
            ]
            raise RequestValidationError(errors) from None
        self._refuse_near_misses(body)
        return body

    def _refuse_near_misses(self, body: Any) -> None:
        """A field that differs from one of the request model's only in case or `_` is a 400 naming the right one:
        ignored like an unknown field, it would drop the caller's work silently (svcconf.api.near_miss)."""
        func = self._route_functions.get((self.request.method.upper(), self.request.route))
        annotation = _body_annotation_of(func) if func is not None else None
        misses = near_misses(annotation, body, ("body",)) if annotation is not None else []
        if misses:
            errors = [{"type": "near_miss", "loc": miss.loc, "msg": miss.message} for miss in misses]
            raise RequestValidationError(errors)

    def _authenticate_route(self) -> None:
        """Runs the matched route's `Depends()` (its authentication) with the public API: `Depends.dependency`,
        the resolver's `dependency_overrides`, and the `Request` for dependencies that ask for it."""
        func = self._route_functions.get((self.request.method.upper(), self.request.route))
        if func is None:
            return
        solved: dict[Callable[..., Any], Any] = {}
        for dependency in _dependencies_of(func).values():
            self._solve(dependency, solved)

    def _solve(self, dependency: Callable[..., Any], solved: dict[Callable[..., Any], Any]) -> Any:
        dependency = self.dependency_overrides.get(dependency, dependency)
        if dependency not in solved:
            arguments = {name: self._solve(inner, solved) for name, inner in _dependencies_of(dependency).items()}
            arguments |= dict.fromkeys(_request_parameters_of(dependency), self.request)
            solved[dependency] = dependency(**arguments)
        return solved[dependency]

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
        try:
            self._authenticate_route()  # a caller without credentials learns nothing about the body
        except ServiceError as refusal:
            return self._service_error(refusal)
        except Exception as failure:  # a failing dependency is answered like any other failure
            return self._unexpected(failure)
        details = validation_details(exc, self._json_body_or_none())
        summary = f"{details[0].field}: {details[0].message}" if len(details) == 1 else f"{len(details)} invalid fields"
        ending = "" if summary.endswith(("?", ".")) else "."
        return self.error_response(BadRequest(f"Invalid request: {summary}{ending}", details=details))

    def _json_body_or_none(self) -> Any:
        try:
            return self.current_event.json_body
        except (ValueError, RequestValidationError):  # not JSON, or not plain JSON: its errors name the body
            return None

    def _dependency_failed(self, exc: DependencyResolutionError) -> Response[Any]:
        """Powertools wraps what a `Depends()` raises; a refusal (401, 403, 503) is answered as itself."""
        cause = exc.__cause__
        if isinstance(cause, ServiceError):
            return self._service_error(cause)
        return self._unexpected(exc)

    def _service_error(self, exc: ServiceError) -> Response[Any]:
        if exc.status >= HTTPStatus.INTERNAL_SERVER_ERROR:
            logger.error("request failed", extra={"error": type(exc).__name__, "status": int(exc.status)})
        else:
            logger.info("request refused", extra={"error": type(exc).__name__, "status": int(exc.status)})
        return self.error_response(exc, headers=exc.headers() or None)

    def _no_route(self, _exc: NotFoundError) -> Response[Any]:
        if self.current_event.resource == self.path or self.current_event.path.endswith(self.path):
            return self.error_response(MethodNotAllowed(), headers={"Allow": "POST"})
        return self.error_response(NotFound("No such operation."))

    def _unexpected(self, exc: Exception) -> Response[Any]:
        # The exception's text may hold library internals or secrets: it goes to the log, never to the caller.
        logger.exception("unexpected error", extra={"error": type(exc).__name__})
        return self.error_response(ServiceError())


def create_app(operation: str, *, max_body_bytes: int = 256 * KIB) -> OperationResolver:
    return OperationResolver(operation, max_body_bytes=max_body_bytes)


def lambda_entry_point(
    app: OperationResolver, *, headers: Mapping[str, str] | None = None
) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The function's handler: the resolver under Logger (correlation id = API Gateway's request id) and
    Metrics. No X-Ray SDK: Lambda's active tracing (template.yaml) records each invocation's segment. `headers`:
    set on every answer of the operation, errors included (chatAuth's `Cache-Control: no-store`)."""

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @metrics.log_metrics(capture_cold_start_metric=True)
    def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        budget.start(context)
        answer = app.resolve(event, context)
        for name, value in (headers or {}).items():
            answer.setdefault("headers", {})[name] = value
            if "multiValueHeaders" in answer:
                answer["multiValueHeaders"][name] = [value]
        return answer

    # Powertools' handler decorators are typed to return Any: this is the function they wrap, unchanged.
    return cast("Callable[[dict[str, Any], Any], dict[str, Any]]", lambda_handler)
