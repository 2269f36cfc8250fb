"""API Gateway (REST API, Lambda proxy integration) in front of the local functions.

Each HTTP request is matched against the template's routes, made into a proxy event (payload format 1.0)
for the function's runtime, and the function's result becomes the HTTP answer. What API Gateway answers
itself (no route, body too large, throttled) follows the template's GatewayResponses; a failed integration
answers 502 or 504 in the contract's error body. /openapi.json serves the committed document, /docs Swagger UI on it.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from local.docs import docs_answer, is_docs_path, root_answer
from local.lambda_runtime import FunctionRuntime, InvocationError
from local.template import LOCAL_ACCOUNT_ID, FunctionSpec, IntrinsicResolver, Template, api_functions

STAGE = "local"
OPENAPI_FILE = "openapi.json"  # committed beside template.yaml
API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024
API_GATEWAY_TIMEOUT_SECONDS = 29
LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024  # a synchronous invocation's event and result
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}
# The methods an API Gateway REST API routes (`ANY` is these); it answers any other method itself.
API_GATEWAY_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})

log = logging.getLogger("local.run")  # one logger for the whole runner


# ---------------------------------------------------------------- routes and answers


@dataclass(frozen=True)
class Route:
    template: str  # the event's Path, e.g. /functions/getConfigByCode or /items/{id}
    method: str  # lower case or "any"
    runtime: FunctionRuntime
    pattern: re.Pattern[str]


def _route_pattern(path: str) -> re.Pattern[str]:
    regex = ""
    for part in re.split(r"(\{[^}]+\})", path.rstrip("/") or "/"):
        if part.startswith("{") and part.endswith("+}"):
            regex += f"(?P<{part[1:-2]}>.+)"
        elif part.startswith("{"):
            regex += f"(?P<{part[1:-1]}>[^/]+)"
        else:
            regex += re.escape(part)
    return re.compile(f"^{regex}/?$")


def gateway_responses(tpl: Template) -> dict[str, dict[str, Any]]:
    """The GatewayResponses of the template's REST API (the service has one), their header values resolved with
    the parameters' defaults (the CORS origin is `!Sub "'${CorsAllowOrigin}'"`)."""
    found: dict[str, dict[str, Any]] = {}
    for resource in tpl.resources.values():
        if resource.get("Type") == "AWS::Serverless::Api":
            found.update((resource.get("Properties") or {}).get("GatewayResponses") or {})
    resolver = IntrinsicResolver(tpl)
    return {
        name: {**configured, "ResponseParameters": resolver.resolve(configured.get("ResponseParameters") or {})}
        for name, configured in found.items()
    }


@dataclass
class _Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    from_function: bool = False


def error_body(status: int, message: str, request_id: str) -> bytes:
    """The service's error body (docs/03-api.md, Errors), where the 502's `error` is `Error`."""
    reason = "Error" if status == HTTPStatus.BAD_GATEWAY else HTTPStatus(status).phrase
    return json.dumps({"error": reason, "message": message, "code": status, "requestId": request_id}).encode()


def _error_reply(status: int, message: str, request_id: str) -> _Reply:
    return _Reply(status, [("Content-Type", "application/json")], error_body(status, message, request_id))


