"""The permission-safety lint on 500-channel configurations, beside validating them: the deploy's dry run and the AI
chat do both on every request."""

from __future__ import annotations

import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

from bench.quick import scaled

ROOT = Path(__file__).resolve().parents[1]
RUNS = scaled(21, 1)


def _configuration(roles: int, warn: bool) -> dict[str, Any]:
    """10 private categories of 49 channels (500 channels, categories included), each channel with an overwrite
    for a role; with `warn`, every channel also reopens itself to @everyone and every role lists ADMINISTRATOR
    with more."""
    role_names = [f"role-{index}" for index in range(roles)]
    extra = ["ADMINISTRATOR", "KICK_MEMBERS"] if warn else []
    reopen = [{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}] if warn else []
    return {
        "name": "Bench",
        "roles": [{"name": name, "permissions": ["SEND_MESSAGES", *extra]} for name in role_names],
        "categories": [
            {
                "name": f"area-{c}",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": role_names[c % roles], "allow": ["VIEW_CHANNEL"]},
                ],
                "channels": [
                    {
                        "name": f"room-{c}-{n}",
                        "overwrites": [
                            {"role": role_names[n % roles], "allow": ["VIEW_CHANNEL", "ATTACH_FILES"]},
                            *reopen,
                        ],
                    }
                    for n in range(49)
                ],
            }
            for c in range(10)
        ],
    }


def _median_ms(action: Any) -> float:
    return statistics.median(timeit.repeat(action, number=1, repeat=RUNS)) * 1000


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared")]
    from svcconf.config import MAX_ROLES, ServerConfig, lint_config

    print(f"\nPermission-safety lint of a 500-channel configuration, median of {RUNS}")
    print("  {:<62} {:>8} {:>11} {:>11}".format("configuration", "warnings", "lint", "validation"))
    for label, roles, warn in (
        ("10 roles, no warning", 10, False),
        (f"{MAX_ROLES} roles with ADMINISTRATOR and more, every channel reopened", MAX_ROLES, True),
    ):
        body = _configuration(roles, warn)
        config = ServerConfig.model_validate(body)
        count = len(lint_config(config))
        lint_ms = _median_ms(lambda config=config: lint_config(config))
        validate_ms = _median_ms(lambda body=body: ServerConfig.model_validate(body))
        print(f"  {label:<62} {count:>8} {lint_ms:>8.2f} ms {validate_ms:>8.2f} ms")
