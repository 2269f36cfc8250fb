"""`python -m bench`: runs every benchmark and prints its figures; `python -m bench load` runs one by name."""

from __future__ import annotations

import sys

from bench import chat_rate_limits, config_lint, deploy, init_time, load

BENCHMARKS = {
    "init_time": init_time.run,
    "chat_rate_limits": chat_rate_limits.run,
    "config_lint": config_lint.run,
    "deploy": deploy.run,
    "load": load.run,
}

if __name__ == "__main__":
    for name in sys.argv[1:] or BENCHMARKS:
        BENCHMARKS[name]()
