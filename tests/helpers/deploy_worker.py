"""Driving deployToChat and its worker in tests: a linked user, the queue drained as Lambda's event source
mapping would, and the sandbox guild read back. (PYTEST_DONT_REWRITE: helpers, no assertions of their own.)"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3

from local.template import LOCAL_REGION
from svcconf.api import budget
from svcconf.settings import get_settings
from tests.helpers.handlers import bearer

ALICE = "1191000000000000101"
DEMO, WORKSHOP, QUIET, LOCKED = (f"119100000000000100{n}" for n in range(1, 5))
USER = "web-user-1"


@dataclass
class WorkerContext:
    """A worker invocation's context with plenty of time, unless a test gives it less."""

    remaining_ms: int = 300_000
    function_name: str = "deploy-worker"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:deploy-worker"
    aws_request_id: str = "worker-request"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def link(invoke: Callable[..., Any], platform: Any, user: str = USER, chat_user: str = ALICE) -> dict[str, Any]:
    """The chat user's account linked to `user` as a web app links it (a sign-in's state, PKCE): the identity."""
    from tests.helpers.sign_in import link_account

    def call(operation: str, body: dict[str, Any]) -> tuple[int, Any]:
        response = invoke(operation, body, headers=bearer(user))
        return response.status, response.body

    def mint(chat_user_id: str, redirect_uri: str, challenge: str) -> str:
        return platform.mint_code(chat_user_id, redirect_uri, code_challenge=challenge)

    return link_account(call, mint, chat_user)


def deploy_body(guild_id: str, config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "action": "deploy",
        "guild_id": guild_id,
        "project_id": "proj-1",
        "project_name": "Test project",
        "config": config,
        **extra,
    }


def schedules() -> list[dict[str, Any]]:
    """The one-time schedules that wake waiting deployments, as EventBridge Scheduler holds them."""
    scheduler = boto3.client("scheduler", region_name=LOCAL_REGION)
    group = get_settings().deploy_schedule_group
    return [
        scheduler.get_schedule(Name=summary["Name"], GroupName=group)
        for summary in scheduler.list_schedules(GroupName=group)["Schedules"]
    ]


def sqs_record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """Lambda's SQS record for a received message, as the event source mapping builds it."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes") or {},
        "messageAttributes": {},
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": LOCAL_REGION,
    }


class WorkerQueue:
    """One of the template's worker queues in moto: messages received one at a time, as Lambda would see them."""

    def __init__(self, aws: Any, logical_id: str):
        self.url = aws.refs[logical_id]
        self.arn = aws.attrs[(logical_id, "Arn")]
        self.sqs = boto3.client("sqs", region_name=LOCAL_REGION)

    def receive(self) -> list[dict[str, Any]]:
        return self.sqs.receive_message(
            QueueUrl=self.url, MaxNumberOfMessages=1, WaitTimeSeconds=0, MessageSystemAttributeNames=["All"]
        ).get("Messages", [])

    def waiting(self) -> int:
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["ApproximateNumberOfMessages"])
        return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


class DeployQueue(WorkerQueue):
    """The template's deploy queue in moto, and the worker fed from it."""

    def __init__(self, aws: Any):
        super().__init__(aws, "DeployQueue")

    def record(self, message: dict[str, Any]) -> dict[str, Any]:
        return sqs_record(message, self.arn)

    @staticmethod
    def handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        return importlib.import_module("functions.deployWorker.app").lambda_handler

    def drain(self, context: Callable[[], WorkerContext] = WorkerContext, *, limit: int = 50) -> list[dict[str, Any]]:
        """Feeds every message (continuations included) to the worker until the queue is empty, each invocation
        with a fresh `context()`; the worker's answers."""
        handler = self.handler()
        answers = []
        for _ in range(limit):
            messages = self.receive()
            if not messages:
                return answers
            budget.stop()  # a worker's invocation is its own: no deployToChat call's budget left in this thread
            answer = handler({"Records": [self.record(m) for m in messages]}, context())
            answers.append(answer)
            failed = {failure["itemIdentifier"] for failure in answer.get("batchItemFailures", [])}
            for message in messages:
                if message["MessageId"] not in failed:
                    self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])
        raise AssertionError(f"the deploy queue still had messages after {limit} batches")


def writes(platform: Any) -> list[tuple[str, str]]:
    """The platform write requests logged so far: (method, route)."""
    return [
        (e["method"], e["route"]) for e in platform.request_log if e["method"] in ("POST", "PATCH", "PUT", "DELETE")
    ]


def live_roles(platform: Any, guild_id: str) -> dict[str, dict[str, Any]]:
    return {role["name"]: role for role in platform.guild(guild_id)["roles"].values()}


def live_channels(platform: Any, guild_id: str) -> dict[str, dict[str, Any]]:
    return {channel["name"]: channel for channel in platform.guild(guild_id)["channels"].values()}


def structure(roles: list[dict[str, Any]], channels: list[dict[str, Any]]) -> dict[str, list[tuple[Any, ...]]]:
    """A guild's roles and channels, every attribute a deploy or rollback touches, comparable across the
    sandbox's control view and a snapshot in the backup store."""
    return {
        "roles": sorted(
            (r["id"], r["name"], r["position"], str(r["permissions"]), r["color"], r["hoist"], r["mentionable"])
            for r in roles
        ),
        "channels": sorted(
            (
                c["id"],
                c["name"],
                c["type"],
                c.get("parent_id"),
                c["position"],
                c.get("topic") or None,
                c.get("nsfw", False),
                c.get("rate_limit_per_user") or 0,
                c.get("user_limit"),
                tuple(
                    sorted((o["id"], o["type"], str(o["allow"]), str(o["deny"])) for o in c["permission_overwrites"])
                ),
            )
            for c in channels
        ),
    }


def without_ids(config: dict[str, Any]) -> dict[str, Any]:
    """A configuration as it reads on any server: the objects' ids (one server's) left out."""
    config = {**config, "roles": [{k: v for k, v in role.items() if k != "id"} for role in config.get("roles", [])]}

    def channels(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in channel.items() if k != "id"} for channel in items]

    config["categories"] = [
        {**{k: v for k, v in category.items() if k != "id"}, "channels": channels(category.get("channels", []))}
        for category in config.get("categories", [])
    ]
    config["channels"] = channels(config.get("channels", []))
    return config
