"""One request's way through the sandbox: route, fault, caller, rate limit, handler, log."""

from __future__ import annotations

import re
import time
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from local.chat_sandbox import audit, control, oauth
from local.chat_sandbox.protocol import Answer, Call, PlatformError, render
from local.chat_sandbox.routes import match

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

_VERSION = re.compile(r"^/api(?:/v(\d+))?(?=/|$)")


def handle(state: SandboxState, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
    """Answer one HTTP request. `/api/v10/...`, `/api/...` and bare paths reach the platform's routes."""
    headers = {key.lower(): value for key, value in headers.items()}
    parts = urlsplit(target)
    path = unquote(parts.path)
    if path.startswith("/_sandbox/"):
        return control.handle(state, method, path, body)
    if version := _VERSION.match(path):
        if version.group(1) and version.group(1) not in ("9", "10"):
            return render(400, {"message": "Invalid API version", "code": 50041})
        path = path[version.end() :] or "/"
    route, params, path_exists = match(method, path)
    entry: dict[str, Any] = {
        "time": state.now(),
        "method": method,
        "path": path,
        "query": parts.query,
        "route": route.template if route else None,
        "auth": headers.get("authorization", "").split(" ", 1)[0] or None,
        "user_agent": headers.get("user-agent"),
        "content_type": headers.get("content-type"),
        "audit_log_reason": unquote(headers["x-audit-log-reason"]) if "x-audit-log-reason" in headers else None,
        "fault": None,
        "identity": None,
    }
    if route is None:
        status = 405 if path_exists else 404
        return _logged(state, entry, render(status, {"message": f"{status}: {HTTPStatus(status).phrase}", "code": 0}))
    query = {key: values[-1] for key, values in parse_qs(parts.query, keep_blank_values=True).items()}
    call = Call(method, route.template, params, query, headers, body)
    state.arrived(entry)
    if state.config.latency_seconds:
        time.sleep(state.config.latency_seconds)
    with state.lock:
        if fault := state.throttle.inject_fault(call, state.config):
            entry["fault"], answer = fault
            return _logged(state, entry, answer)
        try:
            call.caller = oauth.authenticate(state, call, route.who)
            entry["identity"] = call.caller.identity
            if call.caller.kind == "client" and call.body:
                entry["form_keys"] = sorted(parse_qs(call.body.decode("utf-8", "replace")))
            limit_headers = state.throttle.take(call, state.config)
        except PlatformError as refusal:
            return _logged(state, entry, render(refusal.status, refusal.body, refusal.headers))
        state.acting_id = call.caller.user_id if call.caller.kind == "person" else None
        try:
            kept = audit.before(state, call)
            status, answer_body = route.handler(state, call)
            audit.record(state, call, status, answer_body, kept, entry["audit_log_reason"])
        except PlatformError as refusal:
            return _logged(state, entry, render(refusal.status, refusal.body, {**limit_headers, **refusal.headers}))
        finally:
            state.acting_id = None
        if isinstance(answer_body, oauth.Redirect):
            return _logged(state, entry, render(status, None, {**limit_headers, "Location": answer_body.location}))
        if status < 300:  # a creation counts against the guild's quota even once deleted
            state.throttle.created(f"{call.method} {call.route}", call.major, state.config)
        return _logged(state, entry, render(status, answer_body, limit_headers))


def _logged(state: SandboxState, entry: dict[str, Any], answer: Answer) -> Answer:
    entry["status"] = answer[0]
    entry["answered"] = state.now()  # with `time`, when the request was in flight: what ran side by side
    state.record(entry)
    return answer
