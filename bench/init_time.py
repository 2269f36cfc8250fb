"""Init time of a handler (imports and module setup, in a fresh process) beside a minimal Powertools handler.

This is what a Lambda cold start pays before the first event, measured here on the development machine:
relative figures, not Lambda's Init Duration.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 9

MINIMAL_HANDLER = """
from typing import Annotated
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel

logger, tracer, metrics = Logger(), Tracer(), Metrics()
app = APIGatewayRestResolver(enable_validation=True)

class Ping(BaseModel):
    text: str

@app.post("/ping")
def ping(body: Annotated[Ping, Body()]) -> Ping:
    return body

@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event, context):
    return app.resolve(event, context)
"""

TIMER = (
    "import time, importlib; t = time.perf_counter(); "
    "importlib.import_module({module!r}); print(time.perf_counter() - t)"
)


def _init_seconds(module: str, pythonpath: list[str]) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "PYTHONDONTWRITEBYTECODE": "",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_SERVICE_NAME": "bench",
        "POWERTOOLS_METRICS_NAMESPACE": "Bench",
    }
    result = subprocess.run(
        [sys.executable, "-c", TIMER.format(module=module)], env=env, capture_output=True, text=True, check=True
    )
    return float(result.stdout.strip())


def median_init_ms(module: str, pythonpath: list[str]) -> float:
    _init_seconds(module, pythonpath)  # warm the .pyc files, as a deployed package ships them
    return statistics.median(_init_seconds(module, pythonpath) for _ in range(RUNS)) * 1000


def run() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "minimal_handler.py").write_text(MINIMAL_HANDLER)
        baseline = median_init_ms("minimal_handler", [scratch])
    rows = [("minimal Powertools handler (Logger, Tracer, Metrics, validating resolver)", baseline)]
    for operation in ("getConfigByCode", "manageBackup"):
        rows.append(
            (f"{operation} handler", median_init_ms(f"functions.{operation}.app", [str(ROOT / "shared"), str(ROOT)]))
        )
    print(
        f"\nHandler init time: imports and module setup in a fresh process, median of {RUNS} "
        f"(Python {sys.version.split()[0]})"
    )
    for name, ms in rows:
        print(f"  {name:<76} {ms:7.1f} ms   {ms / baseline:4.2f}x")