@dataclass
class ApiGateway:
    routes: list[Route]
    responses: dict[str, dict[str, Any]]
    openapi_path: Path
    quiet: bool = False

    @classmethod
    def from_template(
        cls, tpl: Template, runtime_for: Callable[[FunctionSpec], FunctionRuntime], *, quiet: bool = False
    ) -> ApiGateway:
        routes = [
            Route(route.path, route.method, runtime_for(function), _route_pattern(route.path))
            for function in api_functions(tpl)
            for route in function.routes
        ]
        # As in API Gateway: a literal path wins over {param}, which wins over {proxy+}; a method wins over ANY.
        routes.sort(key=lambda r: ("+}" in r.template, r.template.count("{"), r.method == "any"))
        return cls(routes=routes, responses=gateway_responses(tpl), openapi_path=tpl.root / OPENAPI_FILE, quiet=quiet)

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        if method not in API_GATEWAY_METHODS:
            return None
        for route in self.routes:
            found = route.pattern.match(path)
            if found and route.method in ("any", method.lower()):
                return route, found.groupdict()
        return None

    def allowed_methods(self, path: str) -> list[str]:
        """The methods the template routes on a path by name (an `ANY` route names none): POST for an operation."""
        named = {route.method.upper() for route in self.routes if route.method != "any" and route.pattern.match(path)}
        return sorted(named)

    def gateway_response(self, response_type: str, status: int, message: str, request_id: str) -> _Reply:
        """An answer API Gateway gives itself, rendered from the template's GatewayResponses when it has one."""
        configured = self.responses.get(response_type) or self.responses.get(
            "DEFAULT_5XX" if status >= 500 else "DEFAULT_4XX"
        )
        if not configured:
            return _error_reply(status, message, request_id)
        status = int(configured.get("StatusCode", status))
        parameters = configured.get("ResponseParameters") or {}
        header_values = dict(parameters.get("Headers") or {})  # SAM's form
        header_values |= {  # CloudFormation's form
            name.removeprefix("gatewayresponse.header."): value
            for name, value in parameters.items()
            if name.startswith("gatewayresponse.header.")
        }
        headers = {"Content-Type": "application/json"}
        for name, value in header_values.items():
            headers[name] = _mapping_value(str(value), request_id)
        body_template = (configured.get("ResponseTemplates") or {}).get("application/json")
        if body_template:
            body = (
                body_template.replace("$context.requestId", request_id)
                .replace("$context.error.messageString", json.dumps(message))
                .replace("$context.error.message", message)
            ).encode()
        else:
            body = error_body(status, message, request_id)
        return _Reply(status, list(headers.items()), body)

    def too_large(self, request_id: str) -> _Reply:
        return self.gateway_response("REQUEST_TOO_LARGE", 413, "The request body is too large.", request_id)


def _mapping_value(value: str, request_id: str) -> str:
    if value.startswith("'") and value.endswith("'"):
        return value[1:-1]
    return request_id if value == "context.requestId" else ""


# ---------------------------------------------------------------- the proxy integration


def build_proxy_event(
    *,
    method: str,
    raw_path: str,
    headers: list[tuple[str, str]],
    body: bytes | None,
    route: Route,
    path_parameters: dict[str, str],
    request_id: str,
    source_ip: str,
) -> dict[str, Any]:
    """An API Gateway REST proxy event (payload format 1.0) for one HTTP request."""
    split = urlsplit(raw_path)
    path = unquote(split.path)
    single_headers: dict[str, str] = {}
    multi_headers: dict[str, list[str]] = {}
    for name, value in headers:
        key = next((k for k in multi_headers if k.lower() == name.lower()), name)
        multi_headers.setdefault(key, []).append(value)
        single_headers[key] = value
    query_multi: dict[str, list[str]] = {}
    for name, value in parse_qsl(split.query, keep_blank_values=True):
        query_multi.setdefault(name, []).append(value)
    event_body: str | None = None
    is_base64 = False
    if body:
        try:
            event_body = body.decode("utf-8")
        except UnicodeDecodeError:
            event_body, is_base64 = base64.b64encode(body).decode("ascii"), True
    now = datetime.now(UTC)
    return {
        "resource": route.template,
        "path": path,
        "httpMethod": method,
        "headers": single_headers or None,
        "multiValueHeaders": multi_headers or None,
        "queryStringParameters": {k: v[-1] for k, v in query_multi.items()} or None,
        "multiValueQueryStringParameters": query_multi or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "accountId": LOCAL_ACCOUNT_ID,
            "apiId": "local",
            "domainName": single_headers.get("Host") or single_headers.get("host") or "127.0.0.1",
            "extendedRequestId": request_id,
            "httpMethod": method,
            "identity": {
                "sourceIp": source_ip,
                "userAgent": next((v for k, v in single_headers.items() if k.lower() == "user-agent"), None),
                "accessKey": None,
                "accountId": None,
                "caller": None,
                "user": None,
                "userArn": None,
            },
            "path": f"/{STAGE}{path}",
            "protocol": "HTTP/1.1",
            "requestId": request_id,
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "resourceId": "local",
            "resourcePath": route.template,
            "stage": STAGE,
        },
        "body": event_body,
        "isBase64Encoded": is_base64,
    }


