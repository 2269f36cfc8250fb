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


def _init_seconds(module: str, pythonpath: list[str], environment: dict[str, str], libraries: list[str]) -> float:
    """One fresh process: the module's import time (after `libraries`, when given)."""
    _, own = _python(TIMER.format(module=module, libraries=libraries), pythonpath, environment).split()
    return float(own)


def init_ms(module: str, pythonpath: list[str], environment: dict[str, str] | None = None) -> list[float]:
    """RUNS init times in ms, each in a fresh process, after one run that writes the .pyc files (a deployed
    package ships them)."""
    if not QUICK:
        _init_seconds(module, pythonpath, environment or {}, [])
    return [_init_seconds(module, pythonpath, environment or {}, []) * 1000 for _ in range(RUNS)]


def _functions() -> list[tuple[str, str, dict[str, str]]]:
    """(name, handler module, template environment) of every function in template.yaml."""
    from moto import mock_aws

    from local.aws import provision
    from local.template import all_functions, load_template

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
        f"\nHandler init time: {len(functions)} functions of template.yaml, a minimal Powertools handler, and each"
        f" function's libraries alone, in {RUNS} fresh processes each (after one that writes .pyc files);"
        f" Python {sys.version.split()[0]}. Medians in ms; min-max of the whole init beside it.",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "minimal_handler.py").write_text(MINIMAL_HANDLER)
        minimal = statistics.median(init_ms("minimal_handler", [scratch]))
    print(f"  minimal Powertools handler (Logger, Metrics, validating resolver): {minimal:.0f} ms")
    header = ("function", "init", "min-max", "/ minimal", "libraries", "own code", "own share")
    print("  {:<20} {:>7} {:>11} {:>9} {:>10} {:>9} {:>9}".format(*header))
    for name, module, environment in functions:
        _row(name, module, [str(ROOT / "shared"), str(ROOT)], environment, minimal)


def _row(name: str, module: str, pythonpath: list[str], environment: dict[str, str], minimal: float) -> None:
    print(f"  {name:<20}", end=" ", flush=True)  # the row's label first: the figures take a few seconds
    libraries = json.loads(_python(LIBRARIES_OF.format(module=module), pythonpath, environment))
    whole = init_ms(module, pythonpath, environment)
    split = [
        _python(TIMER.format(module=module, libraries=libraries), pythonpath, environment).split() for _ in range(RUNS)
    ]
    libs = statistics.median(float(first) * 1000 for first, _ in split)
    own = statistics.median(float(second) * 1000 for _, second in split)
    init = statistics.median(whole)
    spread = f"{min(whole):.0f}-{max(whole):.0f}"
    print(f"{init:5.0f}ms {spread:>11} {init / minimal:8.2f}x {libs:8.0f}ms {own:7.0f}ms {own / init:9.0%}", flush=True)
