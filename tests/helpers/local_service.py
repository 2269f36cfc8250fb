"""`make run` as a user starts it, for the end-to-end tests: `python -m local.run` in a subprocess (`running`),
its state once ready (`LocalService`), and a scratch runner of a small template of its own (`ScratchService`).
tests/e2e/conftest.py makes them session fixtures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from local.runner import free_port

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_SECONDS = 60
# One dev user sends a whole suite's requests to a runner, far more than a person would: the limits per user are
# lifted there unless a test sets its own (tests/e2e/test_limits_local_run.py sets them low).
SUITE_LIMITS = {
    "SVC_AI_TURNS_PER_MINUTE": "100000",
    "SVC_AI_TOKENS_PER_DAY": "1000000000",
    "SVC_PLATFORM_READS_PER_MINUTE": "100000",
}
REQUEST_TIMEOUT_SECONDS = 30

# Runs in a separate interpreter so no boto3 client or settings cached by other tests can point elsewhere.
_MINT_SCRIPT = """
import json, sys
from svcconf.codes import mint_code
minted = mint_code(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
print(minted.code)
"""


def post_once_warm(url: str, body: Any, headers: dict[str, str], *, give_up_seconds: float = 120) -> requests.Response:
    """One request, sent again while the runner answers its own 429 (no sandbox came free within 29 s: a function's
    sandboxes still starting on a busy machine, as a Lambda cold start can be throttled); the service's own 429 of
    a limit (its body names the `limit`) is an answer."""
    give_up_at = time.monotonic() + give_up_seconds
    while True:
        response = requests.post(url, json=body, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS + 5)
        starting = response.status_code == 429 and "limit" not in response.json()
        if not starting or time.monotonic() > give_up_at:
            return response
        time.sleep(0.5)


@dataclass
class LocalService:
    state: dict[str, Any]
    first_answer_seconds: float
    log_path: Path

    @property
    def base_url(self) -> str:
        return self.state["base_url"]

    def url(self, operation: str) -> str:
        return f"{self.base_url}/functions/{operation}"

    @property
    def sandbox_url(self) -> str:
        """The chat-platform sandbox's root, where its `/_sandbox/...` controls are (the clock, the log)."""
        return self.state["chat_api_base_url"].removesuffix("/api/v10")

    @property
    def bot_headers(self) -> dict[str, str]:
        return {"x-bot-token": self.state["bot_token"]}

    def call(self, operation: str, body: Any, *, headers: dict[str, str] | None = None) -> requests.Response:
        return requests.post(
            self.url(operation),
            json=body,
            headers={**self.bot_headers, **(headers or {})},
            timeout=REQUEST_TIMEOUT_SECONDS,
        )

    def mint_code(self, configuration: dict[str, Any], project_name: str = "E2E project") -> str:
        """A fresh deployment code, minted by the layer's own code into the runner's moto."""
        environment = {**os.environ, **self.state["env"]}
        environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT)])
        completed = subprocess.run(
            [sys.executable, "-c", _MINT_SCRIPT, "e2e-project", project_name, json.dumps(configuration)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=REQUEST_TIMEOUT_SECONDS,
            check=True,
        )
        return completed.stdout.strip().splitlines()[-1]


def log_tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no output)"


@contextmanager
def running(
    directory: Path, *extra_args: str, environ: dict[str, str] | None = None, prewarm: bool = False
) -> Iterator[tuple[dict[str, Any], float, Path]]:
    """`python -m local.run` until the block ends: its state once ready, when it started, its log. `prewarm`: every
    function warms a sandbox at start, as `make run` does; else each starts on its first request (SVC_LOCAL_PREWARM=0):
    most tests' runners call a few of the twelve functions, and ten cold starts are 7 CPU-s of a busy machine."""
    state_file, log_path = directory / "state.json", directory / "runner.log"
    environment = (
        {key: value for key, value in os.environ.items() if key != "PORT"}
        | SUITE_LIMITS
        | {"SVC_LOCAL_PREWARM": "1" if prewarm else "0"}
        | (environ or {})
    )
    command = [sys.executable, "-m", "local.run", "--port", str(free_port()), "--state-file", str(state_file)]
    started = time.monotonic()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [*command, *extra_args], cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        while not state_file.exists():
            if process.poll() is not None:
                pytest.fail(f"local.run exited with {process.returncode}:\n{log_tail(log_path)}")
            if time.monotonic() - started > START_TIMEOUT_SECONDS:
                pytest.fail(f"local.run was not ready within {START_TIMEOUT_SECONDS} s:\n{log_tail(log_path)}")
            time.sleep(0.1)
        yield json.loads(state_file.read_text()), started, log_path
    finally:
        process.send_signal(signal.SIGTERM)  # what Ctrl-C or `docker stop` would do: a clean shutdown
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


