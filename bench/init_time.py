"""Init time of every function of template.yaml (imports and module setup, in fresh processes) beside a minimal
Powertools handler and beside the libraries the function needs: min, median and max over RUNS processes each.

This is what a Lambda cold start pays before the first event, measured here on the development machine:
relative figures, not Lambda's Init Duration. Each function is imported with its template environment (table,
queue and secret names; nothing is called), as its Lambda would be. "Libraries" are the third-party modules the
function's import loads (found by importing it once), imported alone; "own code" is the function's import after
them, in the same process: what the project's code adds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.quick import QUICK, scaled
from bench.xray_init import MINIMAL_HANDLER as MINIMAL_HANDLER_SOURCE

ROOT = Path(__file__).resolve().parents[1]
RUNS = scaled(5, 1)
QUICK_FUNCTIONS = ("getConfigByCode",)  # under BENCH_QUICK: one function, no .pyc warm-up run

MINIMAL_HANDLER = MINIMAL_HANDLER_SOURCE.format(tracer_setup="", tracer_decorator="")

# Prints (libraries, own code) seconds: the modules named in LIBRARIES first, then the function's module.
TIMER = """
import importlib, time
t = time.perf_counter()
for name in {libraries!r}:
    try:
        importlib.import_module(name)
    except Exception:
        pass
p = time.perf_counter()
importlib.import_module({module!r})
print(p - t, time.perf_counter() - p)
"""
# Prints the third-party modules an import loaded, in the order it loaded them.
LIBRARIES_OF = """
import importlib, json, sys
before = set(sys.modules)
importlib.import_module({module!r})
ours = {{"svcconf", "functions", "local", "bench", "__main__"}}
print(json.dumps([
    name for name in sys.modules
    if name not in before and name.split(".")[0] not in sys.stdlib_module_names | ours
    and not name.split(".")[0].startswith("_")
]))
"""


def _python(code: str, pythonpath: list[str], environment: dict[str, str]) -> str:
    env = {
        **os.environ,
        **environment,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "POWERTOOLS_SERVICE_NAME": environment.get("POWERTOOLS_SERVICE_NAME", "bench"),
        "POWERTOOLS_METRICS_NAMESPACE": environment.get("POWERTOOLS_METRICS_NAMESPACE", "Bench"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The code on stdin: a function's list of libraries is longer than a command line may be.
    result = subprocess.run([sys.executable, "-"], input=code, env=env, capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()[-1]


def _split_ms(module: str, pythonpath: list[str], environment: dict[str, str], libraries: list[str]) -> list[float]:
    """One fresh process: [libraries, the module after them] in ms (libraries [] : the module's whole init)."""
    out = _python(TIMER.format(module=module, libraries=libraries), pythonpath, environment)
    return [float(seconds) * 1000 for seconds in out.split()]


def _functions() -> list[tuple[str, str, dict[str, str]]]:
    """(name, handler module, template environment) of every function in template.yaml."""
    from moto import mock_aws

    from local.provision import provision
    from local.resources import all_functions
    from local.template import load_template

    tpl = load_template(ROOT / "template.yaml")
    # The resources as make run provisions them (in moto, in memory), so every !Ref and !GetAtt a function's
    # environment holds resolves as it does there (a queue's ARN too); nothing is called at import.
    with mock_aws():
        provisioned = provision(tpl)
    return [
        (spec.code_dir.name, spec.handler_module, provisioned.environment_for(spec.logical_id))
        for spec in all_functions(tpl)
        if not QUICK or spec.code_dir.name in QUICK_FUNCTIONS
    ]


def run() -> None:
    functions = _functions()
    print(
        f"\nHandler init time: {len(functions)} functions of template.yaml, each beside a minimal Powertools handler"
        f" (Logger, Metrics, validating resolver) and beside its libraries alone, {RUNS} fresh processes each, taking"
        f" turns so that the machine's load touches them alike; Python {sys.version.split()[0]}. Medians in ms.",
        flush=True,
    )
    header = ("function", "init", "min-max", "minimal", "/ minimal", "libraries", "own code", "own share")
    print("  {:<20} {:>7} {:>11} {:>8} {:>9} {:>10} {:>9} {:>9}".format(*header))
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "minimal_handler.py").write_text(MINIMAL_HANDLER)
        for name, module, environment in functions:
            _row(name, module, [str(ROOT / "shared"), str(ROOT)], environment, scratch)


def _row(name: str, module: str, pythonpath: list[str], environment: dict[str, str], scratch: str) -> None:
    print(f"  {name:<20}", end=" ", flush=True)  # the row's label first: the figures take a few seconds
    libraries = json.loads(_python(LIBRARIES_OF.format(module=module), pythonpath, environment))
    jobs = {
        "minimal": ("minimal_handler", [scratch], {}, []),
        "whole": (module, pythonpath, environment, []),
        "split": (module, pythonpath, environment, libraries),
    }
    if not QUICK:  # one untimed round writes the .pyc files (a deployed package ships them)
        for job in jobs.values():
            _split_ms(*job)
    runs: dict[str, list[list[float]]] = {key: [] for key in jobs}
    for _ in range(RUNS):
        for key, job in jobs.items():
            runs[key].append(_split_ms(*job))
    whole = [run[-1] for run in runs["whole"]]
    init, minimal = statistics.median(whole), statistics.median(run[-1] for run in runs["minimal"])
    libs, own = (statistics.median(run[index] for run in runs["split"]) for index in (0, 1))
    spread = f"{min(whole):.0f}-{max(whole):.0f}"
    print(
        f"{init:5.0f}ms {spread:>11} {minimal:6.0f}ms {init / minimal:8.2f}x {libs:8.0f}ms {own:7.0f}ms"
        f" {own / init:9.0%}",
        flush=True,
    )
