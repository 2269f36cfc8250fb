"""Handlers called with the events/ JSON, under moto's mock_aws, with resources built from template.yaml."""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local.aws import ProvisionedResources
from local.chat_sandbox import DEFAULT_FIXTURE, SandboxServer, SandboxState, start_sandbox
from svcconf.chat import get_chat_client
from svcconf.settings import get_settings
from tests.helpers.ai_chat import chat  # noqa: F401
from tests.helpers.chat_sandbox import chat_client, chat_sandbox, chat_settings, chat_state  # noqa: F401
from tests.helpers.handlers import (
    BOT_TOKEN,
    CHAT_CLIENT_SECRET,
    JWT_SECRET,
    ApiResponse,
    LambdaContext,
    load_event,
    point_functions_at,
)
from tests.helpers.template_resources import template_resources


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProvisionedResources]:
    """Tables, queues and secrets of template.yaml in moto; the functions' environment as in AWS."""
    secret_values = {"BotTokenSecret": BOT_TOKEN, "JwtSecret": JWT_SECRET, "ChatClientSecret": CHAT_CLIENT_SECRET}
    with template_resources(monkeypatch, secret_values=secret_values) as resources:
        yield resources


@pytest.fixture(scope="session")
def platform_server() -> Iterator[SandboxServer]:
    """The chat-platform sandbox for the session; its bot holds the service's bot token, as in `make run`."""
    fixture = json.loads(Path(DEFAULT_FIXTURE).read_text())
    fixture["bot"]["token"] = BOT_TOKEN
    server, _ = start_sandbox(fixture=fixture)
    yield server
    server.shutdown()


@pytest.fixture
def platform(
    aws: ProvisionedResources, platform_server: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> SandboxState:
    """The functions pointed at a freshly reset sandbox, as `make run` points them."""
    point_functions_at(platform_server, monkeypatch)
    yield platform_server.state
    get_chat_client.cache_clear()


@pytest.fixture
def function_environment(aws: ProvisionedResources, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Adds the named functions' own variables (a queue URL, a table) to the Globals that `aws` set."""

    def apply(*logical_ids: str) -> None:
        for logical_id in logical_ids:
            own = ((aws.tpl.resources[logical_id]["Properties"].get("Environment") or {}).get("Variables")) or {}
            resolved = aws.environment_for(logical_id)
            for name in own:
                monkeypatch.setenv(name, resolved[name])
        get_settings.cache_clear()

    return apply


@pytest.fixture
def invoke(aws: ProvisionedResources) -> Callable[..., ApiResponse]:
    """Calls an operation's lambda_handler with its events/ JSON, body and headers replaced as asked."""

    def call(
        operation: str,
        body: dict[str, Any] | str | None = None,
        *,
        headers: dict[str, str] | None = None,
        drop_headers: tuple[str, ...] = (),
        method: str = "POST",
        path: str | None = None,
        base64_encoded: bool = False,
        context: Any = None,
    ) -> ApiResponse:
        event = copy.deepcopy(load_event(operation))
        if body is not None:
            event["body"] = body if isinstance(body, str) else json.dumps(body)
        event["headers"] = {
            key: value for key, value in {**event["headers"], **(headers or {})}.items() if key not in drop_headers
        }
        event["multiValueHeaders"] = {key: [value] for key, value in event["headers"].items()}
        event["httpMethod"] = event["requestContext"]["httpMethod"] = method
        event["isBase64Encoded"] = base64_encoded
        if path:
            event["path"] = event["resource"] = event["requestContext"]["resourcePath"] = path
        handler = importlib.import_module(f"functions.{operation}.app").lambda_handler
        raw = handler(event, context or LambdaContext())
        headers_out = {key.lower(): values[-1] for key, values in (raw.get("multiValueHeaders") or {}).items()}
        headers_out |= {key.lower(): value for key, value in (raw.get("headers") or {}).items()}
        return ApiResponse(raw["statusCode"], headers_out, json.loads(raw["body"]) if raw.get("body") else {})

    return call
