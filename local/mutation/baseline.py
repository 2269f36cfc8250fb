"""baseline.toml: the surviving mutants judged equivalent (no test could tell them from the code), each with why.

A mutant is recognised by its module, its function and the lines it changes, not by mutmut's number, which shifts
whenever the function gains or loses a mutation point. Rewriting the file keeps each reason given for a mutant
that still survives and adds each new survivor with UNJUDGED as its reason, for a person to judge.

Its [digests] table holds, per module, the digest (local/mutation/digest.py) of the module and its tests when its
last run passed: the gate re-runs a module only when that digest changed.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from local.mutation.run import ModuleRun, Mutant

BASELINE = Path(__file__).with_name("baseline.toml")
UNJUDGED = "UNJUDGED: equivalent, or a test to write?"
HEADER = """\
# Surviving mutants judged equivalent: the gate (make mutation-gate, part of make test) lets these through and
# fails on any other survivor. Each entry: the module, the function, the lines the mutant changes, and why no
# test can tell it from the code. `make mutation-baseline` rewrites this file from a gate run, keeping reasons.
# [digests]: each module's digest (its code and its tests) when its last gate run passed; the gate re-runs a module
# only when its digest changed. A passing gate run records them: commit this file with the change.
"""


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    change: str
    reason: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.module, self.function, self.change)


def mutant_key(module: str, mutant: Mutant) -> tuple[str, str, str]:
    return (module, mutant.function, mutant.change)


def load(path: Path = BASELINE) -> dict[tuple[str, str, str], Equivalent]:
    if not path.is_file():
        return {}
    entries = tomllib.loads(path.read_text()).get("equivalent", [])
    judged = [Equivalent(e["module"], e["function"], e["change"], e["reason"]) for e in entries]
    return {entry.key: entry for entry in judged}


def rewritten(runs: Iterable[ModuleRun], previous: dict[tuple[str, str, str], Equivalent]) -> list[Equivalent]:
    """The baseline after these runs: their survivors, with the reasons `previous` gave, and the judged mutants that
    timed out; modules not run keep theirs."""
    runs = list(runs)
    modules_run = {run.module for run in runs}
    kept = [entry for entry in previous.values() if entry.module not in modules_run]
    for run in runs:
        for mutant in run.survivors:
            key = mutant_key(run.module, mutant)
            reason = previous[key].reason if key in previous else UNJUDGED
            kept.append(Equivalent(run.module, mutant.function, mutant.change, reason))
        # A judged mutant that only timed out this time (a busy machine) still survives on a quiet one.
        kept += [previous[key] for m in run.timed_out if (key := mutant_key(run.module, m)) in previous]
    return sorted(set(kept), key=lambda entry: entry.key)


def load_digests(path: Path = BASELINE) -> dict[str, str]:
    return dict(tomllib.loads(path.read_text()).get("digests", {})) if path.is_file() else {}


def write(entries: list[Equivalent], path: Path = BASELINE, *, digests: dict[str, str] | None = None) -> None:
    """Writes the entries and the digests (by default, the ones the file has now)."""
    digests = load_digests(path) if digests is None else digests
    table = "".join(f"{json.dumps(module)} = {json.dumps(digests[module])}\n" for module in sorted(digests))
    # json.dumps writes a TOML basic string: the same quotes and escapes.
    blocks = [
        "[[equivalent]]\n"
        f"module = {json.dumps(entry.module)}\n"
        f"function = {json.dumps(entry.function)}\n"
        f"change = {json.dumps(entry.change, ensure_ascii=False)}\n"
        f"reason = {json.dumps(entry.reason, ensure_ascii=False)}\n"
        for entry in entries
    ]
    path.write_text(HEADER + "\n[digests]\n" + table + "".join(f"\n{block}" for block in blocks))
