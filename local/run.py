"""`make run`: the service on 127.0.0.1 without Docker, read from template.yaml.

API Gateway (REST, proxy integration) is emulated by a threading HTTP server; each function runs in its
own spawned worker processes, warm and reused like Lambda sandboxes; AWS is a moto server provisioned
from the template; SQS-triggered functions are fed by pollers. Top-level imports stay light: every
sandbox process imports this module when it starts.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import errno
import importlib
import ipaddress
import json
import logging
import multiprocessing
import os
import queue
import re
import signal
import socket
import sys
import threading
import time
import traceback
import uuid
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from local.template import (
    LOCAL_ACCOUNT_ID,
    FunctionSpec,
    Template,
    WorkerFunction,
    api_functions,
    function_layers,
    layers,
    load_template,
    logging_environment,
    raw_environment,
    worker_functions,
)

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from local.aws import ProvisionedResources

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = REPO_ROOT / "template.yaml"
OPENAPI_FILE = "openapi.json"  # committed beside template.yaml

REGION = "us-east-1"
STAGE = "local"
LOCAL_FUNCTION_PREFIX = "svc-local-"
API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024
API_GATEWAY_TIMEOUT_SECONDS = 29
LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
SANDBOX_INIT_TIMEOUT_SECONDS = 60
DEFAULT_PORT = 3000
DEFAULT_CONCURRENCY = 2

# Local defaults: dev-only values, printed on purpose so that curl works out of the box.
LOCAL_JWT_SECRET = "local-dev-jwt-secret-not-for-production-0123456789abcdef0123456789abcdef"  # noqa: S105
LOCAL_BOT_TOKEN = "local-dev-bot-token"  # noqa: S105
LOCAL_REDIRECT_URIS = "http://127.0.0.1:5173/auth/callback"
PASS_THROUGH_PREFIXES = ("CHAT_", "ANTHROPIC_")
# Variables whose value is a secret: put into the template's Secrets Manager secret when the function's
# environment names one (`<NAME>_SECRET_ID`), else given to the function in clear.
SECRET_VARIABLES = ("SVC_JWT_SECRET", "SVC_BOT_TOKEN", "CHAT_CLIENT_SECRET", "ANTHROPIC_API_KEY")
# What a sandbox keeps from the runner's environment; everything else comes from the template, like Lambda.
SYSTEM_VARIABLES = re.compile(
    r"^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|LC_\w+|TZ|TMPDIR|TEMP|TMP|PYTHON\w*|VIRTUAL_ENV|SSL_CERT_\w+|"
    r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|(?i:https?_proxy|no_proxy|all_proxy)|COVERAGE_\w+)$"
)

SAMPLE_PROJECT_ID = "local-sample-project"
SAMPLE_PROJECT_NAME = "Local sample project"
SAMPLE_CONFIGURATION: dict[str, Any] = {
    "name": "Local Sample Server",
    "description": "Minted by make run",
    "roles": [
        {
            "name": "Moderator",
            "color": "#3498DB",
            "hoist": True,
            "mentionable": True,
            "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"],
        }
    ],
    "categories": [
        {
            "name": "Community",
            "overwrites": [],
            "channels": [
                {"name": "welcome", "type": "text", "topic": "Say hello", "overwrites": []},
                {"name": "lounge", "type": "voice", "user_limit": 10, "overwrites": []},
            ],
        }
    ],
    "channels": [],
}

log = logging.getLogger("local.run")


# ================================================================ inside a sandbox process


@dataclass
class LambdaContext:
    """The attributes and method of the Lambda Python runtime's context object that handlers use."""

    function_name: str
    function_version: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str
    log_group_name: str
    log_stream_name: str
    deadline_epoch: float
    identity: Any = None
    client_context: Any = None
    tenant_id: str | None = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline_epoch - time.time()) * 1000))


