"""The local model on loopback HTTP: POST /v1/messages as the Messages API speaks it, deterministic answers.

It checks what the real API checks and a client could get wrong (credentials, `anthropic-version`, the body's
required fields, the sampling parameters and assistant prefill that the 5.5 models refuse), simulates the
prompt cache (a prefix up to a `cache_control` breakpoint is written once, then read; below the minimum of the
model asked for nothing is cached, as with the real models), counts the input as a tokenizer would (tokenizer.py),
cuts an answer longer than `max_tokens` with `stop_reason: max_tokens` and counts what it sent at 4 characters a
token (the pace the service plans a turn's output with). It
answers at a real model's pace (1.8 s to the first token, then 63 tokens/s) unless told otherwise.

Tests script it: `server.script(Step(status=529), Step(text="{"), Step(delay=20))` answers the next requests
in that order (a step may also be a function of the `Request`), then it goes back to the responders.
Every request is recorded in `server.requests`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from local.ai_model.responders import Request, answer, load_responders
from local.ai_model.tokenizer import count_tokens

# The layer's table of cache minimums, which the local model shares; `make run` and `python -m local.ai_model`
# do not put the layer on the path themselves.
_LAYER = str(Path(__file__).resolve().parents[2] / "shared")
if _LAYER not in sys.path:
    sys.path.append(_LAYER)
from svcconf.ai.pace import CHARS_PER_TOKEN as CONSERVATIVE_CHARS_PER_TOKEN  # noqa: E402
from svcconf.ai.pace import cache_min_tokens  # noqa: E402

API_VERSION = "2026-10-21"
CHARS_PER_TOKEN = CONSERVATIVE_CHARS_PER_TOKEN
# A Sonnet-class model's pace (public measurements): the first token after 1.8 s, then 63 tokens a second.
FIRST_TOKEN_SECONDS = 1.8
TOKENS_PER_SECOND = 63.0
LOOKBACK_BLOCKS = 20  # how far back from a breakpoint the API looks for a cached prefix
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@dataclass
class Step:
    """One scripted answer. `text` (or `json`, dumped) replaces the responders' answer; a status other than 200
    answers the API's error body of that status."""

    status: int = 200
    text: str | None = None
    json: Any = None
    stop_reason: str = "end_turn"
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] | None = None
    content: list[dict[str, Any]] | None = None  # the whole content array, e.g. with a thinking block


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any


def _tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return max(1, count_tokens(text)) if text else 0


