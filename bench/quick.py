"""`BENCH_QUICK=1`: every benchmark once at a small size, so CI sees a broken piece (tests/infrastructure)."""

from __future__ import annotations

import os

QUICK = os.environ.get("BENCH_QUICK", "").strip() not in ("", "0")


def scaled(full: int, quick: int) -> int:
    """The size a benchmark runs at: `full` for people, `quick` under BENCH_QUICK."""
    return quick if QUICK else full