def _sandbox_main(conn: Connection, setup: dict[str, Any]) -> None:
    """One Lambda sandbox: the function's environment, its handler imported once, then invocations."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the runner shuts us down
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    os.environ.clear()
    os.environ.update(setup["environ"])
    # Metrics are disabled locally; Powertools still warns on each invocation that it has none to publish.
    warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)
    sys.path[:0] = [p for p in setup["sys_path"] if p not in sys.path]
    try:
        handler = getattr(importlib.import_module(setup["module"]), setup["attr"])
    except BaseException as exc:
        traceback.print_exc()
        with contextlib.suppress(OSError):
            conn.send(("init_error", f"{type(exc).__name__}: {exc}"))
        return
    try:
        conn.send(("ready", os.getpid()))
    except OSError:
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the runner is gone
        if message is None:
            return
        event, context_fields = message
        try:
            result = handler(event, LambdaContext(**context_fields))
            reply: tuple[str, Any] = ("ok", json.dumps(result))
        except Exception as exc:
            traceback.print_exc()
            reply = ("error", {"errorType": type(exc).__name__, "errorMessage": str(exc)})
        try:
            conn.send(reply)
        except OSError:
            return


# ================================================================ sandboxes and pools (runner side)


class InvocationError(Exception):
    """The function did not produce a result: it raised, crashed, timed out or failed to start."""

    def __init__(self, message: str, *, timed_out: bool = False, throttled: bool = False):
        super().__init__(message)
        self.timed_out = timed_out
        self.throttled = throttled
        self.at = time.monotonic()


@dataclass
class FunctionRuntime:
    """A function's pool of sandboxes: at most `concurrency` processes, started on demand, reused warm."""

    spec: FunctionSpec
    function_name: str
    environ: dict[str, str]
    sys_path: list[str]
    concurrency: int = DEFAULT_CONCURRENCY
    _idle: queue.Queue[Any] = field(default_factory=queue.Queue)
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _all: set[Any] = field(default_factory=set)
    _closed: bool = False

    @property
    def arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:{LOCAL_ACCOUNT_ID}:function:{self.function_name}"

    def prewarm(self) -> None:
        with self._lock:
            if self._count == 0:
                self._start_one()

    def _start_one(self) -> None:  # called with the lock held
        self._count += 1
        threading.Thread(target=self._start_sandbox, name=f"start-{self.function_name}", daemon=True).start()

    def _start_sandbox(self) -> None:
        context = multiprocessing.get_context("spawn")  # no inherited moto or server threads, like a fresh sandbox
        parent_conn, child_conn = context.Pipe()
        setup = {
            "environ": self.environ,
            "sys_path": self.sys_path,
            "module": self.spec.handler_module,
            "attr": self.spec.handler_attr,
        }
        process = context.Process(
            target=_sandbox_main, args=(child_conn, setup), name=f"sandbox-{self.function_name}", daemon=True
        )
        sandbox = _Sandbox(process, parent_conn)
        with self._lock:
            self._all.add(sandbox)
        try:
            process.start()
            child_conn.close()
            if not parent_conn.poll(SANDBOX_INIT_TIMEOUT_SECONDS):
                raise InvocationError(f"init did not finish within {SANDBOX_INIT_TIMEOUT_SECONDS} s")
            status, detail = parent_conn.recv()
            if status != "ready":
                raise InvocationError(f"init failed: {detail}")
        except (InvocationError, EOFError, OSError) as exc:
            self._discard(sandbox)
            message = str(exc) if isinstance(exc, InvocationError) else "init failed: the sandbox process exited"
            log.error("%s: %s", self.function_name, message)
            self._idle.put(InvocationError(message))
            return
        self._idle.put(sandbox)

    def _discard(self, sandbox: _Sandbox) -> None:
        sandbox.kill()
        with self._lock:
            if sandbox in self._all:
                self._all.discard(sandbox)
                self._count -= 1

    def _acquire(self, wait_seconds: float) -> _Sandbox:
        started = time.monotonic()
        deadline = started + wait_seconds
        while True:
            with self._lock:
                if self._closed:
                    raise InvocationError("the runner is shutting down")
                if self._idle.empty() and self._count < self.concurrency:
                    self._start_one()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise InvocationError("no sandbox became free in time", throttled=True)
            try:
                item = self._idle.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if isinstance(item, InvocationError):
                if item.at >= started:  # an older init failure (e.g. at prewarm) is not this request's: try again
                    raise item
                continue
            if item.process.is_alive():
                return item
            self._discard(item)

    def invoke(self, event: dict[str, Any], *, wait_cap_seconds: float | None = None) -> Any:
        """Run the handler on the event in a free sandbox; its JSON result, or InvocationError."""
        timeout = float(self.spec.timeout)
        wait = min(timeout, wait_cap_seconds) if wait_cap_seconds else timeout
        sandbox = self._acquire(wait_cap_seconds or timeout)
        request_id = str(uuid.uuid4())
        context = {
            "function_name": self.function_name,
            "function_version": "$LATEST",
            "invoked_function_arn": self.arn,
            "memory_limit_in_mb": self.spec.memory_size,
            "aws_request_id": request_id,
            "log_group_name": f"/aws/lambda/{self.function_name}",
            "log_stream_name": f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{sandbox.process.pid}",
            "deadline_epoch": time.time() + timeout,
        }
        try:
            sandbox.conn.send((event, context))
            if not sandbox.conn.poll(wait + 1):  # one second for the pipe on top of the function's time
                self._discard(sandbox)  # like Lambda: a timed-out sandbox is not reused
                raise InvocationError(f"Task timed out after {wait:.2f} seconds", timed_out=True)
            status, payload = sandbox.conn.recv()
        except (EOFError, OSError) as exc:
            self._discard(sandbox)
            raise InvocationError("the sandbox process exited during the invocation") from exc
        self._idle.put(sandbox)
        if status != "ok":
            raise InvocationError(f"{payload['errorType']}: {payload['errorMessage']}")
        return json.loads(payload)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sandboxes = list(self._all)
        for sandbox in sandboxes:
            sandbox.stop()


