"""EventBridge Scheduler: one-time schedules that send a job to a queue later than SQS's 15-minute delay reaches, and
recurring ones (a guild's backup schedule) that send the same job every few hours."""

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


def rate_expression(every_hours: int) -> str:
    """Scheduler's recurring expression for every `every_hours` hours."""
    return "rate(1 hour)" if every_hours == 1 else f"rate({every_hours} hours)"


def put_recurring(
    name: str,
    *,
    every_hours: int,
    start: datetime,
    queue_arn: str,
    role_arn: str,
    body: dict[str, Any],
    group: str = "default",
) -> None:
    """Sends `body` to the queue every `every_hours` hours from `start` (its first run), until removed; a schedule
    of that name already there is replaced (its expression, start and input)."""
    schedule: dict[str, Any] = {
        "Name": name,
        "GroupName": group,
        "ScheduleExpression": rate_expression(every_hours),
        "StartDate": datetime.fromtimestamp(math.ceil(start.timestamp()), UTC),
        "FlexibleTimeWindow": {"Mode": "OFF"},
        "Target": {"Arn": queue_arn, "RoleArn": role_arn, "Input": json.dumps(body)},
    }
    try:
        _scheduler().create_schedule(**schedule)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConflictException":
            raise
        _scheduler().update_schedule(**schedule)


def remove(name: str, *, group: str = "default") -> bool:
    """Deletes the schedule; False when there was none."""
    try:
        _scheduler().delete_schedule(Name=name, GroupName=group)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        return False
    return True
