"""A deploy worker killed halfway, its message delivered again: no object twice, the deployment succeeded;
then a rollback of that deploy returns the guild to its snapshot exactly. Killed once some objects are made, and
killed while requests of several of the platform's buckets are in flight (the steps side by side).

Real processes: the worker runs in a child process that the test kills with SIGKILL once the platform has
created some objects; AWS is a moto server and the platform the sandbox, both shared with the children.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests

from local.aws import LocalAws
from local.chat_sandbox import DEFAULT_FIXTURE, SandboxServer, start_sandbox
from local.provision import provision
from local.template import LOCAL_REGION, load_template
from svcconf.config import ServerConfig
from svcconf.deploy_engine.live import read_live_guild
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.chat_sandbox import BUILD_GUILD, chat_settings_for, new_chat_client
from tests.helpers.deploy_worker import ALICE, DEMO, structure
from tests.helpers.handlers import BOT_TOKEN, CHAT_CLIENT_SECRET, JWT_SECRET, REDIRECT_URI

ROOT = Path(__file__).resolve().parents[2]
USER = "crash-user"
KILL_AFTER_CREATES = 8
KINDS = ("roles", "categories", "channels")
IN_PROGRESS_SECONDS = 4  # the killed invocation's remaining time: its idempotency record expires with it
WATCHES = [f"Watch {index:02d}" for index in range(10)]
CONFIG = {
    "name": "Crash",
    # The guild's Member role is listed last (it stands above the new roles: a reorder) and gains a permission.
    "roles": [
        *({"name": name, "permissions": ["SEND_MESSAGES"]} for name in WATCHES),
        {"name": "Member", "permissions": ["SEND_MESSAGES"]},
    ],
    "categories": [
        {"name": "Information", "channels": [{"name": "welcome", "topic": "Read the rules, then say hello"}]},
        {
            "name": "Quarters",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Watch 00", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": f"bunk-{index}"} for index in range(10)],
        },
    ],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A moto server provisioned from template.yaml, a slowed-down sandbox, and the functions' environment."""
    moto = LocalAws(region=LOCAL_REGION)
    moto.start()
    tpl = load_template(ROOT / "template.yaml")
    provisioned = provision(
        tpl,
        secret_values={"BotTokenSecret": BOT_TOKEN, "JwtSecret": JWT_SECRET, "ChatClientSecret": CHAT_CLIENT_SECRET},
        endpoint_url=moto.url,
        region=LOCAL_REGION,
    )
    fixture = json.loads(Path(DEFAULT_FIXTURE).read_text())
    fixture["bot"]["token"] = BOT_TOKEN
    sandbox: SandboxServer
    sandbox, base_url = start_sandbox(fixture=fixture, latency_seconds=0.03)
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "CHAT_", "SVC_"))}
    for logical_id in ("DeployToChatFunction", "DeployWorkerFunction"):
        environment |= provisioned.environment_for(logical_id)
    environment |= moto.environment() | {
        "CHAT_API_BASE_URL": base_url,
        "CHAT_CLIENT_ID": sandbox.state.application["client_id"],
        "CHAT_REDIRECT_URIS": REDIRECT_URI,
        "SVC_DEPLOY_MARGIN_SECONDS": "1",
        "BOT_TOKEN": BOT_TOKEN,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
    }
    config_file = tmp_path_factory.mktemp("crash") / "config.json"
    config_file.write_text(json.dumps(CONFIG))
    root = base_url.removesuffix("/api/v10")
    yield {
        "env": environment,
        "sandbox": sandbox,
        "sandbox_root": root,
        "base_url": base_url,
        "moto": moto,
        "config": config_file,
    }
    sandbox.shutdown()
    moto.stop()


