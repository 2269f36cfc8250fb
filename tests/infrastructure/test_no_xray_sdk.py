"""No X-Ray SDK in the functions: it is in maintenance (end of support February 2027) and was the largest part of
our init time. Lambda's active tracing, set in template.yaml, still records every invocation's segment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from local.resources import all_functions
from local.template import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")


@pytest.mark.starts  # a fresh interpreter
def test_no_function_loads_the_xray_sdk():
    # Given a fresh interpreter, as a Lambda instance starts, with every function's handler imported
    modules = sorted({function.handler_module for function in all_functions(TEMPLATE)})
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'aws_xray_sdk')))"
    )
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "no-xray-check",  # Powertools' Tracer would start itself inside Lambda
    }
    result = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True, cwd=ROOT
    )
    # Then the SDK was not loaded (Powertools imports its Tracer class always; a Tracer() would load the SDK)
    assert len(modules) >= 7
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_the_layer_does_not_depend_on_the_xray_sdk():
    requirements = (ROOT / "shared" / "requirements.txt").read_text().lower().splitlines()
    powertools = next(line for line in requirements if line.startswith("aws-lambda-powertools"))
    assert "tracer" not in powertools  # the [tracer] extra installs aws-xray-sdk
    assert not [line for line in requirements if line.startswith("aws-xray-sdk")]


def test_lambda_and_api_gateway_still_trace_actively():
    assert TEMPLATE.function_globals["Tracing"] == "Active"
    assert TEMPLATE.body["Globals"]["Api"]["TracingEnabled"] is True
