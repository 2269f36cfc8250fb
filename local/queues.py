"""Lambda's SQS event source mapping, locally: pollers that feed a worker function its queue's messages; and
EventBridge Scheduler's schedules that send to a queue (one-time ones, and recurring `rate(...)` ones)."""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from local.lambda_runtime import FunctionRuntime, InvocationError
from local.resources import WorkerFunction
from local.template import LOCAL_REGION

SQS_MAX_BATCH = 10  # what one ReceiveMessage or DeleteMessageBatch call takes at most

log = logging.getLogger("local.run")  # one logger for the whole runner


@dataclass
class QueuePoller:
    """One worker function's event source mapping: receive a batch, invoke, delete the messages that succeeded.

    A failed invocation leaves the whole batch for redelivery (and the queue's redrive policy), as in AWS.
    """

    worker: WorkerFunction
    runtime: FunctionRuntime
    queue_url: str
    queue_arn: str
    sqs: Any
    stop: threading.Event

    def start(self) -> list[threading.Thread]:
        # One thread receives for all the mapping's pollers, each batch invoked on a thread of its own, at most
        # `pollers` at once: an idle queue costs one receive a second, not one per poller (15 a second for the
        # three workers, most of an idle runner's CPU).
        pollers = min(self.runtime.concurrency, self.worker.maximum_concurrency or self.runtime.concurrency)
        thread = threading.Thread(
            target=self._loop,
            args=(threading.BoundedSemaphore(max(1, pollers)),),
            name=f"poll-{self.worker.logical_id}",
        )
        thread.daemon = True
        thread.start()
        return [thread]

    def _loop(self, free: threading.BoundedSemaphore) -> None:
        while not self.stop.is_set():
            if not free.acquire(timeout=1):  # every poller busy: receive nothing more until one is done
                continue
            try:
                messages = self.receive(wait_seconds=1)
            except Exception:
                free.release()
                if not self.stop.is_set():
                    log.exception("poller for %s", self.worker.logical_id)
                    self.stop.wait(1)
                continue
            if not messages:
                free.release()
                continue
            threading.Thread(
                target=self._invoke_then_free,
                args=(messages, free),
                name=f"invoke-{self.worker.logical_id}",
                daemon=True,
            ).start()

    def _invoke_then_free(self, messages: list[dict[str, Any]], free: threading.BoundedSemaphore) -> None:
        try:
            self.invoke(messages)
        except Exception:
            if not self.stop.is_set():
                log.exception("poller for %s", self.worker.logical_id)
        finally:
            free.release()

    def receive(self, wait_seconds: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=max(1, min(self.worker.batch_size, SQS_MAX_BATCH)),
            WaitTimeSeconds=wait_seconds,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        return messages

    def invoke(self, messages: list[dict[str, Any]]) -> None:
        """The worker on one batch; the messages that succeeded are deleted, the rest left for redelivery."""
        try:
            result = self.runtime.invoke({"Records": [self._record(message) for message in messages]})
        except InvocationError as exc:
            log.error("%s: batch of %d failed, left for redelivery: %s", self.worker.logical_id, len(messages), exc)
            return
        failed = self._failed_ids(result, {m["MessageId"] for m in messages})
        done = [m for m in messages if m["MessageId"] not in failed]
        for start in range(0, len(done), SQS_MAX_BATCH):
            entries = [
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                for i, m in enumerate(done[start : start + SQS_MAX_BATCH])
            ]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)

    def _failed_ids(self, result: Any, batch_ids: set[str]) -> set[str]:
        if "ReportBatchItemFailures" not in self.worker.function_response_types or not isinstance(result, dict):
            return set()
        failures = result.get("batchItemFailures") or []
        identifiers = {str((f or {}).get("itemIdentifier") or "") for f in failures}
        if identifiers - batch_ids:  # Lambda treats an unknown or empty identifier as a failure of the whole batch
            return batch_ids
        return identifiers

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        attributes = {
            name: {
                "stringValue": value.get("StringValue"),
                "binaryValue": base64.b64encode(value["BinaryValue"]).decode() if "BinaryValue" in value else None,
                "stringListValues": value.get("StringListValues", []),
                "binaryListValues": value.get("BinaryListValues", []),
                "dataType": value.get("DataType"),
            }
            for name, value in (message.get("MessageAttributes") or {}).items()
        }
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes") or {},
            "messageAttributes": attributes,
            "md5OfBody": message.get("MD5OfBody"),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": LOCAL_REGION,
        }


