"""The Lambda proxy integration (payload format 1.0): an HTTP request made into the function's event, and the
function's result made into the HTTP answer."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from local.gateway import Reply, Route
from local.lambda_runtime import InvocationError
from local.template import LOCAL_ACCOUNT_ID

STAGE = "local"
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}


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


def proxy_reply(result: Any) -> Reply:
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
    return Reply(status, headers, payload, from_function=True)


def failure_message(exc: InvocationError) -> str:
    if exc.timed_out:
        return "The function timed out."
    if str(exc).startswith("init failed"):
        return "The function failed to start."
    return "The function failed."
