"""`make unit` runs the tests that start nothing: under it, a test that binds a socket or starts a process fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.starts  # each test runs pytest in a fresh interpreter


def run_pytest_on(tmp_path: Path, body: str, *, as_make_unit: bool) -> subprocess.CompletedProcess[str]:
    """One test of `body` run by pytest with the suite's root conftest, as `make unit` runs it or not."""
    test_file = tmp_path / "test_sample.py"
    test_file.write_text(f"import socket, subprocess\n\n\ndef test_sample():\n    {body}\n", encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    environment.pop("SVC_TESTS_START_NOTHING", None)
    if as_make_unit:
        environment["SVC_TESTS_START_NOTHING"] = "1"
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "0", "-q", "-p", "no:cacheprovider"]
    return subprocess.run([*command, str(test_file)], env=environment, cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize(
    ("body", "event"),
    [
        ("socket.socket().bind(('127.0.0.1', 0))", "socket.bind"),
        ("subprocess.run(['true'], check=True)", "subprocess.Popen"),
    ],
)
def test_under_make_unit_a_test_that_starts_a_server_or_a_process_fails(tmp_path: Path, body: str, event: str):
    result = run_pytest_on(tmp_path, body, as_make_unit=True)
    assert result.returncode == 1, result.stdout
    assert f"RuntimeError: {event}: a test of make unit starts no server or process (mark it starts)" in result.stdout


def test_outside_make_unit_the_same_test_passes(tmp_path: Path):
    result = run_pytest_on(tmp_path, "socket.socket().bind(('127.0.0.1', 0))", as_make_unit=False)
    assert result.returncode == 0, result.stdout
