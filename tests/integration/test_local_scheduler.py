"""`make run`'s EventBridge Scheduler: moto keeps one-time and recurring schedules, the runner fires them on its
clock."""

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


def test_a_recurring_schedule_fires_from_its_start_once_per_period_and_stays():
    with mock_aws():
        sqs = boto3.client("sqs", region_name=LOCAL_REGION)
        scheduler = boto3.client("scheduler", region_name=LOCAL_REGION)
        url = sqs.create_queue(QueueName="backups")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        start = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=6)
        scheduler.create_schedule(
            Name="backup-guild",
            ScheduleExpression="rate(6 hours)",
            StartDate=start,
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={"Arn": arn, "RoleArn": ROLE, "Input": json.dumps({"guild_id": "1"})},
        )
        now = [start.timestamp() - 1]
        firer = ScheduleFirer(scheduler, sqs, {arn: url}, lambda: now[0], threading.Event())

        counts = [firer.fire_due()]  # a second before its start
        now[0] += 1
        counts += [firer.fire_due(), firer.fire_due()]  # at its start, then again at once
        now[0] += 6 * 3600 - 1
        counts.append(firer.fire_due())  # a second before the next period
        now[0] += 1
        counts.append(firer.fire_due())  # the next period
        now[0] += 3 * 6 * 3600
        counts += [firer.fire_due(), firer.fire_due()]  # three periods missed: once

        assert counts == [0, 1, 0, 0, 1, 1, 0]
        bodies = []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            bodies += [json.loads(m["Body"]) for m in messages]
            for m in messages:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        assert bodies == [{"guild_id": "1"}] * 3
        assert [s["Name"] for s in scheduler.list_schedules()["Schedules"]] == ["backup-guild"]


def test_a_replaced_recurring_schedule_runs_from_its_new_start():
    with mock_aws():
        sqs = boto3.client("sqs", region_name=LOCAL_REGION)
        scheduler = boto3.client("scheduler", region_name=LOCAL_REGION)
        url = sqs.create_queue(QueueName="backups")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        start = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
        schedule = {
            "Name": "backup-guild",
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "Target": {"Arn": arn, "RoleArn": ROLE, "Input": "{}"},
        }
        scheduler.create_schedule(**schedule, ScheduleExpression="rate(1 hour)", StartDate=start)
        now = [start.timestamp()]
        firer = ScheduleFirer(scheduler, sqs, {arn: url}, lambda: now[0], threading.Event())
        first = firer.fire_due()
        scheduler.update_schedule(
            **schedule, ScheduleExpression="rate(24 hours)", StartDate=start + timedelta(hours=24)
        )
        now[0] += 2 * 3600
        early = firer.fire_due()  # the hourly runs are gone
        now[0] += 22 * 3600
        fired = firer.fire_due()

        assert (first, early, fired) == (1, 0, 1)