@dataclass(eq=False)
class _Sandbox:
    process: Any
    conn: Any

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(timeout=2)
        self.kill()

    def kill(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if self.process.is_alive():
                self.process.kill()
                self.process.join(timeout=2)
        with contextlib.suppress(OSError):
            self.conn.close()


# ================================================================ API Gateway


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
    """The GatewayResponses of the template's REST API (the service has one)."""
    found: dict[str, dict[str, Any]] = {}
    for resource in tpl.resources.values():
        if resource.get("Type") == "AWS::Serverless::Api":
            found.update((resource.get("Properties") or {}).get("GatewayResponses") or {})
    return found


@dataclass
class ApiGateway:
    routes: list[Route]
    responses: dict[str, dict[str, Any]]
    openapi_path: Path | None = None
    quiet: bool = False

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            found = route.pattern.match(path)
            if found and route.method in ("any", method.lower()):
                return route, found.groupdict()
        return None

    def gateway_response(self, response_type: str, status: int, message: str, request_id: str) -> _Reply:
        """An answer API Gateway gives itself, rendered from the template's GatewayResponses when it has one."""
        configured = self.responses.get(response_type) or self.responses.get(
            "DEFAULT_5XX" if status >= 500 else "DEFAULT_4XX"
        )
        headers = {"Content-Type": "application/json"}
        if configured:
            status = int(configured.get("StatusCode", status))
            parameters = configured.get("ResponseParameters") or {}
            header_values = dict(parameters.get("Headers") or {})  # SAM's form
            header_values |= {  # CloudFormation's form
                name.removeprefix("gatewayresponse.header."): value
                for name, value in parameters.items()
                if name.startswith("gatewayresponse.header.")
            }
            for name, value in header_values.items():
                headers[name] = _mapping_value(str(value), request_id)
            body_template = (configured.get("ResponseTemplates") or {}).get("application/json")
            if body_template:
                body = (
                    body_template.replace("$context.requestId", request_id)
                    .replace("$context.error.messageString", json.dumps(message))
                    .replace("$context.error.message", message)
                )
                return _Reply(status, headers, body.encode())
        return _Reply(status, headers, error_body(status, message, request_id))


def _mapping_value(value: str, request_id: str) -> str:
    if value.startswith("'") and value.endswith("'"):
        return value[1:-1]
    return request_id if value == "context.requestId" else ""


def _error_reply(status: int, message: str, request_id: str) -> _Reply:
    return _Reply(status, {"Content-Type": "application/json"}, error_body(status, message, request_id))


def error_body(status: int, message: str, request_id: str) -> bytes:
    """The contract's error body (CONTRACT §2); the specification writes the 502's `error` as `Error`."""
    reason = "Error" if status == HTTPStatus.BAD_GATEWAY else HTTPStatus(status).phrase
    return json.dumps({"error": reason, "message": message, "code": status, "requestId": request_id}).encode()


@dataclass
class _Reply:
    status: int
    headers: dict[str, str] | list[tuple[str, str]]
    body: bytes
    from_function: bool = False


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


_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}


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


