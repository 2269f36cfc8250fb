"""One mutmut run for one module of the layer, in a work folder of its own, and what became of each mutant.

mutmut reads its settings from the pyproject.toml of the folder it runs in and names a mutant after the path of
its module, so each run gets a folder under .artifacts/mutation/ that holds the layer as `svcconf/` (names then
match the imported `svcconf.*`), links to what the tests read (tests/, local/, functions/ ...) and a
pyproject.toml: the repository's own plus a [tool.mutmut] naming the module and its tests. A run always starts
afresh: mutmut's cache would keep a verdict of tests that have changed since.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "shared"
WORK = ROOT / ".artifacts" / "mutation"
# What the selected tests read beside the layer (tests/ and pyproject.toml mutmut copies itself).
LINKED = ("tests", "local", "functions", "events", "template.yaml", "openapi.json")
ALSO_COPY = [name for name in LINKED if name != "tests"]
# A mutant that no selected test reaches survives as surely as one the tests let through.
SURVIVING = {"survived", "no tests"}
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


@dataclass
class Mutant:
    name: str  # mutmut's: svcconf.codes.x_resolve_code__mutmut_3 (the number shifts as the function changes)
    status: str
    change: str = ""  # the lines the mutant changes, "- old" then "+ new": what the baseline recognises it by

    @property
    def function(self) -> str:
        mangled = self.name.rpartition("__mutmut_")[0].rpartition(".")[2]  # x_function or xǁClassǁmethod
        return mangled.removeprefix("x_").removeprefix("xǁ").replace("ǁ", ".")


@dataclass
class ModuleRun:
    module: str  # svcconf/codes.py
    tests: list[str]
    seconds: float = 0.0
    mutants: list[Mutant] = field(default_factory=list)
    failure: str = ""  # mutmut could not run (a clean test failed, say): no verdict at all

    def count(self, statuses: set[str]) -> int:
        return sum(1 for mutant in self.mutants if mutant.status in statuses)

    @property
    def survivors(self) -> list[Mutant]:
        return [mutant for mutant in self.mutants if mutant.status in SURVIVING]

    @property
    def timed_out(self) -> list[Mutant]:
        """Killed by the clock: on a busy machine an equivalent mutant's tests can overrun, and on a quiet one the
        same mutant survives, so the baseline keeps its judgement (`baseline.rewritten`)."""
        return [mutant for mutant in self.mutants if mutant.status == "timeout"]


def module_slug(module: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", module.removesuffix(".py")).strip("-")


def _pyproject(module: str, tests: list[str]) -> str:
    settings = {
        "source_paths": ["svcconf"],
        "only_mutate": [module],
        "also_copy": ALSO_COPY,
        "pytest_add_cli_args_test_selection": tests,
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", "no:xdist", "-W", "ignore::DeprecationWarning"],
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    return (ROOT / "pyproject.toml").read_text() + "\n[tool.mutmut]\n" + "\n".join(lines) + "\n"


def _prepare(folder: Path, module: str, tests: list[str]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "svcconf").symlink_to(LAYER / "svcconf")
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    (folder / "pyproject.toml").write_text(_pyproject(module, tests))


def _mutmut(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mutmut", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)


def mutated_functions(mutated_module: Path) -> dict[str, list[str]]:
    """The mutated module's functions by name (mutmut keeps the original as `<name>__mutmut_orig`), as lines."""
    source = mutated_module.read_text()
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "__mutmut_" in node.name:
            text = ast.get_source_segment(source, node) or ""
            found[node.name] = text.replace(node.name, node.name.rpartition("__mutmut_")[0], 1).splitlines()
    return found


def mutant_change(functions: dict[str, list[str]], mutant: Mutant) -> str:
    """The lines the mutant changes, "- old" then "+ new" (`mutmut show` says the same, one process a mutant)."""
    original = functions.get(mutant.name.rpartition(".")[2].rpartition("__mutmut_")[0] + "__mutmut_orig", [])
    mutated = functions.get(mutant.name.rpartition(".")[2], [])
    changed = [line for line in difflib.ndiff(original, mutated) if line[:2] in ("- ", "+ ")]
    return "\n".join(f"{line[0]} {line[2:].strip()}" for line in changed)


def run_module(module: str, tests: list[str], *, log: Path) -> ModuleRun:
    """Mutates `module` (a path under shared/) and runs `tests` against each mutant; every verdict in the result."""
    folder = WORK / module_slug(module)
    _prepare(folder, module, tests)
    started = time.monotonic()
    ran = _mutmut(folder, "run", "--max-children", "2")
    result = ModuleRun(module=module, tests=tests, seconds=time.monotonic() - started)
    log.write_text(ran.stdout + ran.stderr)
    listed = _mutmut(folder, "results", "--all", "true").stdout
    for line in listed.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if "__mutmut_" in name:
            result.mutants.append(Mutant(name=name, status=status))
    if ran.returncode != 0 or not result.mutants:
        tail = (ran.stdout + ran.stderr).strip().splitlines()[-15:]
        result.failure = "\n".join(tail) or f"mutmut exited {ran.returncode}"
    else:
        functions = mutated_functions(folder / "mutants" / module)
        for mutant in result.survivors + result.timed_out:
            mutant.change = mutant_change(functions, mutant)
    saved_path(module).write_text(json.dumps(asdict(result), indent=1, ensure_ascii=False))
    return result


def saved_path(module: str) -> Path:
    return WORK / f"{module_slug(module)}.json"


def saved_run(module: str) -> ModuleRun | None:
    """The module's last run, as run_module saved it, or None if it has none."""
    path = saved_path(module)
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    mutants = [Mutant(**mutant) for mutant in data.pop("mutants")]
    return ModuleRun(**data, mutants=mutants)
