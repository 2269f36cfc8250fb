"""Two Lambda instances, two processes, one usage table: moto in server mode holds the counter, each process runs
validateChatInvite's handler as Lambda would, and the user's limit holds across them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests

from local.aws import LocalAws
from local.provision import provision
from local.template import load_template
from tests.helpers.handlers import BOT_TOKEN, JWT_SECRET, ROOT, bearer

LIMIT = 5
CALLS_PER_INSTANCE = 8

INSTANCE = """
import copy, json, sys, time
from functions.validateChatInvite.app import lambda_handler

class Context:
    function_name = "validateChatInvite"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:validateChatInvite"
    aws_request_id = "instance"

event = json.load(open(sys.argv[1]))
event["headers"]["Authorization"] = sys.argv[2]
event["body"] = json.dumps({"invite": "svcDemo"})
event["multiValueHeaders"] = {key: [value] for key, value in event["headers"].items()}
start_at = float(sys.argv[3])
time.sleep(max(0.0, start_at - time.time()))  # both instances start together
statuses = [lambda_handler(copy.deepcopy(event), Context())["statusCode"] for _ in range(int(sys.argv[4]))]
print(json.dumps(statuses))
"""


@pytest.fixture
def shared_table(platform_server) -> Iterator[dict[str, str]]:
    """moto as a server, the template's resources in it; the environment of validateChatInvite's instances."""
    platform_server.state.reset(config=True)
    moto = LocalAws()
    moto.start()
    # moto's server in this process shares its backends with what earlier tests of the worker left: start clean
    requests.post(f"{moto.url}/moto-api/reset", timeout=10).raise_for_status()
    try:
        resources = provision(
            load_template(ROOT / "template.yaml"),
            secret_values={"BotTokenSecret": BOT_TOKEN, "JwtSecret": JWT_SECRET},
            endpoint_url=moto.url,
        )
        environment = {
            **os.environ,
            **moto.environment(),
            **resources.environment_for("ValidateChatInviteFunction"),
            "CHAT_API_BASE_URL": platform_server.base_url,
            "SVC_PLATFORM_READS_PER_MINUTE": str(LIMIT),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        }
        yield environment
    finally:
        moto.stop()


def test_two_instances_share_one_users_counter(shared_table, platform_server, tmp_path) -> None:
    left = 60 - time.time() % 60
    if left < 20:  # the counter's window is the clock's minute: the calls must fall in one
        time.sleep(left + 0.2)
    event = json.loads((ROOT / "events" / "validateChatInvite.json").read_text())
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(event))
    authorization = bearer("shared-user")["Authorization"]
    start_at = str(time.time() + 8)  # after both interpreters have imported the handler
    command = [sys.executable, "-c", INSTANCE, str(event_file), authorization, start_at, str(CALLS_PER_INSTANCE)]
    instances = [
        subprocess.Popen(command, cwd=ROOT, env=shared_table, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [instance.communicate(timeout=120) for instance in instances]

    statuses = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert all(len(answers) == CALLS_PER_INSTANCE for answers in statuses), outputs
    everything = statuses[0] + statuses[1]
    assert sorted(set(everything)) == [200, 429]
    assert everything.count(200) == LIMIT  # not LIMIT per instance
    assert everything.count(429) == 2 * CALLS_PER_INSTANCE - LIMIT
    assert len(platform_server.state.requests("GET", "/invites/{code}")) <= 2  # one lookup per instance, kept