class ApiGatewayHandler(BaseHTTPRequestHandler):
    """Turns each HTTP request into a proxy event for the function that the template routes it to."""

    protocol_version = "HTTP/1.1"
    server_version = "svc-local"
    sys_version = ""
    server: _ApiServer

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET  # noqa: N815

    def handle_expect_100(self) -> bool:
        if self._declared_length() > API_GATEWAY_MAX_BODY_BYTES:
            self._too_large(str(uuid.uuid4()))
            return False
        return super().handle_expect_100()

    def _declared_length(self) -> int:
        try:
            return int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return 0

    def _handle(self) -> None:
        started = time.monotonic()
        request_id = str(uuid.uuid4())
        gateway = self.server.gateway
        path = unquote(urlsplit(self.path).path)
        if path == "/openapi.json" and self.command in ("GET", "HEAD"):
            self._drain_body()
            self._send(self._openapi(request_id), request_id, started)
            return
        matched = gateway.match(self.command, path)
        if matched is None:
            self._drain_body()
            reply = gateway.gateway_response("MISSING_AUTHENTICATION_TOKEN", 404, "No such operation.", request_id)
            self._send(reply, request_id, started)
            return
        body = self._read_body()
        if body is None:
            self._too_large(request_id, started)
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
        if len(json.dumps(event)) > LAMBDA_MAX_PAYLOAD_BYTES:  # Lambda refuses synchronous events over 6 MB
            return gateway.gateway_response("REQUEST_TOO_LARGE", 413, "The request body is too large.", request_id)
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
        if openapi is None or not openapi.is_file():
            return _error_reply(404, "openapi.json is not generated yet.", request_id)
        return _Reply(200, {"Content-Type": "application/json"}, openapi.read_bytes())

    def _read_body(self) -> bytes | None:
        """The request body; None when it is over API Gateway's limit (the rest is left unread)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, size = [], 0
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

    def _too_large(self, request_id: str, started: float | None = None) -> None:
        self.close_connection = True  # the body is not read: the connection cannot be reused
        reply = self.server.gateway.gateway_response(
            "REQUEST_TOO_LARGE", 413, "The request body is too large.", request_id
        )
        self._send(reply, request_id, started or time.monotonic())

    def _send(self, reply: _Reply, request_id: str, started: float) -> None:
        headers = list(reply.headers.items()) if isinstance(reply.headers, dict) else list(reply.headers)
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


def _failure(exc: InvocationError) -> str:
    if exc.timed_out:
        return "The function timed out."
    if str(exc).startswith("init failed"):
        return "The function failed to start."
    return "The function failed."


class _ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], gateway: ApiGateway):
        self.gateway = gateway
        super().__init__(address, ApiGatewayHandler)


# ================================================================ AWS


class LocalAws:
    """moto in server mode on 127.0.0.1 (what moto's ThreadedMotoServer does), DynamoDB calls one at a time.

    moto evaluates a ConditionExpression and then writes without a lock, while DynamoDB's conditional
    writes are atomic: serialising DynamoDB requests makes "consumed exactly once" hold locally too.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.address = (host, port)
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log is noise here
        app = DomainDispatcherApplication(create_backend_app)
        dynamodb_lock = threading.Lock()

        def application(environ: dict[str, Any], start_response: Any) -> Any:
            if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
                with dynamodb_lock:  # Flask runs the operation inside this call, so the lock covers it
                    return app(environ, start_response)
            return app(environ, start_response)

        self._server = make_server(*self.address, application, threaded=True, request_handler=MotoRequestHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), name="moto", daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=3)


# ================================================================ SQS pollers


