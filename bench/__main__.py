"""`python -m bench`: runs every benchmark and prints its figures."""

from __future__ import annotations

from bench import ai, chat_rate_limits, config_lint, deploy, init_time

if __name__ == "__main__":
    init_time.run()
    ai.run()
    chat_rate_limits.run()
    config_lint.run()
    deploy.run()
