"""The gateway's HTTP server: each request routed to its function's runtime, or answered by the gateway itself.

/openapi.json serves the committed document, /docs Swagger UI on it.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from local.docs import docs_answer, is_docs_path, root_answer
from local.gateway import (
    API_GATEWAY_MAX_BODY_BYTES,
    API_GATEWAY_TIMEOUT_SECONDS,
    LAMBDA_MAX_PAYLOAD_BYTES,
    ApiGateway,
    Reply,
    error_reply,
)
from local.lambda_runtime import FunctionRuntime, InvocationError
from local.proxy_integration import build_proxy_event, failure_message, proxy_reply

log = logging.getLogger("local.run")  # one logger for the whole runner


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
        reply = error_reply(status, f"{status.phrase}.", request_id)
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
            self._send(Reply(200, [("Content-Type", "application/json")], pointer), request_id, started)
            return
        if is_docs_path(path) and self.command in ("GET", "HEAD"):
            self._drain_body()
            status, content_type, page = docs_answer(path)
            self._send(Reply(status, [("Content-Type", content_type)], page), request_id, started)
            return
        matched = gateway.match(self.command, path)
        if matched is None:
            self._drain_body()
            allowed = gateway.allowed_methods(path)
            if allowed:  # a method API Gateway does not route, on an operation's path
                reply = error_reply(405, f"Only {', '.join(allowed)} is allowed on this operation.", request_id)
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

    def _invoke(self, runtime: FunctionRuntime, event: dict[str, Any], request_id: str) -> Reply:
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
                return error_reply(504, "Timed out.", request_id)
            return error_reply(502, failure_message(exc), request_id)
        try:
            reply = proxy_reply(result)
        except (ValueError, TypeError) as exc:
            log.error("%s request %s: malformed proxy response: %s", runtime.function_name, request_id, exc)
            return error_reply(502, "Malformed function response.", request_id)
        if len(reply.body) > LAMBDA_MAX_PAYLOAD_BYTES:
            return error_reply(502, "Function response too large.", request_id)
        return reply

    def _openapi(self, request_id: str) -> Reply:
        openapi = self.server.gateway.openapi_path
        if not openapi.is_file():
            return error_reply(404, "openapi.json is not generated yet.", request_id)
        return Reply(200, [("Content-Type", "application/json")], openapi.read_bytes())

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

    def _send(self, reply: Reply, request_id: str, started: float) -> None:
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