@dataclass
class QueuePoller:
    """Lambda's SQS event source mapping for one worker function: receive, invoke, delete the successes."""

    worker: WorkerFunction
    runtime: FunctionRuntime
    queue_url: str
    queue_arn: str
    sqs: Any
    stop: threading.Event

    def start(self) -> list[threading.Thread]:
        pollers = min(self.runtime.concurrency, self.worker.maximum_concurrency or self.runtime.concurrency)
        threads = [
            threading.Thread(target=self._loop, name=f"poll-{self.worker.logical_id}-{i}", daemon=True)
            for i in range(max(1, pollers))
        ]
        for thread in threads:
            thread.start()
        return threads

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                self.poll_once(wait_seconds=1)
            except Exception:
                if not self.stop.is_set():
                    log.exception("poller for %s", self.worker.logical_id)
                    self.stop.wait(1)

    def poll_once(self, wait_seconds: int = 0) -> int:
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=max(1, min(self.worker.batch_size, 10)),
            WaitTimeSeconds=wait_seconds,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return 0
        event = {"Records": [self._record(message) for message in messages]}
        try:
            result = self.runtime.invoke(event)
        except InvocationError as exc:
            log.error("%s: batch of %d failed, left for redelivery: %s", self.worker.logical_id, len(messages), exc)
            return len(messages)
        failed = self._failed_ids(result, {m["MessageId"] for m in messages})
        done = [m for m in messages if m["MessageId"] not in failed]
        for start in range(0, len(done), 10):
            entries = [
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done[start : start + 10])
            ]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
        return len(messages)

    def _failed_ids(self, result: Any, batch_ids: set[str]) -> set[str]:
        if "ReportBatchItemFailures" not in self.worker.function_response_types or not isinstance(result, dict):
            return set()
        failures = result.get("batchItemFailures") or []
        identifiers = {str((f or {}).get("itemIdentifier") or "") for f in failures}
        if identifiers - batch_ids:  # Lambda treats an unknown or empty identifier as a failure of the whole batch
            return batch_ids
        return identifiers

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        attributes = {
            name: {
                "stringValue": value.get("StringValue"),
                "binaryValue": base64.b64encode(value["BinaryValue"]).decode() if "BinaryValue" in value else None,
                "stringListValues": value.get("StringListValues", []),
                "binaryListValues": value.get("BinaryListValues", []),
                "dataType": value.get("DataType"),
            }
            for name, value in (message.get("MessageAttributes") or {}).items()
        }
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes") or {},
            "messageAttributes": attributes,
            "md5OfBody": message.get("MD5OfBody"),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": REGION,
        }


# ================================================================ local settings


@dataclass
class LocalSettings:
    """The variables `make run` reads, with the local defaults it filled in."""

    values: dict[str, str]
    defaults_used: set[str]
    concurrency: int

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> LocalSettings:
        values = {k: v for k, v in environ.items() if k.startswith(PASS_THROUGH_PREFIXES)}
        defaults_used = set()
        for name, default in (("SVC_JWT_SECRET", LOCAL_JWT_SECRET), ("SVC_BOT_TOKEN", LOCAL_BOT_TOKEN)):
            values[name] = environ.get(name) or default
            if not environ.get(name):
                defaults_used.add(name)
        if not values.get("CHAT_REDIRECT_URIS"):
            values["CHAT_REDIRECT_URIS"] = LOCAL_REDIRECT_URIS
            defaults_used.add("CHAT_REDIRECT_URIS")
        concurrency = int(environ.get("SVC_LOCAL_CONCURRENCY") or DEFAULT_CONCURRENCY)
        return cls(values=values, defaults_used=defaults_used, concurrency=max(1, concurrency))

    def use_sandbox(self, base_url: str, application: dict[str, Any]) -> None:
        """Point the functions at the sandbox and, unless set, use its OAuth2 client."""
        self.values["CHAT_API_BASE_URL"] = base_url
        self.defaults_used.add("CHAT_API_BASE_URL")
        for name, default in (
            ("CHAT_CLIENT_ID", str(application.get("client_id", ""))),
            ("CHAT_CLIENT_SECRET", str(application.get("client_secret", ""))),
        ):
            if not self.values.get(name) and default:
                self.values[name] = default
                self.defaults_used.add(name)

    def describe(self, name: str, *, unset_note: str = "unset") -> str:
        value = self.values.get(name)
        if not value:
            return f"{name}: ({unset_note})"
        if name in self.defaults_used:
            return f"{name}: {value} (local default)"
        return f"{name}: (set)" if _is_secret(name) else f"{name}: {value}"


def _is_secret(name: str) -> bool:
    return name in SECRET_VARIABLES or any(word in name for word in ("SECRET", "TOKEN", "KEY", "PASSWORD"))


# ================================================================ the runner


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def start_chat_sandbox(bot_token: str) -> tuple[Any, str] | None:
    """The chat-platform sandbox (local/chat_sandbox.py) when it exists: (server, base_url), else None.

    Its bot is given the runner's bot token: the service authenticates to the platform with the same token
    the bot sends it (CONTRACT §3), so both sides must agree.
    """
    try:
        chat_sandbox = importlib.import_module("local.chat_sandbox")
    except ModuleNotFoundError as exc:
        if exc.name != "local.chat_sandbox":
            raise
        return None
    fixture = json.loads(Path(chat_sandbox.DEFAULT_FIXTURE).read_text(encoding="utf-8"))
    fixture["bot"]["token"] = bot_token
    return chat_sandbox.start_sandbox(host="127.0.0.1", port=0, fixture=fixture)


