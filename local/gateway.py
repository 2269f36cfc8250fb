"""API Gateway (REST API) in front of the local functions: its routes, its limits and the answers it gives itself.

Each HTTP request is matched against the template's routes (local/gateway_server.py serves them); what API
Gateway answers itself (no route, body too large, throttled) follows the template's GatewayResponses, and a failed
integration answers 502 or 504 in the contract's error body. local/proxy_integration.py makes the event and the
answer of the Lambda proxy integration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

from local.intrinsics import IntrinsicResolver
from local.lambda_runtime import FunctionRuntime
from local.resources import FunctionSpec, api_functions
from local.template import Template

OPENAPI_FILE = "openapi.json"  # committed beside template.yaml
API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024
API_GATEWAY_TIMEOUT_SECONDS = 29
LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024  # a synchronous invocation's event and result
# The methods an API Gateway REST API routes (`ANY` is these); it answers any other method itself.
API_GATEWAY_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


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
class Reply:
    """An HTTP answer: the gateway's own, or a function's (which then sets its own x-request-id)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    from_function: bool = False


def error_body(status: int, message: str, request_id: str) -> bytes:
    """The service's error body (docs/03-api.md, Errors), where the 502's `error` is `Error`."""
    reason = "Error" if status == HTTPStatus.BAD_GATEWAY else HTTPStatus(status).phrase
    return json.dumps({"error": reason, "message": message, "code": status, "requestId": request_id}).encode()


def error_reply(status: int, message: str, request_id: str) -> Reply:
    return Reply(status, [("Content-Type", "application/json")], error_body(status, message, request_id))


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

    def gateway_response(self, response_type: str, status: int, message: str, request_id: str) -> Reply:
        """An answer API Gateway gives itself, rendered from the template's GatewayResponses when it has one."""
        configured = self.responses.get(response_type) or self.responses.get(
            "DEFAULT_5XX" if status >= 500 else "DEFAULT_4XX"
        )
        if not configured:
            return error_reply(status, message, request_id)
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
        return Reply(status, list(headers.items()), body)

    def too_large(self, request_id: str) -> Reply:
        return self.gateway_response("REQUEST_TOO_LARGE", 413, "The request body is too large.", request_id)


def _mapping_value(value: str, request_id: str) -> str:
    if value.startswith("'") and value.endswith("'"):
        return value[1:-1]
    return request_id if value == "context.requestId" else ""
