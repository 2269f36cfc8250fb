"""Every API operation of template.yaml with the security openapi.json declares for it, and a way to call it.

Tests that must hold for every operation iterate over `api_operations()`, so an operation added to the template
(and to openapi.json by `make openapi`) is covered without touching them.
"""

from __future__ import annotations

import copy
import importlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from local.resources import api_functions
from local.template import load_template
from svcconf.api.responses import BEARER_AUTH, BOT_TOKEN_AUTH
from tests.helpers.handlers import ApiResponse, LambdaContext

ROOT = Path(__file__).resolve().parents[2]
REQUEST_ID = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"  # the one events/*.json carry


@dataclass(frozen=True)
class Operation:
    name: str
    path: str
    handler_module: str
    security: frozenset[str]  # the schemes openapi.json names: BEARER_AUTH, BOT_TOKEN_AUTH, or none

    @property
    def bearer(self) -> bool:
        return BEARER_AUTH in self.security

    @property
    def bot(self) -> bool:
        return BOT_TOKEN_AUTH in self.security

    @property
    def sample_body(self) -> str | None:
        """The body of events/<operation>.json, a request that passes validation, when the event exists."""
        event = ROOT / "events" / f"{self.name}.json"
        return json.loads(event.read_text())["body"] if event.exists() else None

    def __str__(self) -> str:
        return self.name


@cache
def api_operations() -> tuple[Operation, ...]:
    document = json.loads((ROOT / "openapi.json").read_text())
    operations = []
    for function in sorted(api_functions(load_template(ROOT / "template.yaml")), key=lambda f: f.operation):
        described = document["paths"].get(function.path, {}).get("post")
        assert described is not None, f"{function.path} is not in openapi.json: run `make openapi`"
        schemes = frozenset(name for requirement in described.get("security") or [] for name in requirement)
        operations.append(Operation(function.operation, function.path, function.handler_module, schemes))
    return tuple(operations)


def bearer_operations() -> list[Operation]:
    return [operation for operation in api_operations() if operation.bearer]


def bot_operations() -> list[Operation]:
    return [operation for operation in api_operations() if operation.bot]


@cache
def _event_shape() -> dict[str, Any]:
    """An API Gateway REST proxy event (from events/), without the operation's own path, headers and body."""
    return json.loads((ROOT / "events" / "getConfigByCode.json").read_text())


def call(
    operation: Operation, body: str, headers: dict[str, str] | None = None, *, base64_encoded: bool = False
) -> ApiResponse:
    """Invokes the operation's lambda_handler with a body (text, sent as is; base64 when API Gateway would
    have encoded it) and these headers."""
    event = copy.deepcopy(_event_shape())
    event["path"] = event["resource"] = event["requestContext"]["resourcePath"] = operation.path
    event["requestContext"]["path"] = f"/dev{operation.path}"
    event["headers"] = {"Content-Type": "application/json", **(headers or {})}
    event["multiValueHeaders"] = {key: [value] for key, value in event["headers"].items()}
    event["body"] = body
    event["isBase64Encoded"] = base64_encoded
    handler = importlib.import_module(operation.handler_module).lambda_handler
    raw = handler(event, LambdaContext())
    headers_out = {key.lower(): values[-1] for key, values in (raw.get("multiValueHeaders") or {}).items()}
    headers_out |= {key.lower(): value for key, value in (raw.get("headers") or {}).items()}
    return ApiResponse(raw["statusCode"], headers_out, json.loads(raw["body"]) if raw.get("body") else {})