def _secret_links(tpl: Template) -> dict[str, str]:
    """`<NAME>_SECRET_ID: !Ref <Secret>` anywhere in the template's environments: NAME → secret logical id."""
    links = {}
    for logical_id in [None, *(spec.logical_id for spec in [*api_functions(tpl), *worker_functions(tpl)])]:
        for name, value in raw_environment(tpl, logical_id).items():
            target = value.get("Ref") if isinstance(value, dict) else None
            if name.endswith("_SECRET_ID") and target and tpl.resource_type(target) == "AWS::SecretsManager::Secret":
                links[name.removesuffix("_SECRET_ID")] = target
    return links


@dataclass
class Runner:
    tpl: Template
    settings: LocalSettings
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    quiet: bool = False
    moto: Any = None
    moto_url: str = ""
    provisioned: ProvisionedResources | None = None
    runtimes: dict[str, FunctionRuntime] = field(default_factory=dict)
    server: _ApiServer | None = None
    chat_sandbox: Any = None
    stop_event: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def aws_environment(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.moto_url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
        }

    def start(self) -> None:
        if not self.settings.values.get("CHAT_API_BASE_URL"):
            sandbox = start_chat_sandbox(self.settings.values["SVC_BOT_TOKEN"])
            if sandbox is not None:
                self.chat_sandbox, base_url = sandbox
                state = getattr(self.chat_sandbox, "state", None)
                self.settings.use_sandbox(base_url, dict(getattr(state, "application", None) or {}))
        self._start_moto()
        self._provision()
        self._start_api()
        self._start_pollers()

    def _start_moto(self) -> None:
        self.moto = LocalAws()
        self.moto_url = self.moto.start()

    def _provision(self) -> None:
        from local.aws import provision

        links = _secret_links(self.tpl)
        secret_values = {links[name]: value for name, value in self.settings.values.items() if name in links and value}
        self.provisioned = provision(self.tpl, secret_values=secret_values, endpoint_url=self.moto_url, region=REGION)

    def function_environ(self, spec: FunctionSpec, function_name: str) -> dict[str, str]:
        assert self.provisioned is not None
        links = _secret_links(self.tpl)
        environ = {k: v for k, v in os.environ.items() if SYSTEM_VARIABLES.match(k)}  # nothing else leaks in
        environ |= {  # what Lambda itself sets
            "AWS_LAMBDA_FUNCTION_NAME": function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_size),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
            **logging_environment(self.tpl, spec.logical_id),
        }
        environ |= self.provisioned.environment_for(spec.logical_id)
        environ |= {
            **self.aws_environment(),
            "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon locally
            "POWERTOOLS_METRICS_DISABLED": "true",  # EMF lines on stdout are noise locally
        }
        for name in sorted(set(self.settings.values) | set(SECRET_VARIABLES)):
            value = self.settings.values.get(name)
            if name in links:  # the value went into the template's secret, which the function reads by id
                if not value:  # unset locally: the function sees the setting as not configured
                    environ.pop(f"{name}_SECRET_ID", None)
            elif value:
                environ[name] = value
        return environ

    def _sys_path(self, spec: FunctionSpec) -> list[str]:
        return [
            str(spec.code_dir),
            *(str(layer.import_dir) for layer in function_layers(self.tpl, spec)),
            str(self.tpl.root),
        ]

    def _runtime(self, spec: FunctionSpec) -> FunctionRuntime:
        if spec.logical_id not in self.runtimes:
            function_name = spec.function_name or f"{LOCAL_FUNCTION_PREFIX}{spec.logical_id}"
            self.runtimes[spec.logical_id] = FunctionRuntime(
                spec=spec,
                function_name=function_name,
                environ=self.function_environ(spec, function_name),
                sys_path=self._sys_path(spec),
                concurrency=self.settings.concurrency,
            )
        return self.runtimes[spec.logical_id]

    def _start_api(self) -> None:
        routes = [
            Route(route.path, route.method, self._runtime(function), _route_pattern(route.path))
            for function in api_functions(self.tpl)
            for route in function.routes
        ]
        # As in API Gateway: a literal path wins over {param}, which wins over {proxy+}; a method wins over ANY.
        routes.sort(key=lambda r: ("+}" in r.template, r.template.count("{"), r.method == "any"))
        gateway = ApiGateway(
            routes=routes,
            responses=gateway_responses(self.tpl),
            openapi_path=self.tpl.root / OPENAPI_FILE,
            quiet=self.quiet,
        )
        self.server = _ApiServer((self.host, self.port), gateway)
        self.port = self.server.server_address[1]
        thread = threading.Thread(target=self.server.serve_forever, args=(0.1,), name="api-gateway", daemon=True)
        thread.start()
        self._threads.append(thread)
        for runtime in self.runtimes.values():
            runtime.prewarm()

    def _start_pollers(self) -> None:
        workers = worker_functions(self.tpl)
        if not workers:
            return
        import boto3

        assert self.provisioned is not None
        from local.aws import LOCAL_CREDENTIALS

        sqs = boto3.client("sqs", region_name=REGION, endpoint_url=self.moto_url, **LOCAL_CREDENTIALS)
        for worker in workers:
            runtime = self._runtime(worker)
            runtime.prewarm()
            poller = QueuePoller(
                worker=worker,
                runtime=runtime,
                queue_url=self.provisioned.refs[worker.queue_logical_id],
                queue_arn=self.provisioned.attrs[(worker.queue_logical_id, "Arn")],
                sqs=sqs,
                stop=self.stop_event,
            )
            self._threads.extend(poller.start())

    def mint_sample_code(self) -> tuple[str, str]:
        """A deployment code with SAMPLE_CONFIGURATION, minted by the layer's own code: (code, expires_at)."""
        assert self.provisioned is not None
        os.environ.update(self.provisioned.environment_for(None) | self.aws_environment())
        for path in reversed([str(self.tpl.root), *(str(layer.import_dir) for layer in layers(self.tpl))]):
            if path not in sys.path:
                sys.path.insert(0, path)
        settings_module = importlib.import_module("svcconf.settings")
        settings_module.get_settings.cache_clear()
        codes = importlib.import_module("svcconf.codes")
        minted = codes.mint_code(SAMPLE_PROJECT_ID, SAMPLE_PROJECT_NAME, SAMPLE_CONFIGURATION)
        expires_at = getattr(minted, "expires_at", "")
        return str(minted.code), expires_at.isoformat() if hasattr(expires_at, "isoformat") else str(expires_at)

    def shutdown(self) -> None:
        self.stop_event.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        for runtime in self.runtimes.values():
            runtime.close()
        if self.moto is not None:
            with contextlib.suppress(Exception):
                self.moto.stop()
        if self.chat_sandbox is not None:
            with contextlib.suppress(Exception):
                self.chat_sandbox.shutdown()
        for thread in self._threads:
            thread.join(timeout=3)


