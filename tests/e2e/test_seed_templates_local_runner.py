"""`make run` with the local model (SVC_AI_PROVIDER=local): seedTemplates over HTTP, the template worker fed
from the local queue, the library read back from the runner's DynamoDB."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from boto3.dynamodb.conditions import Key

from svcconf.config import ServerConfig, lint_config
from svcconf.store import blobs
from tests.helpers.local_service import REQUEST_TIMEOUT_SECONDS, log_tail, post_once_warm, running

JOB_TIMEOUT_SECONDS = 180


def _table(state: dict[str, Any]) -> Any:
    env = state["env"]
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env.get("AWS_DEFAULT_REGION", "us-east-1"),
        aws_access_key_id=env.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=env.get("AWS_SECRET_ACCESS_KEY", "testing"),
    )
    return resource.Table(env["TEMPLATES_TABLE_NAME"])


def _library(table: Any) -> list[dict[str, Any]]:
    items, arguments = [], {"KeyConditionExpression": Key("pk").eq("LIBRARY") & Key("sk").begins_with("TEMPLATE#")}
    while True:
        response = table.query(**arguments)
        items += response["Items"]
        if "LastEvaluatedKey" not in response:
            return items
        arguments["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def test_make_run_seeds_exactly_50_distinct_valid_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_AI_PROVIDER", "local")
    monkeypatch.setenv("SVC_LOCAL_CONCURRENCY", "1")  # one sandbox per function: lighter on a shared machine
    # The job's correctness at 50 templates, not the model's pace (~30 s a chunk at 63 tokens/s, ten chunks one at a
    # time here): the pace is measured by `python -m bench ai`.
    monkeypatch.setenv("SVC_LOCAL_MODEL_TOKENS_PER_SECOND", "0")
    with running(tmp_path) as (state, _, log_path):
        url = f"{state['base_url']}/functions/seedTemplates"
        admin = {"Authorization": f"Bearer {state['admin_token']}"}

        started = post_once_warm(url, {"count": 50}, admin)
        busy = requests.post(url, json={"count": 5}, headers=admin, timeout=REQUEST_TIMEOUT_SECONDS)
        assert started.status_code == 202, f"{started.text}\n{log_tail(log_path)}"
        job_id = started.json()["job_id"]
        table = _table(state)
        deadline = time.monotonic() + JOB_TIMEOUT_SECONDS
        while True:
            job = table.get_item(Key={"pk": f"JOB#{job_id}", "sk": "JOB"}, ConsistentRead=True)["Item"]
            if job["status"] != "running":
                break
            assert time.monotonic() < deadline, f"the job was still running:\n{log_tail(log_path)}"
            time.sleep(0.5)
        library = _library(table)

    assert started.status_code == 202, started.text
    assert busy.status_code == 200
    assert busy.json()["started"] is False
    assert busy.json()["job_id"] == job_id
    assert (job["status"], int(job["stored"]), int(job["requested"])) == ("succeeded", 50, 50)
    generated = [item for item in library if item.get("job_id") == job_id]
    assert len(generated) == 50
    assert len({item["name"].casefold() for item in library}) == len(library)
    for item in generated:
        assert lint_config(ServerConfig.model_validate(blobs.unpack(item["configuration"]))) == []
    assert sum(1 for item in library if item["source"] == "starter") >= 12
