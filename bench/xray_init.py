"""Init time with and without the AWS X-Ray SDK, each as a ratio to a minimal Powertools handler.

The functions dropped Powertools' Tracer (and with it the X-Ray SDK, in maintenance since February 2026, end of
support February 2027). This measures what that saved, in fresh processes as a Lambda instance starts: imports
and module setup of a minimal handler (Logger, Metrics, validating resolver), the same with `Tracer()`, our
getConfigByCode handler as it was (with `Tracer()`) and as it is. The SDK is installed for the measurement only,
into a temporary `pip install --target` directory: the project does not depend on it. `LAMBDA_TASK_ROOT` is set
so that Tracer starts as it does in Lambda (outside Lambda it disables itself and patches nothing).
Figures are relative, from the development machine, not Lambda's Init Duration; CPU time first, as it moves
less than wall time on a shared machine.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.quick import QUICK, scaled

ROOT = Path(__file__).resolve().parents[1]
RUNS = scaled(9, 1)
# What `aws-lambda-powertools[tracer]==3.37.0` installed before the extra was dropped.
XRAY_SDK = ("aws-xray-sdk==2.15.0", "wrapt==2.5.2")

MINIMAL_HANDLER = """
from typing import Annotated
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel
{tracer_setup}
logger, metrics = Logger(), Metrics()
app = APIGatewayRestResolver(enable_validation=True)

class Ping(BaseModel):
    text: str

@app.post("/ping")
def ping(body: Annotated[Ping, Body()]) -> Ping:
    return body

@logger.inject_lambda_context
@metrics.log_metrics{tracer_decorator}
def lambda_handler(event, context):
    return app.resolve(event, context)
"""

TRACER_SETUP = "from aws_lambda_powertools import Tracer\ntracer = Tracer()\n"
TRACER_DECORATOR = "\n@tracer.capture_lambda_handler(capture_response=False)"

# Our handler as it was: svcconf.observability created a Tracer() when the handler imported it.
HANDLER_WITH_TRACER = TRACER_SETUP + "from functions.getConfigByCode.app import lambda_handler\n"

BEFORE = "getConfigByCode handler before: with Tracer() and the SDK"
NOW = "getConfigByCode handler now: no X-Ray SDK"

# Wall time and CPU time of the import: on a shared, loaded machine wall time swings with the neighbours, CPU time
# much less (an import is CPU-bound once the files are in the page cache).
TIMER = (
    "import time, importlib; w, c = time.perf_counter(), time.process_time(); importlib.import_module({module!r}); "
    "print(time.perf_counter() - w, time.process_time() - c)"
)


def _init_seconds(module: str, pythonpath: list[str], task_root: str) -> tuple[float, float]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
        "LAMBDA_TASK_ROOT": task_root,
        "POWERTOOLS_SERVICE_NAME": "bench",
        "POWERTOOLS_METRICS_NAMESPACE": "Bench",
    }
    for name in ("PYTHONDONTWRITEBYTECODE", "POWERTOOLS_TRACE_DISABLED"):
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "-c", TIMER.format(module=module)], env=env, capture_output=True, text=True, check=True
    )
    wall, cpu = result.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def init_ms(rows: list[tuple[str, str, list[str]]], task_root: str) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU init times (ms) of each row's module in RUNS fresh processes, after one that writes the .pyc
    files (as a package ships them). The rows take turns, so a change in the machine's load touches them alike."""
    for _name, module, pythonpath in rows if not QUICK else ():  # quick: no untimed round, the figures are not kept
        _init_seconds(module, pythonpath, task_root)
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name, _module, _path in rows}
    for _ in range(RUNS):
        for name, module, pythonpath in rows:
            wall, cpu = _init_seconds(module, pythonpath, task_root)
            times[name]["wall"].append(wall * 1000)
            times[name]["cpu"].append(cpu * 1000)
    return times


def _install_xray_sdk(target: Path) -> bool:
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    result = subprocess.run(
        [*pip, "--target", str(target), *XRAY_SDK],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        print(f"  (could not install {' '.join(XRAY_SDK)} for the comparison: {result.stderr.strip()[-300:]})")
    return result.returncode == 0


def run() -> None:
    print(
        f"\nInit time with and without the X-Ray SDK ({XRAY_SDK[0]}): imports and module setup in a fresh "
        f"process as in Lambda (LAMBDA_TASK_ROOT set), {RUNS} runs (Python {sys.version.split()[0]})"
    )
    with tempfile.TemporaryDirectory() as scratch:
        modules, sdk = Path(scratch, "modules"), Path(scratch, "xray-sdk")
        modules.mkdir()
        (modules / "minimal_handler.py").write_text(MINIMAL_HANDLER.format(tracer_setup="", tracer_decorator=""))
        (modules / "minimal_handler_with_tracer.py").write_text(
            MINIMAL_HANDLER.format(tracer_setup=TRACER_SETUP, tracer_decorator=TRACER_DECORATOR)
        )
        (modules / "handler_with_tracer.py").write_text(HANDLER_WITH_TRACER)
        project = [str(modules), str(ROOT / "shared"), str(ROOT)]
        with_sdk = [str(sdk), *project]
        rows = [("minimal Powertools handler (Logger, Metrics, validating resolver)", "minimal_handler", project)]
        if _install_xray_sdk(sdk):
            rows.append(("the same + Tracer() with the X-Ray SDK", "minimal_handler_with_tracer", with_sdk))
            rows.append((BEFORE, "handler_with_tracer", with_sdk))
        rows.append((NOW, "functions.getConfigByCode.app", project))
        times = init_ms(rows, scratch)
    for clock in ("cpu", "wall"):
        baseline = statistics.median(times[rows[0][0]][clock])
        print(f"  {clock.upper() + ' time':<66} {'min':>8} {'median':>8} {'max':>8}   median / minimal handler")
        for name, clocks in times.items():
            runs = clocks[clock]
            median = statistics.median(runs)
            print(f"  {name:<66} {min(runs):6.0f}ms {median:6.0f}ms {max(runs):6.0f}ms   {median / baseline:5.2f}x")
        if BEFORE in times:
            before, now = statistics.median(times[BEFORE][clock]), statistics.median(times[NOW][clock])
            print(
                f"  dropping the X-Ray SDK saves getConfigByCode {before - now:.0f} ms ({(before - now) / before:.0%})"
            )


if __name__ == "__main__":
    run()