# ================================================================ entry point


def _loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise SystemExit(f"--host {host}: the local runner listens on IPv4 loopback addresses (127.x.x.x) only")
    return host


def _banner(runner: Runner, state: dict[str, Any], mint_error: str | None) -> str:
    local_bot_token = "SVC_BOT_TOKEN" in runner.settings.defaults_used
    bot = state["bot_token"] if local_bot_token else "$SVC_BOT_TOKEN"  # never print the user's own token
    operations = {function.operation: function.path for function in api_functions(runner.tpl)}
    lines = [
        "",
        "Server configuration service, local",
        f"  API            {runner.base_url}/functions/<operation>  ({', '.join(operations)})",
        f"  OpenAPI        {runner.base_url}/openapi.json",
        f"  AWS (moto)     {runner.moto_url}",
        f"  chat platform  {_chat_platform_line(runner)}",
        f"  user token     {state['user_token']}",
        f"  admin token    {state['admin_token']}",
        f"  bot token      {bot if local_bot_token else '(set: $SVC_BOT_TOKEN)'}",
    ]
    if state.get("sample_code"):
        lines.append(f"  sample code    {state['sample_code']}  (expires {state.get('sample_code_expires_at')})")
    else:
        lines.append(f"  sample code    not minted: {mint_error}")
    lines.append("")
    if "getConfigByCode" in operations:
        code = state.get("sample_code") or "SVC-XXXX-XXXX"
        lines.append(
            f"  curl -s -X POST {runner.base_url}{operations['getConfigByCode']} -H 'Content-Type: application/json'"
            f' -H "x-bot-token: {bot}" -d \'{{"code": "{code}"}}\''
        )
    if "manageBackup" in operations:
        lines.append(
            f"  curl -s -X POST {runner.base_url}{operations['manageBackup']} -H 'Content-Type: application/json'"
            f' -H "x-bot-token: {bot}" -d \'{{"action": "list", "guild_id": "123456789012345678"}}\''
        )
    return "\n".join(lines) + "\n"


