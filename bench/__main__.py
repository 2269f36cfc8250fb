"""`python -m bench [piece ...]`: runs every benchmark (or the named ones) and prints its figures.

Each piece is a module of this package with a `run()`; register one with one line in PIECES.
"""

from __future__ import annotations

import importlib
import sys
import time

PIECES = [
    "init_time",
    "ai",
    "xray_init",
    "chat_rate_limits",
    "guilds",
    "config_lint",
    "deploy",
    "fair_use",
    "load",
]


def main(argv: list[str]) -> int:
    unknown = sorted(set(argv) - set(PIECES))
    if unknown:
        print(f"no benchmark {', '.join(unknown)}; these are: {', '.join(PIECES)}", file=sys.stderr)
        return 2
    chosen = [piece for piece in PIECES if piece in argv] if argv else PIECES
    for piece in chosen:
        started = time.monotonic()
        print(f"\n==> bench.{piece} ...", flush=True)
        importlib.import_module(f"bench.{piece}").run()
        print(f"==> bench.{piece} done in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
