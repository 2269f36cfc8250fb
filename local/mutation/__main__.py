"""`python -m local.mutation [--gate | --baseline] [MODULE ...]`: mutation runs of the layer and their report.

MODULE is a path under shared/ (svcconf/codes.py). With none, every module of shared/svcconf/ is run (long: a
habit for a quiet machine, not a check); --gate runs the modules of modules.toml's [gate] whose digest (the module
and its tests, local/mutation/digest.py) differs from the one baseline.toml recorded when it last passed (--full:
all of them), exits 1 on a survivor baseline.toml does not name, and records the digest of each module that
passed; --baseline runs the gate's modules (or the named ones) and rewrites
baseline.toml with their survivors, keeping the reasons already given (--saved: from each module's last run,
saved in .artifacts/mutation/<module>.json, without running it again).
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

from local.mutation import baseline
from local.mutation.digest import selection_digest
from local.mutation.run import KILLED, LAYER, WORK, ModuleRun, module_slug, run_module, saved_run

MODULES_FILE = Path(__file__).with_name("modules.toml")
DEFAULT_TESTS = ["tests/unit"]


def _selections() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    listed = tomllib.loads(MODULES_FILE.read_text())
    return listed.get("gate", {}), listed.get("modules", {})


def _every_module() -> list[str]:
    return sorted(str(path.relative_to(LAYER)) for path in (LAYER / "svcconf").rglob("*.py"))


def _score(killed: int, judged: int) -> str:
    return f"{100 * killed / judged:.1f}%" if judged else "n/a"


def _report(run: ModuleRun, judged: dict[tuple[str, str, str], baseline.Equivalent]) -> tuple[int, int]:
    """Prints the module's line and its unexpected survivors; returns (equivalent, new survivors)."""
    if run.failure:
        print(f"{run.module}: mutmut did not run ({run.seconds:.0f} s)\n{run.failure}")
        return 0, 1
    listed = [judged[key] for m in run.survivors if (key := baseline.mutant_key(run.module, m)) in judged]
    equivalent = [entry for entry in listed if entry.reason != baseline.UNJUDGED]
    new = [m for m in run.survivors if baseline.mutant_key(run.module, m) not in judged]
    killed = run.count(KILLED)
    unjudged = f" ({len(listed) - len(equivalent)} UNJUDGED)" if len(listed) > len(equivalent) else ""
    print(
        f"{run.module:<36} mutants {len(run.mutants):>4}  killed {run.count({'killed'}):>4}  "
        f"timeout {run.count({'timeout'}):>2}  survived {len(run.survivors):>3}  equivalent {len(equivalent):>3}  "
        f"score {_score(killed, len(run.mutants) - len(equivalent)):>6}  {run.seconds:>4.0f} s{unjudged}"
    )
    for mutant in new:
        print(f"  survived: {mutant.name} [{mutant.status}]")
        for line in mutant.change.splitlines():
            print(f"      {line}")
    return len(equivalent), len(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="paths under shared/, e.g. svcconf/codes.py")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--gate", action="store_true", help="the gate's modules; exit 1 on a survivor not in baseline")
    mode.add_argument("--baseline", action="store_true", help="rewrite baseline.toml from the runs' survivors")
    parser.add_argument("--saved", action="store_true", help="with --baseline: each module's last saved run, no rerun")
    parser.add_argument("--full", action="store_true", help="with --gate: run every module, unchanged ones too")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # a module's line as it ends, in CI's log

    gate, chosen = _selections()
    modules = args.modules or (list(gate) if args.gate or args.baseline else _every_module())
    unknown = [module for module in modules if not (LAYER / module).is_file()]
    if unknown:
        parser.error(f"not a module under shared/: {', '.join(unknown)}")

    WORK.mkdir(parents=True, exist_ok=True)
    judged = baseline.load()
    recorded = baseline.load_digests()
    digests = {module: recorded[module] for module in gate if module in recorded}
    started = time.monotonic()
    runs: list[ModuleRun] = []
    unchanged: list[str] = []
    equivalent = new = 0
    for module in modules:
        tests = gate.get(module) or chosen.get(module) or DEFAULT_TESTS
        digest = selection_digest(module, tests)
        if args.gate and not args.full and recorded.get(module) == digest:
            print(f"{module:<36} unchanged since its last passing run (digest {digest}): not run again")
            unchanged.append(module)
            continue
        saved = saved_run(module) if args.saved else None
        if args.saved and saved is None:
            parser.error(f"{module} has no saved run in {WORK}: run it first")
        run = saved or run_module(module, tests, log=WORK / f"{module_slug(module)}.log")
        runs.append(run)
        module_equivalent, module_new = _report(run, judged)
        equivalent += module_equivalent
        new += module_new
        if module in gate and (args.baseline or (args.gate and not module_new)):
            digests[module] = digest
    seconds = time.monotonic() - started

    mutants = sum(len(run.mutants) for run in runs)
    killed = sum(run.count(KILLED) for run in runs)
    unjudged = sum(1 for entry in judged.values() if entry.reason == baseline.UNJUDGED)
    if unchanged:
        print(f"mutation gate: {len(unchanged)} of {len(modules)} modules unchanged since their last passing run")
    print(
        f"mutation{' gate' if args.gate else ''}: {len(runs)} modules run, {mutants} mutants, {killed} killed, "
        f"{equivalent} equivalent, {new} new survivors, score {_score(killed, mutants - equivalent)}, "
        f"{seconds:.0f} s" + (f" ({unjudged} baseline entries UNJUDGED)" if unjudged else "")
    )
    if args.baseline:
        entries = baseline.rewritten(runs, judged)
        baseline.write(entries, digests=digests)
        fresh = sum(1 for entry in entries if entry.reason == baseline.UNJUDGED)
        print(f"{baseline.BASELINE.name}: {len(entries)} equivalent mutants, {fresh} UNJUDGED to judge")
        return 0
    if args.gate and digests != {m: recorded[m] for m in gate if m in recorded}:
        baseline.write(list(judged.values()), digests=digests)
        print(f"{baseline.BASELINE.name}: the digests of the modules that passed recorded (commit it with the change)")
    return 1 if args.gate and new else 0


if __name__ == "__main__":
    sys.exit(main())
