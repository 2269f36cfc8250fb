"""The clients web and bot developers generate from openapi.json compile and work (docs/03-api.md).

TypeScript: openapi-typescript's types and tests/e2e/clients/narrowing.ts under `tsc --strict`. Python: the package
openapi-python-client generates, in .venv-clients (`make clients-venv`), calling three operations of `make run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import requests

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = Path(__file__).resolve().parent / "clients"
NODE_BIN = ROOT / "node_modules" / ".bin"
CLIENTS_PYTHON = ROOT / ".venv-clients" / "bin" / "python"
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
ALICE = "1191000000000000101"
TOOL_TIMEOUT_SECONDS = 300


def run(*command: str | Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT_SECONDS,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, f"{command[0]} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_typescript_types_narrow_deploy_and_backup_answers_under_strict(tmp_path: Path) -> None:
    assert (NODE_BIN / "tsc").exists(), "the npm tools are not installed: make node-tools (make test and make e2e do)"
    run(NODE_BIN / "openapi-typescript", ROOT / "openapi.json", "--output", tmp_path / "api.d.ts")
    shutil.copy(CLIENTS / "narrowing.ts", tmp_path)
    run(
        NODE_BIN / "tsc",
        "--strict",
        "--noEmit",
        "--target",
        "es2022",
        "--module",
        "es2022",
        "--moduleResolution",
        "bundler",
        tmp_path / "narrowing.ts",
    )
    print("tsc --strict --noEmit narrowing.ts (openapi-typescript's api.d.ts): 0 errors")


def test_the_generated_python_client_calls_a_bearer_a_bot_and_the_sign_in_operation(
    local_service: LocalService, tmp_path: Path
) -> None:
    assert CLIENTS_PYTHON.exists(), "openapi-python-client is not installed: make clients-venv (make test and e2e do)"
    # Given a client generated from the committed openapi.json
    run(
        CLIENTS_PYTHON.parent / "openapi-python-client",
        "generate",
        "--path",
        ROOT / "openapi.json",
        "--output-path",
        tmp_path / "svc_client",
        "--meta",
        "none",
        "--config",
        CLIENTS / "python-client.yaml",
    )
    sandbox = local_service.state["chat_api_base_url"].removesuffix("/api/v10")
    code = requests.post(f"{sandbox}/_sandbox/oauth/codes", json={"user_id": ALICE}, timeout=30).json()["code"]
    # When it calls getChatGuilds (bearer), manageBackup create and list (bot token) and chatAuth (none)
    output = run(
        CLIENTS_PYTHON,
        CLIENTS / "python_calls.py",
        local_service.base_url,
        local_service.state["user_token"],
        local_service.state["bot_token"],
        code,
        REDIRECT_URI,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    # Then each answer was parsed into its own model, with the service's data in it
    answers = json.loads(output)
    print(f"generated Python client: {json.dumps(answers)}")
    assert "Svc Demo Guild" in answers["getChatGuilds"]
    assert answers["manageBackup.create"]["action"] == "create"
    assert answers["manageBackup.create"]["backup_id"].startswith("bk_")
    assert answers["manageBackup.list"][0] == answers["manageBackup.create"]["backup_id"]  # newest first
    assert answers["manageBackup.list.schedule"] is None  # v4 (issue 30): the guild's schedule, none here
    assert answers["chatAuth"] == {"chatUsername": "alice", "linked": False}
