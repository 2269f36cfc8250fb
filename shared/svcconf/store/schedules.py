"""EventBridge Scheduler: one-time schedules that send a job to a queue later than SQS's 15-minute delay reaches."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from functools import cache
from typing import Any

import boto3
from botocore.exceptions import ClientError

from svcconf.store.dynamo import CLIENT_CONFIG


@cache
def _scheduler() -> Any:
    return boto3.client("scheduler", config=CLIENT_CONFIG)


def at_expression(moment: datetime) -> str:
    """Scheduler's one-time expression, in UTC and rounded up to the second (never before `moment`)."""
    seconds = math.ceil(moment.timestamp())
    return f"at({datetime.fromtimestamp(seconds, UTC).strftime('%Y-%m-%dT%H:%M:%S')})"


def send_later(
    name: str, moment: datetime, *, queue_arn: str, role_arn: str, body: dict[str, Any], group: str = "default"
) -> None:
    """Sends `body` to the queue at `moment`, once; the schedule deletes itself afterwards. A name already
    scheduled is left as it is (a retried worker schedules the same resume)."""
    try:
        _scheduler().create_schedule(
            Name=name,
            GroupName=group,
            ScheduleExpression=at_expression(moment),
            ScheduleExpressionTimezone="UTC",
            FlexibleTimeWindow={"Mode": "OFF"},
            ActionAfterCompletion="DELETE",
            Target={"Arn": queue_arn, "RoleArn": role_arn, "Input": json.dumps(body)},
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConflictException":
            raise
