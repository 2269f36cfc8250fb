"""`python -m bench`: runs every benchmark and prints its figures."""

from __future__ import annotations

from bench import chat_rate_limits, config_lint, deploy, guilds, init_time, xray_init

if __name__ == "__main__":
    init_time.run()
    xray_init.run()
    chat_rate_limits.run()
    guilds.run()
    config_lint.run()
    deploy.run()
