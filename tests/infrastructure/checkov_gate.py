"""checkov on the translated template, held to a baseline whose every entry has a reason (`make checkov`).

    .venv/bin/python -m tests.infrastructure.checkov_gate TRANSLATED.json [--checkov .venv-checkov/bin/checkov]

Fails (exit 1) on a finding that tests/infrastructure/checkov_baseline.toml does not list, on an entry with no
reason, and on an entry that matches no finding any more (a fixed finding leaves the baseline with it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BASELINE = Path(__file__).with_name("checkov_baseline.toml")
ROOT = Path(__file__).resolve().parents[2]
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"


@dataclass(frozen=True)
class Skip:
    check: str
    resources: tuple[str, ...]
    reason: str

    def covers(self, check: str, resource: str) -> bool:
        return check == self.check and ("*" in self.resources or resource in self.resources)


def load_baseline(path: Path = BASELINE) -> list[Skip]:
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get("skip", [])
    return [
        Skip(str(e.get("check", "")), tuple(e.get("resources") or ()), " ".join(str(e.get("reason", "")).split()))
        for e in entries
    ]


def baseline_problems(skips: list[Skip]) -> list[str]:
    problems = []
    for skip in skips:
        if not skip.check.startswith("CKV_"):
            problems.append(f"an entry names no checkov check: {skip}")
        if not skip.resources:
            problems.append(f'{skip.check}: no resources (use ["*"] for every one)')
        if len(skip.reason) < 40:
            problems.append(f"{skip.check}: a skip needs its reason (a sentence or more), got {skip.reason!r}")
    duplicated = [check for check, n in Counter(skip.check for skip in skips).items() if n > 1]
    problems += [f"{check}: listed twice" for check in duplicated]
    return problems


def findings(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(check id, logical id) of every failed check in checkov's JSON report."""
    return sorted(
        (failed["check_id"], failed["resource"].split(".", 1)[-1])
        for failed in report.get("results", {}).get("failed_checks", [])
    )


def judge(found: list[tuple[str, str]], skips: list[Skip]) -> tuple[list[str], list[str]]:
    """(new findings, stale skips)."""
    new = [f"{check} on {resource}" for check, resource in found if not any(s.covers(check, resource) for s in skips)]
    stale = [
        f"{skip.check} ({', '.join(skip.resources)})"
        for skip in skips
        if not any(skip.covers(check, resource) for check, resource in found)
    ]
    return new, stale


def run_checkov(checkov: Path, translated: Path) -> dict[str, Any]:
    command = [str(checkov), "-f", str(translated), "--framework", "cloudformation", "-o", "json", "--quiet"]
    command.append("--skip-download")  # offline: no guidelines from the vendor's API
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode not in (0, 1) or not result.stdout.strip():
        sys.stderr.write(result.stderr)
        raise SystemExit(f"checkov did not run (exit {result.returncode})")
    report = json.loads(result.stdout)
    return report[0] if isinstance(report, list) else report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("translated", type=Path)
    parser.add_argument("--checkov", type=Path, default=CHECKOV)
    args = parser.parse_args(argv)
    skips = load_baseline()
    report = run_checkov(args.checkov, args.translated)
    found = findings(report)
    new, stale = judge(found, skips)
    problems = baseline_problems(skips)
    summary = report.get("summary", {})
    print(
        f"checkov {summary.get('checkov_version', '?')}: {summary.get('passed', 0)} passed, {len(found)} failed "
        f"({len(found) - len(new)} judged in {BASELINE.name}: {len(skips)} checks), {len(new)} new"
    )
    for line in new:
        print(f"  new finding: {line} (fix it, or judge it in {BASELINE.name} with its reason)")
    for line in stale:
        print(f"  stale skip: {line} matches no finding any more: remove it from {BASELINE.name}")
    for line in problems:
        print(f"  baseline: {line}")
    return 1 if new or stale or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
