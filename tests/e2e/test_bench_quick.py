"""`make test` runs every benchmark once at a small size (BENCH_QUICK=1), so a broken piece fails CI instead of
waiting for the next person who runs `make bench` (docs/08-benchmarks.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import PIECES

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 900  # about a minute on an idle machine; the runner starts three times
pytestmark = pytest.mark.starts


def test_every_benchmark_runs_at_its_quick_size(record_property) -> None:
    environment = {**os.environ, "BENCH_QUICK": "1", "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    environment.pop("PORT", None)

    result = subprocess.run(
        [sys.executable, "-m", "bench"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )

    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    assert [piece for piece in PIECES if f"==> bench.{piece} done in" not in log] == []
    [summary] = re.findall(r"==> bench: .*", log)
    assert summary.startswith(f"==> bench: {len(PIECES)} of {len(PIECES)} pieces ran, quick (BENCH_QUICK=1)")
    record_property("figures", summary)
