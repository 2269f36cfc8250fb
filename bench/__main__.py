"""`python -m bench [piece ...]`: runs every benchmark (or the named ones) and prints its figures.

Each piece is a module of this package with a `run()`; register one with one line in PIECES.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback

from bench.quick import QUICK

PIECES = [
    "init_time",
    "ai",
    "xray_init",
    "chat_rate_limits",
    "guilds",
    "config_lint",
    "caller_rights",
    "answer_size",
    "deploy",
    "fair_use",
    "load",
    "backups",
    "restore",
]


def main(argv: list[str]) -> int:
    """Runs the pieces in order; one that fails is reported and the others still run. 1 if any failed."""
    unknown = sorted(set(argv) - set(PIECES))
    if unknown:
        print(f"no benchmark {', '.join(unknown)}; these are: {', '.join(PIECES)}", file=sys.stderr)
        return 2
    chosen = [piece for piece in PIECES if piece in argv] if argv else PIECES
    failed = []
    began = time.monotonic()
    for piece in chosen:
        started = time.monotonic()
        print(f"\n==> bench.{piece} ...", flush=True)
        try:
            importlib.import_module(f"bench.{piece}").run()
        except Exception:
            traceback.print_exc()
            failed.append(piece)
            print(f"==> bench.{piece} FAILED after {time.monotonic() - started:.0f} s", flush=True)
            continue
        print(f"==> bench.{piece} done in {time.monotonic() - started:.0f} s", flush=True)
    size = "quick (BENCH_QUICK=1)" if QUICK else "full size"
    ran = len(chosen) - len(failed)
    print(
        f"\n==> bench: {ran} of {len(chosen)} pieces ran, {size}, in {time.monotonic() - began:.0f} s"
        + (f"; failed: {', '.join(failed)}" if failed else ""),
        flush=True,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
