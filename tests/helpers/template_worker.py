"""Driving seedTemplates and its worker in tests: the template queue drained as Lambda's event source mapping
would, every record kept so a test can deliver it again. (PYTEST_DONT_REWRITE: helpers, no assertions.)"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from tests.helpers.deploy_worker import WorkerContext, WorkerQueue, sqs_record


class TemplateQueue(WorkerQueue):
    """The template's queue in moto, and the template worker fed from it."""

    def __init__(self, aws: Any):
        super().__init__(aws, "TemplateQueue")
        self.delivered: list[dict[str, Any]] = []  # every record handed to the worker, in order

    @staticmethod
    def handler() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        return importlib.import_module("functions.templateWorker.app").lambda_handler

    def deliver(self, record: dict[str, Any]) -> dict[str, Any]:
        self.delivered.append(record)
        return self.handler()({"Records": [record]}, WorkerContext(function_name="template-worker"))

    def drain(self, *, limit: int = 200) -> list[dict[str, Any]]:
        """Feeds every message (the rounds' chunk messages included) to the worker until the queue is empty;
        a message whose handling failed is left for redelivery, as Lambda leaves it. The worker's answers."""
        answers = []
        for _ in range(limit):
            messages = self.receive()
            if not messages:
                return answers
            (message,) = messages
            answer = self.deliver(sqs_record(message, self.arn))
            answers.append(answer)
            if not answer.get("batchItemFailures"):
                self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])
            else:  # visible again at once, as after its visibility timeout
                self.sqs.change_message_visibility(
                    QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                )
        raise AssertionError(f"the template queue still had messages after {limit} deliveries")