@dataclass
class ScheduleFirer:
    """EventBridge Scheduler, locally: moto records schedules but never fires them, so this does.

    On `clock` (the chat sandbox's, when the runner started it: moving that clock forward makes what waits on it
    due), a schedule whose `at(...)` has come sends its input to its target queue and is deleted, as a schedule
    with ActionAfterCompletion DELETE is. A recurring `rate(n unit)` schedule runs at its StartDate and every
    period after it; it sends its input once when one or more of its runs came since it last fired (a clock moved
    days ahead fires it once, not once per missed period), and stays.
    """

    scheduler: Any
    sqs: Any
    queue_urls: dict[str, str]  # queue ARN -> URL
    clock: Callable[[], float]
    stop: threading.Event
    # a recurring schedule (group, name, expression, start) -> the run it last fired for (epoch seconds)
    _fired: dict[tuple[str, str, str, float], float] = field(default_factory=dict)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._loop, name="scheduler", daemon=True)
        thread.start()
        return thread

    def _loop(self) -> None:
        while not self.stop.wait(1):
            try:
                self.fire_due()
            except Exception:
                if not self.stop.is_set():
                    log.exception("scheduler")

    def fire_due(self) -> int:
        """Sends every due schedule's input to its queue; how many fired."""
        fired = 0
        for summary in self._schedules():
            schedule = self.scheduler.get_schedule(Name=summary["Name"], GroupName=summary["GroupName"])
            expression = schedule.get("ScheduleExpression", "")
            target = schedule["Target"]
            if target["Arn"] not in self.queue_urls:
                continue
            if expression.startswith("rate("):
                fired += self._fire_recurring(schedule, expression)
                continue
            due = _at_seconds(expression)
            if due is None or due > self.clock():
                continue
            self.sqs.send_message(QueueUrl=self.queue_urls[target["Arn"]], MessageBody=target.get("Input", "{}"))
            self.scheduler.delete_schedule(Name=schedule["Name"], GroupName=schedule["GroupName"])
            log.info("schedule %s/%s fired", schedule["GroupName"], schedule["Name"])
            fired += 1
        return fired

    def _fire_recurring(self, schedule: dict[str, Any], expression: str) -> int:
        period = _rate_period(expression)
        start = schedule.get("StartDate") or schedule.get("CreationDate")
        if period is None or not isinstance(start, datetime):
            return 0
        first = start.timestamp()
        now = self.clock()
        if now < first:
            return 0
        latest = first + ((now - first) // period) * period  # the newest run that has come
        key = (schedule["GroupName"], schedule["Name"], expression, first)
        if self._fired.get(key, -1.0) >= latest:
            return 0
        target = schedule["Target"]
        self.sqs.send_message(QueueUrl=self.queue_urls[target["Arn"]], MessageBody=target.get("Input", "{}"))
        self._fired[key] = latest
        log.info("recurring schedule %s/%s fired", schedule["GroupName"], schedule["Name"])
        return 1

    def _schedules(self) -> list[dict[str, Any]]:
        schedules, token = [], None
        while True:
            page = self.scheduler.list_schedules(**({"NextToken": token} if token else {}))
            schedules.extend(page.get("Schedules", []))
            token = page.get("NextToken")
            if not token:
                return schedules


def _at_seconds(expression: str) -> float | None:
    """Epoch seconds of a one-time `at(yyyy-mm-ddThh:mm:ss)` expression (in UTC); None for any other."""
    if not (expression.startswith("at(") and expression.endswith(")")):
        return None
    try:
        return datetime.fromisoformat(expression[3:-1]).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


_RATE_UNITS = {"minute": 60, "minutes": 60, "hour": 3600, "hours": 3600, "day": 86400, "days": 86400}


def _rate_period(expression: str) -> float | None:
    """Seconds between the runs of a `rate(n unit)` expression; None for any other."""
    if not (expression.startswith("rate(") and expression.endswith(")")):
        return None
    value, _, unit = expression[5:-1].partition(" ")
    if not value.isdigit() or int(value) < 1 or unit not in _RATE_UNITS:
        return None
    return timedelta(seconds=int(value) * _RATE_UNITS[unit]).total_seconds()
