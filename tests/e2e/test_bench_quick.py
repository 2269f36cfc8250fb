"""`make bench-quick` inside pytest: every benchmark piece once at a small size, so a piece that breaks fails
`make test`. It runs on one of pytest's workers (its waits, the local model's and the sandbox's, fill the machine
beside the other files) instead of alone after them: its figures are a piece's health, not its speed, which
`make bench` measures at full size on a quiet machine (docs/08-benchmarks.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.__main__ import PIECES
from tests.helpers.local_service import ROOT

pytestmark = pytest.mark.e2e

QUICK_RUN_TIMEOUT_SECONDS = 900


def test_every_benchmark_piece_runs_at_a_small_size(record_property):
    environ = {**os.environ, "BENCH_QUICK": "1"}
    finished = subprocess.run(
        [sys.executable, "-m", "bench"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=QUICK_RUN_TIMEOUT_SECONDS,
        check=False,
    )
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output[-6000:]
    done = [piece for piece in PIECES if f"==> bench.{piece} done in " in finished.stdout]
    assert done == PIECES, output[-6000:]
    [last] = [line for line in finished.stdout.splitlines() if line.startswith("==> bench: ")]
    assert last.startswith(f"==> bench: {len(PIECES)} of {len(PIECES)} pieces ran, quick (BENCH_QUICK=1), in ")
    record_property("figures", last.removeprefix("==> "))
