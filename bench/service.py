"""`make run` for a benchmark: `python -m local.run` in a subprocess, ready once its state file appears."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.quick import QUICK

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_SECONDS = 90


@contextmanager
def local_service(environ: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """The runner on a free port until the block ends; its state (URLs, tokens) as it wrote it. `environ` adds to
    the runner's environment (what `make run` takes from its own: the limits per user, say)."""
    from local.runner import free_port

    with tempfile.TemporaryDirectory() as directory:
        state_file, log_file = Path(directory) / "state.json", Path(directory) / "runner.log"
        command = [
            sys.executable,
            "-m",
            "local.run",
            "--quiet",
            "--port",
            str(free_port()),
            "--state-file",
            str(state_file),
        ]
        environment = {key: value for key, value in os.environ.items() if key != "PORT"} | (environ or {})
        if QUICK:  # the figures are not kept: a function starts on its first request, not ten cold starts for nothing
            environment |= {"SVC_LOCAL_PREWARM": "0"}
        with log_file.open("w") as log:
            process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while not state_file.exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"local.run did not start:\n{log_file.read_text()[-3000:]}")
                time.sleep(0.1)
            yield json.loads(state_file.read_text())
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
