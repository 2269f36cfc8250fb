"""Runs deployToChat or the deploy worker in a process of its own, so a test can kill it mid-flight.

    python -m tests.helpers.deploy_driver deploy <user> <guild_id> <config.json> <chat_user_id>
    python -m tests.helpers.deploy_driver rollback <user> <guild_id>
    python -m tests.helpers.deploy_driver work <remaining_ms>
    python -m tests.helpers.deploy_driver snapshot <backup_id>

AWS is a moto server and the platform a sandbox, both named by the environment (AWS_ENDPOINT_URL,
CHAT_API_BASE_URL, the template's variables). Each command prints one JSON line: what the function answered;
`work` prints the message's receipt handle first, before the worker starts.
(PYTEST_DONT_REWRITE: a program, not a test module.)
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import boto3

from tests.helpers.deploy_worker import WorkerContext, sqs_record
from tests.helpers.handlers import LambdaContext, bearer, load_event


def _call(operation: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    event = copy.deepcopy(load_event(operation))
    event["body"] = json.dumps(body)
    event["headers"] = {**event["headers"], **headers}
    event["multiValueHeaders"] = {key: [value] for key, value in event["headers"].items()}
    answer = importlib.import_module(f"functions.{operation}.app").lambda_handler(event, LambdaContext())
    return {"status": answer["statusCode"], "body": json.loads(answer["body"])}


def _mint_code(chat_user_id: str, redirect_uri: str, challenge: str) -> str:
    """The sandbox's code for the user's approval of the sign-in (its control API, over HTTP)."""
    import requests

    sandbox = os.environ["CHAT_API_BASE_URL"].split("/api/", 1)[0]
    body = {"user_id": chat_user_id, "redirect_uri": redirect_uri, "code_challenge": challenge}
    return str(requests.post(f"{sandbox}/_sandbox/oauth/codes", json=body, timeout=30).json()["code"])


def deploy(user: str, guild_id: str, config_path: str, chat_user_id: str) -> dict[str, Any]:
    from tests.helpers.sign_in import link_account

    def call(operation: str, body: dict[str, Any]) -> tuple[int, Any]:
        answer = _call(operation, body, bearer(user))
        return answer["status"], answer["body"]

    link_account(call, _mint_code, chat_user_id)
    body = {
        "action": "deploy",
        "guild_id": guild_id,
        "project_id": "crash-project",
        "project_name": "Crash test",
        "config": json.loads(Path(config_path).read_text()),
    }
    return _call("deployToChat", body, bearer(user))


def rollback(user: str, guild_id: str) -> dict[str, Any]:
    body = {"action": "rollback", "project_id": "crash-project", "guild_id": guild_id}
    return _call("deployToChat", body, bearer(user))


def snapshot(backup_id: str, guild_id: str) -> dict[str, Any]:
    """A deployment's snapshot, fetched as the bot fetches it (with its guild's id)."""
    body = {"action": "get", "backup_id": backup_id, "guild_id": guild_id}
    answer = _call("manageBackup", body, {"x-bot-token": os.environ["BOT_TOKEN"]})
    assert answer["status"] == 200, answer
    return answer["body"]["data"]["backup_data"]


def work(remaining_ms: int) -> dict[str, Any]:
    sqs = boto3.client("sqs")
    queue_url = os.environ["DEPLOY_QUEUE_URL"]
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    messages = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=1, WaitTimeSeconds=1, MessageSystemAttributeNames=["All"]
    ).get("Messages", [])
    if not messages:
        return {"received": 0}
    print(json.dumps({"receipt_handle": messages[0]["ReceiptHandle"]}), flush=True)
    handler = importlib.import_module("functions.deployWorker.app").lambda_handler
    answer = handler({"Records": [sqs_record(messages[0], arn)]}, WorkerContext(remaining_ms=remaining_ms))
    if not answer["batchItemFailures"]:
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=messages[0]["ReceiptHandle"])
    return {"received": 1, "answer": answer}


def main(argv: list[str]) -> None:
    command, *arguments = argv
    if command == "deploy":
        result = deploy(*arguments[:3], chat_user_id=arguments[3])
    elif command == "rollback":
        result = rollback(*arguments)
    elif command == "snapshot":
        result = snapshot(*arguments)
    else:
        result = work(int(arguments[0]))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