def driver(world: dict[str, Any], *arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.deploy_driver", *arguments],
        cwd=ROOT,
        env=world["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def finished(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])


def creates(world: dict[str, Any]) -> int:
    return sum(
        1
        for entry in world["sandbox"].state.request_log
        if entry["method"] == "POST" and entry["route"] in ("/guilds/{guild_id}/roles", "/guilds/{guild_id}/channels")
    )


def test_a_worker_killed_halfway_resumes_without_doing_anything_twice_and_its_rollback_restores_the_snapshot(world):
    state = world["sandbox"].state
    queued = finished(driver(world, "deploy", USER, DEMO, str(world["config"]), ALICE))
    assert queued["status"] == 202, queued

    # The worker starts, and is killed once the platform has created some objects.
    worker = driver(world, "work", str(IN_PROGRESS_SECONDS * 1000))
    receipt = json.loads(worker.stdout.readline())["receipt_handle"]
    started = time.monotonic()
    while creates(world) < KILL_AFTER_CREATES:
        assert worker.poll() is None, "the worker ended before it could be killed"
        time.sleep(0.01)
    worker.kill()
    worker.wait()
    created_before_the_kill = creates(world)

    # SQS delivers the message again (its visibility timeout, shortened here) once the killed run has expired.
    sqs = boto3.client("sqs", endpoint_url=world["moto"].url, region_name=LOCAL_REGION)
    sqs.change_message_visibility(QueueUrl=world["env"]["DEPLOY_QUEUE_URL"], ReceiptHandle=receipt, VisibilityTimeout=0)
    time.sleep(max(0.0, IN_PROGRESS_SECONDS + 0.5 - (time.monotonic() - started)))
    resumed = finished(driver(world, "work", "300000"))

    assert resumed["answer"] == {"batchItemFailures": []}
    guild = state.guild(DEMO)
    names = Counter(role["name"] for role in guild["roles"].values()) + Counter(
        channel["name"] for channel in guild["channels"].values()
    )
    expected = [*WATCHES, "Member", "Information", "welcome", "Quarters", *(f"bunk-{i}" for i in range(10))]
    assert {name: names[name] for name in expected} == dict.fromkeys(expected, 1)
    record = deployment(world)
    assert record["status"] == "succeeded"
    # Every object counted once, also the one whose checkpoint the kill may have cut off.
    counts = {kind: (record["steps"][kind]["created"], record["steps"][kind]["updated"]) for kind in KINDS}
    assert counts == {"roles": (10, 1), "categories": (1, 0), "channels": (10, 1)}
    assert created_before_the_kill >= KILL_AFTER_CREATES
    assert len(record["journal_created"]) == 21

    # A rollback of that deploy returns the guild to its snapshot exactly.
    snapshot = finished(driver(world, "snapshot", record["backup_id"], DEMO))
    queued = finished(driver(world, "rollback", USER, DEMO))
    assert queued["status"] == 202, queued

    done = finished(driver(world, "work", "300000"))

    assert done["answer"] == {"batchItemFailures": []}
    rollback = deployment(world)
    assert (rollback["kind"], rollback["status"]) == ("rollback", "succeeded")
    deleted = {kind: rollback["steps"][kind]["deleted"] for kind in KINDS}
    assert deleted == {"roles": 10, "categories": 1, "channels": 10}
    live = requests.get(f"{world['sandbox_root']}/_sandbox/guilds/{DEMO}", timeout=30).json()
    before = structure(snapshot["roles"], [*snapshot["categories"], *snapshot["channels"]])
    assert structure(live["roles"], live["channels"]) == before


def deployment(world: dict[str, Any], user: str = USER) -> dict[str, Any]:
    """The user's newest deployment record, straight from the table."""
    table = boto3.resource("dynamodb", endpoint_url=world["moto"].url, region_name=LOCAL_REGION).Table(
        world["env"]["DEPLOYMENTS_TABLE_NAME"]
    )
    items = table.query(
        KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": f"USER#{user}"}, ScanIndexForward=False
    )["Items"]
    return {key: value for key, value in items[0].items() if key != "configuration"}


# -- killed while several buckets are busy -------------------------------------------------------------------------

BUSY_USER = "crash-busy-user"
BUSY_LATENCY_SECONDS = 0.15  # each answer this late: the worker's requests of different buckets overlap
BUSY_REMAINING_SECONDS = 12  # the killed invocation's time: its idempotency record expires with it
ADOPTED = "an object written by a run that was cut short"


def bucket(entry: dict[str, Any]) -> tuple[str, str, str]:
    """A request's platform bucket: its route and major parameter (the guild or the channel its path names)."""
    parts = entry["path"].strip("/").split("/")
    return entry["method"], entry["route"], parts[1] if len(parts) > 1 else ""


def busy_writes(state: Any) -> list[dict[str, Any]]:
    return [entry for entry in state.in_flight if entry["method"] in ("POST", "PATCH", "PUT", "DELETE")]


def worker_output(process: subprocess.Popen[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A worker's answer (its last line) and its log lines (the JSON lines before it)."""
    out, _ = process.communicate(timeout=180)
    assert process.returncode == 0, out
    lines = [json.loads(line) for line in out.strip().splitlines() if line.startswith("{")]
    return lines[-1], [line for line in lines[:-1] if "message" in line]


def test_a_worker_killed_while_several_buckets_are_busy_resumes_with_each_step_once_and_its_rollback_restores(
    world,
):
    state = world["sandbox"].state
    queued = finished(driver(world, "deploy", BUSY_USER, BUILD_GUILD, str(world["config"]), ALICE))
    assert queued["status"] == 202, queued
    before = state.guild(BUILD_GUILD)
    state.configure(latency_seconds=BUSY_LATENCY_SECONDS)
    try:
        # The worker starts, and is killed once requests of two buckets or more are in flight at the platform
        made_before = creates(world)
        worker = driver(world, "work", str(BUSY_REMAINING_SECONDS * 1000))
        receipt = json.loads(worker.stdout.readline())["receipt_handle"]
        started = time.monotonic()
        while len({bucket(entry) for entry in busy_writes(state)}) < 2 or creates(world) - made_before < 3:
            assert worker.poll() is None, "the worker ended before two buckets were busy at once"
            time.sleep(0.005)
        worker.kill()
        cut = busy_writes(state)
        worker.wait()
    finally:
        state.configure(latency_seconds=0.03)
    while state.in_flight:  # the platform still answers what the killed worker sent
        time.sleep(0.05)
    answered = {(entry["method"], entry["path"], entry["time"]): entry["status"] for entry in state.request_log}
    cut_through = [entry for entry in cut if answered[(entry["method"], entry["path"], entry["time"])] < 300]
    assert len({bucket(entry) for entry in cut}) >= 2

    sqs = boto3.client("sqs", endpoint_url=world["moto"].url, region_name=LOCAL_REGION)
    sqs.change_message_visibility(QueueUrl=world["env"]["DEPLOY_QUEUE_URL"], ReceiptHandle=receipt, VisibilityTimeout=0)
    time.sleep(max(0.0, BUSY_REMAINING_SECONDS + 0.5 - (time.monotonic() - started)))
    resumed, logged = worker_output(driver(world, "work", "300000"))

    assert resumed["answer"] == {"batchItemFailures": []}
    # Every write in flight when the worker died, and made, was adopted by the next run: once each
    adopted = [line["key"] for line in logged if line["message"] == ADOPTED]
    assert len(adopted) == len(set(adopted))
    assert len(adopted) >= len(cut_through) >= 2, (adopted, cut_through)
    # No object twice, nothing lost: a second plan of the configuration writes nothing
    guild = state.guild(BUILD_GUILD)
    names = Counter(role["name"] for role in guild["roles"].values()) + Counter(
        channel["name"] for channel in guild["channels"].values()
    )
    expected = [*WATCHES, "Member", "Information", "welcome", "Quarters", *(f"bunk-{i}" for i in range(10))]
    assert {name: names[name] for name in expected} == dict.fromkeys(expected, 1)
    client = new_chat_client(chat_settings_for(world["base_url"], SVC_BOT_TOKEN=world["env"]["BOT_TOKEN"]))
    again = plan_deployment(read_live_guild(client, BUILD_GUILD), ServerConfig.model_validate(CONFIG))
    assert [(step.op, step.key) for step in again.steps] == []
    # The journal: each object once, each write's intent once, the counts the plan's
    record = deployment(world, BUSY_USER)
    assert record["status"] == "succeeded"
    created = record["journal_created"]
    made = [*(set(guild["roles"]) - set(before["roles"])), *(set(guild["channels"]) - set(before["channels"]))]
    assert sorted(created.values()) == sorted(made)
    assert Counter(key.split(":", 1)[0] for key in created) == {"role": 11, "category": 2, "channel": 11}
    updated = {key for key in record["journal_updated"] if not key.startswith("reorder:")}
    assert set(record["journal_intents"]) == set(created) | updated
    counts = {kind: (record["steps"][kind]["planned"], record["steps"][kind]["created"]) for kind in KINDS}
    assert counts == {"roles": (11, 11), "categories": (2, 2), "channels": (11, 11)}

    # Its rollback returns the guild to the snapshot taken before the first write
    snapshot = finished(driver(world, "snapshot", record["backup_id"], BUILD_GUILD))
    queued = finished(driver(world, "rollback", BUSY_USER, BUILD_GUILD))
    assert queued["status"] == 202, queued
    done = finished(driver(world, "work", "300000"))

    assert done["answer"] == {"batchItemFailures": []}
    rollback = deployment(world, BUSY_USER)
    assert (rollback["kind"], rollback["status"]) == ("rollback", "succeeded")
    assert {kind: rollback["steps"][kind]["deleted"] for kind in KINDS} == {
        "roles": 11,
        "categories": 2,
        "channels": 11,
    }
    live = requests.get(f"{world['sandbox_root']}/_sandbox/guilds/{BUILD_GUILD}", timeout=30).json()
    assert structure(live["roles"], live["channels"]) == structure(
        snapshot["roles"], [*snapshot["categories"], *snapshot["channels"]]
    )
