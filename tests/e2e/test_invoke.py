"""`make invoke`: every file in events/, as committed, runs its function once without Docker, and succeeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EVENTS = sorted((ROOT / "events").glob("*.json"))
INVOKE_TIMEOUT_SECONDS = 180


def _body(report: dict[str, Any]) -> dict[str, Any]:
    return json.loads(report["response"]["body"])


# What each event's operation answers with the seeded data (local/seed.py and the sandbox's fixture).
EXPECTED: dict[str, Callable[[dict[str, Any]], None]] = {
    "getConfigByCode": lambda report: _expect(
        _body(report), project_id="sample-project", configuration_name="Local Sample Server"
    ),
    "manageBackup": lambda report: _expect(
        _body(report)["data"], guild_id="1187392640113156136", roles_count=1, channels_count=2
    ),
    "validateChatInvite": lambda report: _expect(
        _body(report), valid=True, code="svcDemo", guild_name="Svc Demo Guild"
    ),
    # events/chatAuth.json is the sign-in's second step (v4): `make invoke` starts the sign-in for its bearer
    # (chatAuth without `code`) and sends that state with the code the sandbox issued for it; alice is linked
    "chatAuth": lambda report: _expect(
        {**_body(report), "sign_in_started": any("a sign-in started for sub dev-user" in n for n in report["notes"])},
        chatUsername="alice",
        chatUserId="1191000000000000101",
        linked=True,
        sign_in_started=True,
    ),
    "getChatGuilds": lambda report: _expect(
        {guild["name"]: guild["can_manage"] for guild in _body(report)["guilds"]},
        **{"Alice's Build Lab": True, "Bob's Workshop": False},
    ),
    "deployToChat": lambda report: _expect(_body(report), status="planned", ok=True),
    "deployWorker": lambda report: _expect(
        report["deployments"][0], deployment_id="dp_000000000000sample", status="succeeded"
    ),
    # The AI functions answer from the local model when no key is set.
    "svcAiChat": lambda report: _expect(
        {**_body(report), "has_config": _body(report)["config"] is not None}, has_config=True, warnings=[]
    ),
    "seedTemplates": lambda report: _expect(_body(report), success=True, started=True),
    "templateWorker": lambda report: _expect(
        report["template_jobs"][0], job_id="tj_000000000000sample", status="succeeded", stored=5
    ),
}


def _expect(found: dict[str, Any], **expected: Any) -> None:
    if "configuration_name" in expected:
        found = {**found, "configuration_name": found["configuration"]["name"]}
    assert {key: found.get(key) for key in expected} == expected


@pytest.mark.parametrize("event", EVENTS, ids=[event.stem for event in EVENTS])
def test_the_event_runs_its_function_once_and_the_operation_succeeds(event: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "PORT"}
    completed = subprocess.run(
        [sys.executable, "-m", "local.invoke", event.stem, str(event), "--json"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=INVOKE_TIMEOUT_SECONDS,
        check=False,
    )
    assert completed.stdout.strip(), completed.stderr[-3000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert (completed.returncode, report["succeeded"], report["error"]) == (0, True, None), report
    assert report["init_duration_ms"] > 0
    assert report["duration_ms"] > 0
    if event.stem in EXPECTED:
        EXPECTED[event.stem](report)


def test_an_event_whose_bearer_token_does_not_verify_gets_a_fresh_one_and_says_so(tmp_path: Path) -> None:
    event = json.loads((ROOT / "events" / "getChatGuilds.json").read_text())
    forged = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYtdXNlciIsImV4cCI6NDEwMjQ0NDgwMH0.c2lnbmF0dXJl"
    event["headers"]["Authorization"] = forged
    event["multiValueHeaders"]["Authorization"] = [forged]
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    completed = subprocess.run(
        [sys.executable, "-m", "local.invoke", "getChatGuilds", str(path), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=INVOKE_TIMEOUT_SECONDS,
        check=False,
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["succeeded"], report
    assert any("replaced by a fresh one for sub dev-user" in note for note in report["notes"]), report["notes"]
