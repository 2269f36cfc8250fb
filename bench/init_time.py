"""Init time of every function of template.yaml (imports and module setup, in fresh processes) beside a minimal
Powertools handler: min, median and max over RUNS processes each, so that noise shows.

This is what a Lambda cold start pays before the first event, measured here on the development machine:
relative figures, not Lambda's Init Duration. Each function is imported with its template environment (table,
queue and secret names; nothing is called), as its Lambda would be.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.xray_init import MINIMAL_HANDLER as MINIMAL_HANDLER_SOURCE

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5

MINIMAL_HANDLER = MINIMAL_HANDLER_SOURCE.format(tracer_setup="", tracer_decorator="")

TIMER = (
    "import time, importlib; t = time.perf_counter(); "
    "importlib.import_module({module!r}); print(time.perf_counter() - t)"
)


def _init_seconds(module: str, pythonpath: list[str], environment: dict[str, str]) -> float:
    env = {
        **os.environ,
        **environment,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "PYTHONDONTWRITEBYTECODE": "",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "POWERTOOLS_SERVICE_NAME": environment.get("POWERTOOLS_SERVICE_NAME", "bench"),
        "POWERTOOLS_METRICS_NAMESPACE": environment.get("POWERTOOLS_METRICS_NAMESPACE", "Bench"),
    }
    result = subprocess.run(
        [sys.executable, "-c", TIMER.format(module=module)], env=env, capture_output=True, text=True, check=True
    )
    return float(result.stdout.strip().splitlines()[-1])


def init_ms(module: str, pythonpath: list[str], environment: dict[str, str] | None = None) -> list[float]:
    """RUNS init times in ms, each in a fresh process, after one run that writes the .pyc files (a deployed
    package ships them)."""
    _init_seconds(module, pythonpath, environment or {})
    return [_init_seconds(module, pythonpath, environment or {}) * 1000 for _ in range(RUNS)]


def _functions() -> list[tuple[str, str, dict[str, str]]]:
    """(name, handler module, template environment) of every function in template.yaml."""
    from local.template import LOCAL_NAME_PREFIX, all_functions, function_environment, load_template

    tpl = load_template(ROOT / "template.yaml")
    # Physical names as make run gives them; nothing is called at import, so nothing needs to exist.
    refs = {logical_id: f"{LOCAL_NAME_PREFIX}{logical_id}" for logical_id in tpl.resources}
    found = []
    for spec in all_functions(tpl):
        environment = function_environment(tpl, spec.logical_id, refs)
        found.append((spec.code_dir.name, spec.handler_module, environment))
    return found


def run() -> None:
    functions = _functions()
    print(
        f"\nHandler init time: each of the {len(functions)} functions of template.yaml and a minimal Powertools"
        f" handler imported in {RUNS} fresh processes (after one that writes .pyc files); Python"
        f" {sys.version.split()[0]}: {(len(functions) + 1) * (RUNS + 1)} processes, a minute or more.",
        flush=True,
    )
    print(f"  {'handler':<64} {'min':>8} {'median':>9} {'max':>8}   median / minimal")
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "minimal_handler.py").write_text(MINIMAL_HANDLER)
        baseline = _row("minimal Powertools handler (Logger, Metrics, resolver)", "minimal_handler", [scratch])
    for name, module, environment in functions:
        _row(f"{name} ({module})", module, [str(ROOT / "shared"), str(ROOT)], environment, baseline)


def _row(
    label: str, module: str, pythonpath: list[str], environment: dict[str, str] | None = None, baseline: float = 0.0
) -> float:
    print(f"  {label:<64}", end=" ", flush=True)  # the row's label first: the figures take a few seconds
    samples = init_ms(module, pythonpath, environment)
    median = statistics.median(samples)
    ratio = f"{median / baseline:.2f}x" if baseline else "1.00x"
    print(f"{min(samples):5.0f} ms  {median:5.0f} ms {max(samples):5.0f} ms   {ratio:>8}", flush=True)
    return median
