"""Lambda's SQS event source mapping, locally: pollers that feed a worker function its queue's messages."""

from __future__ import annotations

import base64
import logging
import threading
from dataclasses import dataclass
from typing import Any

from local.lambda_runtime import FunctionRuntime, InvocationError
from local.template import LOCAL_REGION, WorkerFunction

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
        pollers = min(self.runtime.concurrency, self.worker.maximum_concurrency or self.runtime.concurrency)
        threads = [
            threading.Thread(target=self._loop, name=f"poll-{self.worker.logical_id}-{i}", daemon=True)
            for i in range(max(1, pollers))
        ]
        for thread in threads:
            thread.start()
        return threads

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                self.poll_once(wait_seconds=1)
            except Exception:
                if not self.stop.is_set():
                    log.exception("poller for %s", self.worker.logical_id)
                    self.stop.wait(1)

    def poll_once(self, wait_seconds: int = 0) -> None:
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=max(1, min(self.worker.batch_size, SQS_MAX_BATCH)),
            WaitTimeSeconds=wait_seconds,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return
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