AI_WARM_UP_SECONDS = 120  # the SDK's import in a cold sandbox takes seconds, many more on a busy machine


@contextmanager
def local_ai_runner(directory: Path) -> Iterator[LocalService]:
    """`make run` with the local model as its AI provider, whatever the shell that runs the tests sets."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SVC_AI_PROVIDER", "local")
        patch.delenv("ANTHROPIC_API_KEY", raising=False)
        patch.delenv("ANTHROPIC_BASE_URL", raising=False)
        with running(directory) as (state, _started, log_path):
            yield LocalService(state=state, first_answer_seconds=0.0, log_path=log_path)


def ai_chat(service: LocalService, body: dict[str, Any]) -> requests.Response:
    """One svcAiChat call as the runner's user; while the function's sandboxes are still starting (the runner
    answers 429), wait for them."""
    give_up_at = time.monotonic() + AI_WARM_UP_SECONDS
    while True:
        response = requests.post(
            service.url("svcAiChat"),
            json=body,
            headers={"Authorization": f"Bearer {service.state['user_token']}"},
            timeout=REQUEST_TIMEOUT_SECONDS + 5,
        )
        if response.status_code != 429 or time.monotonic() > give_up_at:
            return response


SCRATCH_CONCURRENCY = 3  # the scratch runner's cap of sandboxes per function
# A throwaway service for the runner's own machinery: sandboxes that crash, hang or raise, and an SQS worker.
SCRATCH_TEMPLATE = """
Globals:
  Function:
    Runtime: python3.13
    Timeout: 1
    Environment:
      Variables:
        JOBS_QUEUE_URL: !Ref Jobs
        DEAD_LETTERS_QUEUE_URL: !Ref DeadLetters
Resources:
  ProbeFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/probe/
      Handler: app.lambda_handler
      Events:
        Post: {Type: Api, Properties: {Path: /functions/probe, Method: post}}
  JobWorker:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/jobWorker/
      Handler: app.lambda_handler
      Environment: {Variables: {PROCESSED_FILE: "PROCESSED_FILE_PATH"}}
      Events:
        Jobs:
          Type: SQS
          Properties: {Queue: !GetAtt Jobs.Arn, BatchSize: 10, FunctionResponseTypes: [ReportBatchItemFailures]}
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 1
      RedrivePolicy: {deadLetterTargetArn: !GetAtt DeadLetters.Arn, maxReceiveCount: 1}
  DeadLetters:
    Type: AWS::SQS::Queue
"""
PROBE_HANDLER = """
import json, os, time


def lambda_handler(event, context):
    action = json.loads(event["body"] or "{}").get("action")
    if action == "exit":
        os._exit(3)
    if action == "sleep":
        time.sleep(30)
    if action == "pause":
        time.sleep(0.4)
    if action == "raise":
        raise RuntimeError("internal detail that must not leak")
    body = {"pid": os.getpid(), "remaining_ms": context.get_remaining_time_in_millis(), "event": event}
    headers = {"x-request-id": event["requestContext"]["requestId"]}
    return {"statusCode": 200, "headers": headers, "body": json.dumps(body)}
"""
WORKER_HANDLER = """
import json, os


def lambda_handler(event, context):
    failures = []
    with open(os.environ["PROCESSED_FILE"], "a") as out:
        for record in event["Records"]:
            if record["body"] == "poison":
                failures.append({"itemIdentifier": record["messageId"]})
            else:
                out.write(json.dumps({"body": record["body"], "source": record["eventSource"]}) + "\\n")
    return {"batchItemFailures": failures}
"""


@dataclass
class ScratchService:
    state: dict[str, Any]
    processed_file: Path
    log_path: Path

    def call(self, body: dict[str, Any], *, query: str = "") -> requests.Response:
        url = f"{self.state['base_url']}/functions/probe{query}"
        return requests.post(url, json=body, timeout=REQUEST_TIMEOUT_SECONDS)

    def sqs(self) -> Any:
        import boto3

        return boto3.client(
            "sqs",
            endpoint_url=self.state["moto_url"],
            region_name=self.state["region"],
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
