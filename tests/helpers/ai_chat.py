"""svcAiChat through its handler, as in AWS: the function's environment, the key in its Secrets Manager secret, a
26 s budget, and the fake Messages API (the local model) over loopback HTTP; helpers for its tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from local.template import load_template
from svcconf.api import budget
from svcconf.config import ServerConfig
from svcconf.settings import get_settings
from tests.helpers.ai_provider import TEST_KEY
from tests.helpers.handlers import ROOT, bearer

FUNCTION = "SvcAiChatFunction"
TIMEOUT_SECONDS = int(load_template(ROOT / "template.yaml").resources[FUNCTION]["Properties"]["Timeout"])
MIB = 1024 * 1024


@dataclass
class FunctionContext:
    remaining_millis: int

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_millis


CURRENT = {
    "name": "Night Owls",
    "roles": [{"name": "Mods", "color": "#3498DB", "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]}],
    "categories": [
        {
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": "mod-chat", "type": "text"}],
        }
    ],
    "channels": [{"name": "general", "type": "text"}],
}
CURRENT_NORMALISED = ServerConfig.model_validate(CURRENT).model_dump(mode="json", exclude_none=True)  # as answered


@pytest.fixture
def chat(aws, fake_provider, function_environment, monkeypatch):
    """The function's environment from template.yaml, the key in its Secrets Manager secret, a 26 s budget."""
    function_environment(FUNCTION)
    secret_id = aws.environment_for(FUNCTION)["ANTHROPIC_API_KEY_SECRET_ID"]
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(SecretId=secret_id, SecretString=TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the key comes from the secret, as in AWS
    start_budget = budget.start  # each invocation starts with the function's whole Timeout left, as in Lambda
    monkeypatch.setattr(budget, "start", lambda _context: start_budget(FunctionContext(TIMEOUT_SECONDS * 1000)))
    get_settings.cache_clear()
    return fake_provider


def ask(invoke, body: dict[str, Any] | str, **kwargs):
    return invoke("svcAiChat", body, headers=bearer(), **kwargs)


def turn(
    reply: str = "Done.",
    build: Any = None,
    quick_replies: Any = None,
    complete: bool = False,
    edits: Any = None,
    rest: str | None = None,
) -> dict:
    return {
        "reply": reply,
        "edits": edits,
        "build": build,
        "rest": rest,
        "quick_replies": quick_replies or [],
        "is_complete": complete,
    }


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assert_valid_or_none(config: Any) -> None:
    if config is not None:
        assert ServerConfig.model_validate(config).model_dump(mode="json", exclude_none=True) == config