def proxy_reply(result: Any) -> _Reply:
    """The HTTP answer API Gateway makes of a proxy integration's result; ValueError when it is malformed."""
    if not isinstance(result, dict) or "statusCode" not in result:
        raise ValueError("the result has no statusCode")
    status = int(result["statusCode"])
    if not 100 <= status <= 599:
        raise ValueError(f"statusCode {status} is not an HTTP status")
    merged: dict[str, list[str]] = {}
    for name, value in (result.get("headers") or {}).items():
        merged[str(name)] = [str(value)]
    for name, values in (result.get("multiValueHeaders") or {}).items():
        merged[str(name)] = [str(v) for v in (values if isinstance(values, list) else [values])]
    headers = [(name, value) for name, values in merged.items() if name.lower() not in _HOP_BY_HOP for value in values]
    body = result.get("body")
    if body is None:
        payload = b""
    elif result.get("isBase64Encoded"):
        payload = base64.b64decode(body)
    else:
        payload = str(body).encode("utf-8")
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("Content-Type", "application/json"))
    return _Reply(status, headers, payload, from_function=True)


def _failure(exc: InvocationError) -> str:
    if exc.timed_out:
        return "The function timed out."
    if str(exc).startswith("init failed"):
        return "The function failed to start."
    return "The function failed."


# ---------------------------------------------------------------- HTTP


