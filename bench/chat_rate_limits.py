"""validateChatInvite and getChatGuilds while the chat-platform sandbox answers 429 to 30 % of requests.

The handlers run in-process under moto with the resources of template.yaml, against the sandbox over HTTP.
Printed per operation: calls, successes, platform requests, 429s received, requests per success (beside the
requests one call needs without faults) and the median latency.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import parse_qs, urlsplit

from bench.quick import scaled

ROOT = Path(__file__).resolve().parents[1]
BOT_TOKEN = "bench-bot-token"  # noqa: S105 - a local sandbox value
JWT_SECRET = "bench-jwt-secret-" + "0" * 48
CLIENT_SECRET = "dev-client-secret"  # noqa: S105 - the sandbox fixture's client
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
ALICE = "1191000000000000101"
FAULTS = {"rate_limit_probability": 0.3, "seed": 2026, "fault_retry_after": [0.05, 0.2]}
CALLS = {"validateChatInvite": scaled(40, 4), "getChatGuilds": scaled(20, 2)}


# A code per call: an invite's answer is kept half a minute in the instance (svcconf/chat/recent.py), and the
# platform's answers, not the instance's, are what this measures. Unknown codes are answered too (valid: false).
def _invite_body(number: int) -> dict[str, Any]:
    return {"invite": f"https://discord.gg/bench{number:04d}"}


BODIES: dict[str, Callable[[int], dict[str, Any]]] = {"validateChatInvite": _invite_body, "getChatGuilds": lambda _: {}}


class _Context:
    function_name = "bench"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    aws_request_id = "bench"


def _invoke(operation: str, body: dict[str, Any], token: str) -> dict[str, Any]:
    event = json.loads((ROOT / "events" / f"{operation}.json").read_text())
    event["body"] = json.dumps(body)
    event["headers"]["Authorization"] = f"Bearer {token}"
    event["multiValueHeaders"] = {key: [value] for key, value in event["headers"].items()}
    response: dict[str, Any] = importlib.import_module(f"functions.{operation}.app").lambda_handler(event, _Context())
    return response


def _measure(operation: str, token: str, state: Any) -> tuple[int, int, int, int, float]:
    before = len(state.request_log)
    successes, latencies = 0, []
    for number in range(CALLS[operation]):
        started = time.perf_counter()
        response = _invoke(operation, BODIES[operation](number), token)
        latencies.append(time.perf_counter() - started)
        successes += response["statusCode"] == 200
    log = state.request_log[before:]
    rate_limited = sum(1 for entry in log if entry.get("status") == 429)
    return CALLS[operation], successes, len(log), rate_limited, statistics.median(latencies)


def run() -> None:
    # The environment points the handlers at this run's moto and sandbox: the benchmarks after it get theirs back.
    with mock.patch.dict(os.environ):
        rows, baseline = _run_with_faults()
    _print(rows, baseline)


@contextlib.contextmanager
def signed_in_world(fixture: dict[str, Any] | None = None, user: str = "bench-user") -> Iterator[tuple[Any, str]]:
    """The sandbox (on `fixture`, the default one if None) and moto with template.yaml's resources, the handlers'
    environment pointed at both, and a bearer token whose user alice has linked: (sandbox, token)."""
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",  # noqa: S106 - moto's
        AWS_DEFAULT_REGION="us-east-1",
        POWERTOOLS_METRICS_DISABLED="true",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]
    from moto import mock_aws

    from local.chat_sandbox import DEFAULT_FIXTURE, start_sandbox
    from local.provision import provision
    from local.template import load_template
    from local.tokens import issue_token
    from svcconf.chat import get_chat_client
    from svcconf.settings import get_settings

    logging.getLogger("svcconf").setLevel(logging.ERROR)
    fixture = fixture or json.loads(Path(DEFAULT_FIXTURE).read_text())
    fixture["bot"]["token"] = BOT_TOKEN
    sandbox, base_url = start_sandbox(fixture=fixture)
    try:
        with mock_aws():
            resources = provision(
                load_template(ROOT / "template.yaml"),
                secret_values={"BotTokenSecret": BOT_TOKEN, "JwtSecret": JWT_SECRET, "ChatClientSecret": CLIENT_SECRET},
            )
            os.environ.update(resources.environment_for(None))
            os.environ.update(
                CHAT_API_BASE_URL=base_url,
                CHAT_CLIENT_ID=sandbox.state.application["client_id"],
                CHAT_REDIRECT_URIS=REDIRECT_URI,
                SVC_PLATFORM_READS_PER_MINUTE="1000",  # the client's retries are measured here, not a user's limit
            )
            get_settings.cache_clear()
            get_chat_client.cache_clear()
            token = issue_token(JWT_SECRET, user)
            started = json.loads(_invoke("chatAuth", {"redirect_uri": REDIRECT_URI, "replace": True}, token)["body"])
            challenge = parse_qs(urlsplit(started["authorize_url"]).query)["code_challenge"][0]
            code = sandbox.state.mint_code(ALICE, REDIRECT_URI, code_challenge=challenge)
            body = {"code": code, "redirect_uri": REDIRECT_URI, "state": started["state"]}
            signed_in = _invoke("chatAuth", body, token)
            assert signed_in["statusCode"] == 200, signed_in["body"]
            yield sandbox, token
    finally:
        sandbox.shutdown()


def _run_with_faults() -> tuple[list[tuple[Any, ...]], dict[str, float]]:
    with signed_in_world() as (sandbox, token):
        baseline = {op: _measure(op, token, sandbox.state)[2] / CALLS[op] for op in CALLS}
        sandbox.state.configure(**FAULTS)
        rows = [(operation, *_measure(operation, token, sandbox.state)) for operation in CALLS]
    return rows, baseline


def _print(rows: list[tuple[Any, ...]], baseline: dict[str, float]) -> None:
    share = FAULTS["rate_limit_probability"]
    print(f"\nChat platform answering 429 to {share:.0%} of requests (retry_after 0.05-0.2 s)")
    header = ("operation", "calls", "ok", "requests", "429s", "req/success", "no faults", "median")
    print("  {:<20} {:>5} {:>4} {:>8} {:>5} {:>11} {:>9} {:>9}".format(*header))
    for operation, calls, ok, requests, limited, median in rows:
        per_success = requests / ok if ok else float("inf")
        print(
            f"  {operation:<20} {calls:>5} {ok:>4} {requests:>8} {limited:>5} {per_success:>11.2f}"
            f" {baseline[operation]:>9.2f} {median * 1000:>6.0f} ms"
        )
