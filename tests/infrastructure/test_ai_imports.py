"""Only the AI functions load the provider's SDK (about 1 s of init): every other handler module, imported alone
in a fresh process, leaves `anthropic` unloaded. The AI functions are those template.yaml gives the AI key's
secret (ANTHROPIC_API_KEY_SECRET_ID); svcAiChat is one of them and does load it, at init."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from local.function_environment import raw_environment
from local.resources import all_functions
from local.template import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
KEY_VARIABLE = "ANTHROPIC_API_KEY_SECRET_ID"
pytestmark = pytest.mark.starts  # each test imports in a fresh interpreter
PROBE = """
import gc, importlib, json, sys
importlib.import_module(sys.argv[1])
loaded = {name: name in sys.modules for name in ("anthropic", "httpx2")}
print(json.dumps({**loaded, "frozen": gc.get_freeze_count()}))
"""


def _handler_modules() -> dict[str, bool]:
    """functions.<op>.app → whether the template gives that function the AI key."""
    modules = {}
    for spec in all_functions(TEMPLATE):
        modules[spec.handler_module] = KEY_VARIABLE in raw_environment(TEMPLATE, spec.logical_id)
    return modules


HANDLERS = _handler_modules()


def _loaded(module: str) -> dict[str, bool]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module], env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(result.stdout)


def test_the_ai_functions_are_known_and_svc_ai_chat_is_one() -> None:
    assert HANDLERS["functions.svcAiChat.app"] is True
    assert len([m for m, ai in HANDLERS.items() if not ai]) >= 6


@pytest.mark.parametrize("module", sorted(m for m, ai in HANDLERS.items() if not ai))
def test_a_handler_without_ai_never_imports_the_sdk(module: str) -> None:
    assert _loaded(module) == {"anthropic": False, "httpx2": False, "frozen": 0}


def test_svc_ai_chat_imports_the_sdk_at_init_and_freezes_it_out_of_the_collectors_reach() -> None:
    loaded = _loaded("functions.svcAiChat.app")
    assert loaded["anthropic"] is True
    assert loaded["frozen"] > 100_000


@pytest.mark.parametrize("module", ["svcconf.ai", "svcconf.ai.errors", "svcconf.ai.usage", "svcconf.settings"])
def test_the_ai_package_and_its_errors_do_not_load_the_sdk(module: str) -> None:
    assert _loaded(module)["anthropic"] is False


def test_the_ai_function_answers_before_api_gateway_gives_up() -> None:
    properties = TEMPLATE.resources["SvcAiChatFunction"]["Properties"]
    # API Gateway's integration timeout is 29 s; the function's own leaves room for a cold start's init
    assert int(properties["Timeout"]) <= 27
    secrets = [
        p["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"]
        for p in properties["Policies"]
        if isinstance(p, dict) and "AWSSecretsManagerGetSecretValuePolicy" in p
    ]
    assert {"Ref": "AiApiKeySecret"} in secrets
    assert properties["Environment"]["Variables"][KEY_VARIABLE] == {"Ref": "AiApiKeySecret"}
