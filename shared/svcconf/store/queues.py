"""SQS: the one place that sends messages to the service's queues."""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

import boto3

from svcconf.store.dynamo import CLIENT_CONFIG

if TYPE_CHECKING:
    from types_boto3_sqs import SQSClient  # development-only stubs (requirements.txt)

MAX_DELAY_SECONDS = 900  # SQS's limit on a message's delay


@cache
def _sqs() -> SQSClient:
    return boto3.client("sqs", config=CLIENT_CONFIG)


def send(queue_url: str, body: dict[str, Any], *, delay_seconds: int = 0) -> str:
    """Queues one JSON message; returns its message id."""
    delay = max(0, min(MAX_DELAY_SECONDS, delay_seconds))
    response = _sqs().send_message(QueueUrl=queue_url, MessageBody=json.dumps(body), DelaySeconds=delay)
    return response["MessageId"]
