"""`make run`'s EventBridge Scheduler: moto keeps one-time schedules, the runner fires them on its clock."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import boto3
from moto import mock_aws

from local.queues import ScheduleFirer
from local.template import LOCAL_REGION
from svcconf.store.schedules import at_expression

ROLE = "arn:aws:iam::123456789012:role/scheduler"


def test_a_schedule_fires_once_when_the_clock_reaches_it_and_not_before():
    with mock_aws():
        sqs = boto3.client("sqs", region_name=LOCAL_REGION)
        scheduler = boto3.client("scheduler", region_name=LOCAL_REGION)
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        due = datetime.now(UTC) + timedelta(hours=30)
        scheduler.create_schedule(
            Name="resume",
            ScheduleExpression=at_expression(due),
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={"Arn": arn, "RoleArn": ROLE, "Input": json.dumps({"job": 1})},
        )
        now = [datetime.now(UTC).timestamp()]
        firer = ScheduleFirer(scheduler, sqs, {arn: url}, lambda: now[0], threading.Event())

        early = firer.fire_due()
        now[0] = due.timestamp() + 1
        fired = firer.fire_due()
        again = firer.fire_due()

        assert (early, fired, again) == (0, 1, 0)
        [message] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert json.loads(message["Body"]) == {"job": 1}
        assert scheduler.list_schedules()["Schedules"] == []