class _Handler(BaseHTTPRequestHandler):
    server: LocalModelServer
    protocol_version = "HTTP/1.1"
    timeout = 60
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        status, extra_headers, payload, delay = self.server.respond(self.path, headers, body)
        if delay and self.server.stopping.wait(delay):
            return  # shutting down
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra_headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (its timeout): what a slow provider sees too

    def do_GET(self) -> None:
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LocalModelServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        *,
        cache_min_tokens: int | None = None,
        first_token_seconds: float = FIRST_TOKEN_SECONDS,
        tokens_per_second: float = TOKENS_PER_SECOND,
    ):
        super().__init__(address, _Handler)
        self.cache_min_tokens = cache_min_tokens  # None: the minimum of the model asked for
        self.first_token_seconds = first_token_seconds
        self.tokens_per_second = tokens_per_second  # 0: no pace at all (tests)
        self.requests: list[RecordedRequest] = []
        self.usages: list[dict[str, int]] = []  # each answer's usage, in order
        self.stopping = threading.Event()
        self._steps: deque[Step | Callable[[Request], Step]] = deque()
        self._cache: set[str] = set()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        load_responders()

    @property
    def base_url(self) -> str:
        host, port = self.socket.getsockname()[:2]  # the stubs allow bytes in server_address
        return f"http://{host}:{port}"

    def start(self) -> LocalModelServer:
        self._thread = threading.Thread(target=self.serve_forever, name="local-model", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        self.stopping.set()
        super().shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- test controls -----------------------------------------------------------------------------------------
    def script(self, *steps: Step | Callable[[Request], Step]) -> None:
        """Answer the next requests with these steps, in order, then go back to the responders."""
        with self._lock:
            self._steps.extend(steps)

    def reset(self) -> None:
        with self._lock:
            self._steps.clear()
            self.requests.clear()
            self.usages.clear()
            self._cache.clear()

    # -- the API -----------------------------------------------------------------------------------------------
    def respond(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, dict[str, str], Any, float]:
        number = next(self._ids)
        request_id = f"req_local_{number:06d}"
        with self._lock:
            self.requests.append(RecordedRequest(path=path, headers=headers, body=body))
            step = self._steps.popleft() if self._steps else None
        base_headers = {"request-id": request_id}
        if path.split("?")[0] != "/v1/messages":
            return 404, base_headers, self._error(404, f"Not found: {path}", request_id), 0.0
        refusal = self._check(headers, body)
        if refusal:
            status, message = refusal
            return status, base_headers, self._error(status, message, request_id), 0.0
        request = Request(body)
        if callable(step):
            step = step(request)
        step = step or Step()
        headers_out = base_headers | step.headers
        if step.status != 200:
            return step.status, headers_out, self._error(step.status, "Scripted failure", request_id), step.delay
        answer = self._message(request, step, number)
        return 200, headers_out, answer, step.delay + self.writing_seconds(answer["usage"]["output_tokens"])

    def writing_seconds(self, output_tokens: int) -> float:
        """How long a model at this pace takes to write `output_tokens` (its first token's delay included)."""
        if not self.tokens_per_second:
            return 0.0
        return self.first_token_seconds + output_tokens / self.tokens_per_second

    @staticmethod
    def _check(headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if not (headers.get("authorization", "").startswith("Bearer ") or headers.get("x-api-key")):
            return 401, "invalid x-api-key"
        if not headers.get("anthropic-version"):
            return 400, "anthropic-version: header is required"
        if not isinstance(body, dict):
            return 400, "The request body is not valid JSON."
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return 400, f"{name}: Field required"
        if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
            return 400, "max_tokens: Input should be a positive integer"
        messages = body["messages"]
        if not isinstance(messages, list) or not messages:
            return 400, "messages: at least one message is required"
        for name in SAMPLING_PARAMETERS:
            if name in body:
                return 400, f"{name}: sampling parameters are not supported on this model"
        if not isinstance(messages[-1], dict) or messages[-1].get("role") != "user":
            return (
                400,
                "This model does not support assistant message prefill. The conversation must end with a user message.",
            )
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                return 400, f"messages.{index}.role: Input should be 'user' or 'assistant'"
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "document" and message["role"] == "assistant":
                        return 400, f"messages.{index}: document blocks are not allowed in assistant messages"
        return None

    def _message(self, request: Request, step: Step, number: int) -> dict[str, Any]:
        body = request.body
        if step.content is not None:
            content = step.content
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        else:
            if step.text is not None:
                text = step.text
            elif step.json is not None:
                text = json.dumps(step.json)
            else:
                value = answer(request)
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            content = [{"type": "text", "text": text}]
        stop_reason = step.stop_reason
        limit = body["max_tokens"] * CHARS_PER_TOKEN
        if step.content is None and len(text) > limit:  # the answer does not fit: cut, as the API does
            content = [{"type": "text", "text": text[:limit]}]
            stop_reason = "max_tokens"
        sent = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        usage = step.usage or self._usage(body, sent)  # what was sent, counted as the cut counts
        with self._lock:
            self.usages.append(usage)
        return {
            "id": f"msg_local_{number:06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        """Input tokens split as the API splits them. The prompt in its order (system blocks, then the messages'
        blocks) is cut at each `cache_control` breakpoint; from each, the API looks back up to 20 block
        boundaries for a prefix it cached before (the markers themselves are not part of the prefix). The longest
        such prefix is read; the prefixes at the breakpoints are written (what goes beyond the read part)."""
        system = body.get("system")
        blocks = system if isinstance(system, list) else ([{"type": "text", "text": system}] if system else [])
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            blocks = [*blocks, *(content if isinstance(content, list) else [{"type": "text", "text": content}])]
        unmarked = [
            {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
            for block in blocks
        ]
        sizes = [_tokens(block) for block in blocks]
        total = sum(sizes) + _tokens(body.get("output_config") or "")

        def key(end: int) -> str:
            return hashlib.sha256(json.dumps([body.get("model"), unmarked[:end]], sort_keys=True).encode()).hexdigest()

        breakpoints = [i + 1 for i, b in enumerate(blocks) if isinstance(b, dict) and b.get("cache_control")]
        read = written = 0
        minimum = self.cache_min_tokens or cache_min_tokens(str(body.get("model")))
        with self._lock:
            for end in breakpoints:
                for boundary in range(end, max(0, end - LOOKBACK_BLOCKS) - 1, -1):
                    if boundary and key(boundary) in self._cache:
                        read = max(read, sum(sizes[:boundary]))
                        break
            for end in breakpoints:
                size = sum(sizes[:end])
                if size >= minimum and key(end) not in self._cache:
                    self._cache.add(key(end))
                    written = max(written, size)
        written = max(0, written - read)
        return {
            "input_tokens": max(0, total - read - written),
            "output_tokens": max(1, len(text) // CHARS_PER_TOKEN) if text else 0,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    @staticmethod
    def _error(status: int, message: str, request_id: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}


def start_local_model(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    cache_min_tokens: int | None = None,
    first_token_seconds: float = FIRST_TOKEN_SECONDS,
    tokens_per_second: float = TOKENS_PER_SECOND,
) -> LocalModelServer:
    """The local model in a background thread; `server.base_url` is what ANTHROPIC_BASE_URL takes. It writes at a
    real model's pace unless told otherwise (`tokens_per_second=0`: at once)."""
    server = LocalModelServer(
        (host, port),
        cache_min_tokens=cache_min_tokens,
        first_token_seconds=first_token_seconds,
        tokens_per_second=tokens_per_second,
    )
    return server.start()