class ApiGatewayHandler(BaseHTTPRequestHandler):
    """Turns each HTTP request into a proxy event for the function that the template routes it to."""

    protocol_version = "HTTP/1.1"
    server_version = "svc-local"
    sys_version = ""
    server: ApiServer

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET  # noqa: N815

    def __getattr__(self, name: str) -> Any:
        # The stdlib answers a method without a do_<METHOD> with its HTML 501; every method gets the gateway's
        # answer instead (TRACE, CONNECT, FOO: 405 on an operation, 404 elsewhere).
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The stdlib's own refusals (a malformed request line, headers too long) in the contract's JSON body."""
        request_id = str(uuid.uuid4())
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.close_connection = True
        self.command = getattr(self, "command", None) or ""  # unset when the request line could not be read
        self.path = getattr(self, "path", None) or ""
        # Not the stdlib's message: it quotes the raw request line back.
        reply = _error_reply(status, f"{status.phrase}.", request_id)
        self._send(reply, request_id, time.monotonic())

    def handle_expect_100(self) -> bool:
        if self._declared_length() > API_GATEWAY_MAX_BODY_BYTES:
            self._refuse_body(str(uuid.uuid4()), time.monotonic())
            return False
        return super().handle_expect_100()

    def _handle(self) -> None:
        started = time.monotonic()
        request_id = str(uuid.uuid4())
        gateway = self.server.gateway
        path = unquote(urlsplit(self.path).path)
        if path == "/openapi.json" and self.command in ("GET", "HEAD"):
            self._drain_body()
            self._send(self._openapi(request_id), request_id, started)
            return
        if path == "/" and self.command in ("GET", "HEAD"):
            self._drain_body()
            host = self.headers.get("Host") or "{}:{}".format(*self.server.server_address[:2])
            pointer = json.dumps(root_answer(f"http://{host}")).encode()
            self._send(_Reply(200, [("Content-Type", "application/json")], pointer), request_id, started)
            return
        if is_docs_path(path) and self.command in ("GET", "HEAD"):
            self._drain_body()
            status, content_type, page = docs_answer(path)
            self._send(_Reply(status, [("Content-Type", content_type)], page), request_id, started)
            return
        matched = gateway.match(self.command, path)
        if matched is None:
            self._drain_body()
            allowed = gateway.allowed_methods(path)
            if allowed:  # a method API Gateway does not route, on an operation's path
                reply = _error_reply(405, f"Only {', '.join(allowed)} is allowed on this operation.", request_id)
                reply.headers.append(("Allow", ", ".join(allowed)))
            else:
                reply = gateway.gateway_response("MISSING_AUTHENTICATION_TOKEN", 404, "No such operation.", request_id)
            self._send(reply, request_id, started)
            return
        body = self._read_body()
        if body is None:
            self._refuse_body(request_id, started)
            return
        route, path_parameters = matched
        event = build_proxy_event(
            method=self.command,
            raw_path=self.path,
            headers=list(self.headers.items()),
            body=body,
            route=route,
            path_parameters=path_parameters,
            request_id=request_id,
            source_ip=self.client_address[0],
        )
        self._send(self._invoke(route.runtime, event, request_id), request_id, started)

    def _invoke(self, runtime: FunctionRuntime, event: dict[str, Any], request_id: str) -> _Reply:
        gateway = self.server.gateway
        if len(json.dumps(event)) > LAMBDA_MAX_PAYLOAD_BYTES:
            return gateway.too_large(request_id)
        try:
            result = runtime.invoke(event, wait_cap_seconds=API_GATEWAY_TIMEOUT_SECONDS)
        except InvocationError as exc:
            log.error("%s request %s: %s", runtime.function_name, request_id, exc)
            if exc.throttled:
                return gateway.gateway_response("THROTTLED", 429, "Too many requests; try again later.", request_id)
            if exc.timed_out and runtime.spec.timeout >= API_GATEWAY_TIMEOUT_SECONDS:
                return _error_reply(504, "Timed out.", request_id)
            return _error_reply(502, _failure(exc), request_id)
        try:
            reply = proxy_reply(result)
        except (ValueError, TypeError) as exc:
            log.error("%s request %s: malformed proxy response: %s", runtime.function_name, request_id, exc)
            return _error_reply(502, "Malformed function response.", request_id)
        if len(reply.body) > LAMBDA_MAX_PAYLOAD_BYTES:
            return _error_reply(502, "Function response too large.", request_id)
        return reply

    def _openapi(self, request_id: str) -> _Reply:
        openapi = self.server.gateway.openapi_path
        if not openapi.is_file():
            return _error_reply(404, "openapi.json is not generated yet.", request_id)
        return _Reply(200, [("Content-Type", "application/json")], openapi.read_bytes())

    def _declared_length(self) -> int:
        try:
            return int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return 0

    def _read_body(self) -> bytes | None:
        """The request body; None when it is over API Gateway's limit (the rest is left unread)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            size = 0
            while True:
                line = self.rfile.readline(1024)
                length = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if length == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                size += length
                if size > API_GATEWAY_MAX_BODY_BYTES:
                    return None
                chunks.append(self.rfile.read(length))
                self.rfile.readline(1024)
        length = self._declared_length()
        if length > API_GATEWAY_MAX_BODY_BYTES:
            return None
        return self.rfile.read(length) if length > 0 else b""

    def _drain_body(self) -> None:
        length = self._declared_length()
        if 0 < length <= API_GATEWAY_MAX_BODY_BYTES:
            self.rfile.read(length)
        elif length or self.headers.get("Transfer-Encoding"):
            self.close_connection = True

    def _refuse_body(self, request_id: str, started: float) -> None:
        self.close_connection = True  # the body is not read: the connection cannot be reused
        self._send(self.server.gateway.too_large(request_id), request_id, started)

    def _send(self, reply: _Reply, request_id: str, started: float) -> None:
        headers = list(reply.headers)
        # The function's own answers carry x-request-id only if the function sets it, as behind API Gateway.
        if not reply.from_function and not any(name.lower() == "x-request-id" for name, _ in headers):
            headers.append(("x-request-id", request_id))  # the contract asks it of every answer
        headers.append(("x-amzn-RequestId", request_id))
        self.send_response(reply.status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)
        if not self.server.gateway.quiet:
            elapsed = (time.monotonic() - started) * 1000
            sys.stderr.write(f"{self.command} {self.path} -> {reply.status} in {elapsed:.0f} ms\n")

    def log_message(self, format: str, *args: Any) -> None:
        if not self.server.gateway.quiet:
            sys.stderr.write(f"http: {format % args}\n")

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # _send logs each answer with its duration


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], gateway: ApiGateway):
        self.gateway = gateway
        super().__init__(address, ApiGatewayHandler)