def _chat_platform_line(runner: Runner) -> str:
    base_url = runner.settings.values.get("CHAT_API_BASE_URL") or "(the platform's default host)"
    if runner.chat_sandbox is not None:
        return f"{base_url}  (sandbox; its control API is under /_sandbox/)"
    return base_url


def _write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.chmod(0o600)  # holds dev tokens
    temporary.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.run", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=None, help=f"API port (default: $PORT or {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--state-file", type=Path, help="write URLs, tokens and the sample code here once ready")
    parser.add_argument("--template", type=Path, default=TEMPLATE_PATH, help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    log.setLevel(logging.INFO)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]

    port = args.port if args.port is not None else int(os.environ.get("PORT") or DEFAULT_PORT)
    settings = LocalSettings.from_environ(dict(os.environ))
    runner = Runner(
        tpl=load_template(args.template), settings=settings, host=_loopback(args.host), port=port, quiet=args.quiet
    )

    def request_stop(signum: int, _frame: Any) -> None:
        runner.stop_event.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        runner.start()
        print(f"PORT: {runner.port}" + (" (local default)" if args.port is None and not os.environ.get("PORT") else ""))
        for name in (
            "SVC_JWT_SECRET",
            "SVC_BOT_TOKEN",
            "CHAT_API_BASE_URL",
            "CHAT_CLIENT_ID",
            "CHAT_CLIENT_SECRET",
            "CHAT_REDIRECT_URIS",
            "ANTHROPIC_BASE_URL",
        ):
            print(settings.describe(name))
        print(settings.describe("ANTHROPIC_API_KEY", unset_note="unset: AI operations answer 503"))
        if runner.chat_sandbox is None and "CHAT_API_BASE_URL" not in os.environ:
            print("chat-platform sandbox: local/chat_sandbox.py is missing; chat calls go to the platform's host")
        print(f"SVC_LOCAL_CONCURRENCY: {settings.concurrency} sandbox(es) per function")

        assert runner.provisioned is not None
        globals_env = runner.provisioned.environment_for(None)
        jwt_claims = {
            "issuer": globals_env.get("SVC_JWT_ISSUER") or None,
            "audience": globals_env.get("SVC_JWT_AUDIENCE") or None,
        }
        from local.tokens import issue_token

        jwt_secret = settings.values["SVC_JWT_SECRET"]
        state: dict[str, Any] = {
            "pid": os.getpid(),
            "base_url": runner.base_url,
            "moto_url": runner.moto_url,
            "region": REGION,
            "user_token": issue_token(jwt_secret, "dev-user", **jwt_claims),
            "admin_token": issue_token(jwt_secret, "dev-admin", role="admin", **jwt_claims),
            "bot_token": settings.values["SVC_BOT_TOKEN"],
            "operations": {f.operation: runner.base_url + f.path for f in api_functions(runner.tpl)},
            "chat_api_base_url": settings.values.get("CHAT_API_BASE_URL"),
            "codes_table": globals_env.get("CODES_TABLE_NAME"),
            "env": globals_env | runner.aws_environment(),
        }
        mint_error = None
        try:
            state["sample_code"], state["sample_code_expires_at"] = runner.mint_sample_code()
        except Exception as exc:
            mint_error = f"{type(exc).__name__}: {exc}"
            print(f"could not mint a sample code: {mint_error}", file=sys.stderr)
        print(_banner(runner, state, mint_error))
        if args.state_file:
            _write_state(args.state_file, state)
        print(f"Ready on {runner.base_url}", flush=True)
        while not runner.stop_event.wait(0.5):
            pass
        print("Shutting down", flush=True)
    except OSError as exc:
        hint = (
            f" (is something else listening on {runner.host}:{port}? set PORT)" if exc.errno == errno.EADDRINUSE else ""
        )
        print(f"could not start: {exc}{hint}", file=sys.stderr)
        return 1
    finally:
        runner.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
