"""`python -m bench`: runs every benchmark and prints its figures."""

from __future__ import annotations

from bench import init_time

if __name__ == "__main__":
    init_time.run()
