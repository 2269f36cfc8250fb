"""svcAiChat: its init beside `import anthropic` alone, and what a turn costs at a real model's pace.

Init: min / median / max over fresh processes run interleaved (so a busy machine slows them alike) of
`import anthropic` alone; svcAiChat's handler module (its whole init, the SDK included); and what the handler
adds beyond the SDK (imported after `import anthropic` in the same process: Powertools, PyJWT, the schema, the
layer): the figure to keep small. Relative figures from the development machine, not Lambda's Init Duration.

Turns: for a one-line edit on servers of 10/25, 40/120 and 250/490 roles/channels, first builds of 5/15 and
20/60, and ten categories of ten channels on 250/390: the model's output tokens (the service's request to the
local model, answered at once), the time a model at the default pace (1.8 s, then 63 tokens/s) takes to write
them, and the turn's whole time through `make run` (the local model at that pace, the function warm). Goals: an
edit <= 300 tokens and <= 8 s at every size; a 20/60 first build <= 1,200 tokens, within the 26 s function.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench.quick import QUICK, scaled

ROOT = Path(__file__).resolve().parents[1]
RUNS = scaled(7, 1)

SCRIPTS = {
    "import anthropic alone": "import anthropic",
    "svcAiChat handler (its whole init)": "import functions.svcAiChat.app",
}
BEYOND_SDK = "svcAiChat beyond the SDK (after import anthropic)"
OWN_CODE = "svcAiChat beyond the libraries the design requires"
# The SDK, Powertools (the resolver, Logger, Metrics, Parameters), PyJWT, boto3 and pydantic: what is left is ours.
LIBRARIES = (
    "import anthropic, boto3, jwt, pydantic\n"
    "from aws_lambda_powertools import Logger, Metrics\n"
    "from aws_lambda_powertools.event_handler import APIGatewayRestResolver\n"
    "from aws_lambda_powertools.utilities import parameters"
)
TIMER = """
import time
t = time.perf_counter()
{prelude}
p = time.perf_counter()
{body}
print(time.perf_counter() - p)
"""


def _seconds(body: str, prelude: str = "") -> float:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_SERVICE_NAME": "bench",
        "POWERTOOLS_METRICS_NAMESPACE": "Bench",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = TIMER.format(prelude=prelude or "pass", body=body)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(result.stdout.strip())


def measure(runs: int = RUNS) -> dict[str, list[float]]:
    """Milliseconds per figure, runs interleaved; one untimed run first warms the .pyc files."""
    jobs = [(label, body, "") for label, body in SCRIPTS.items()]
    jobs.append((BEYOND_SDK, SCRIPTS["svcAiChat handler (its whole init)"], "import anthropic"))
    jobs.append((OWN_CODE, SCRIPTS["svcAiChat handler (its whole init)"], LIBRARIES))
    for _, body, prelude in jobs if not QUICK else ():  # quick: no untimed round, the figures are not kept
        _seconds(body, prelude)
    figures: dict[str, list[float]] = {label: [] for label, _, _ in jobs}
    for _ in range(runs):
        for label, body, prelude in jobs:
            figures[label].append(_seconds(body, prelude) * 1000)
    return figures


def run() -> None:
    figures = measure()
    print(f"\nsvcAiChat init beside `import anthropic` alone: fresh processes, {RUNS} runs each, interleaved")
    print(f"  {'':52} {'min':>8} {'median':>8} {'max':>8}")
    for label, values in figures.items():
        print(f"  {label:52} {min(values):6.0f}ms {statistics.median(values):6.0f}ms {max(values):6.0f}ms")
    handler = statistics.median(figures["svcAiChat handler (its whole init)"])
    own = statistics.median(figures[OWN_CODE])
    print(f"  the handler beyond the libraries: {own:.0f} ms, {own / handler:.1%} of its whole init (medians)")
    from bench.ai_turns import run as run_turns  # the turns' figures (a module of their own: this one is init)

    run_turns()


if __name__ == "__main__":
    run()
