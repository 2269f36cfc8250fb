"""SnapStart's functions have an init that is safe to snapshot (docs/11-production.md, SnapStart): imported in a
fresh process with the template's environment, nothing connects anywhere and no thread starts, so a restored
environment carries no connection, secret or clock reading; after a restore, `random` is seeded again."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from local.function_environment import function_environment
from local.resources import all_functions
from local.template import load_template
from svcconf import observability as snapstart

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
SNAPSTART = sorted(
    spec.handler_module
    for spec in all_functions(TEMPLATE)
    if (TEMPLATE.resources[spec.logical_id]["Properties"].get("SnapStart") or {}).get("ApplyOn") == "PublishedVersions"
)
LOGICAL_IDS = {spec.handler_module: spec.logical_id for spec in all_functions(TEMPLATE)}
PROBE = """
import importlib, json, socket, sys, threading
opened = []
real = socket.socket.connect
def connect(self, address):
    opened.append(str(address))
    return real(self, address)
socket.socket.connect = connect
socket.getaddrinfo = lambda *a, **k: opened.append(str(a[:2])) or []
importlib.import_module(sys.argv[1])
print(json.dumps({"opened": opened, "threads": [t.name for t in threading.enumerate()]}))
"""


def test_svc_ai_chat_is_on_snapstart() -> None:
    assert "functions.svcAiChat.app" in SNAPSTART


@pytest.mark.starts
@pytest.mark.parametrize("module", SNAPSTART)
def test_a_snapstart_functions_init_opens_no_connection_and_starts_no_thread(module: str) -> None:
    refs = {logical_id: f"local-{logical_id}" for logical_id in TEMPLATE.resources}
    env = {
        **os.environ,
        **function_environment(TEMPLATE, LOGICAL_IDS[module], refs),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "init",
        "AWS_SECRET_ACCESS_KEY": "init",
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module], env=env, capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(result.stdout.splitlines()[-1]) == {"opened": [], "threads": ["MainThread"]}


def test_after_a_restore_each_environment_draws_its_own_random_sequence() -> None:
    # Given two environments resumed from one snapshot: the same random state
    random.seed(1234)
    snapshot = random.getstate()
    first = random.random()

    # When the restore hook runs in one of them
    random.setstate(snapshot)
    snapstart.after_restore()

    # Then its sequence is no longer the snapshot's
    assert random.random() != first


def test_the_hook_is_registered_only_where_the_runtime_offers_it() -> None:
    registered = []
    assert snapstart.register_restore_hook(registered.append) is True
    assert registered == [snapstart.after_restore]
    assert snapstart.register_restore_hook(None) is False
