"""SQS → the backup worker: one run of a guild's backup schedule per message (EventBridge Scheduler sends them).

A message delivered twice makes no second backup: the second run finds the guild equal to the newest scheduled
backup (the digest) and stores nothing. A run that cannot read the guild records it on the schedule and ends;
the platform's passing failures fail the message, which SQS retries and then moves to the dead-letter queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.parser.types import Json

from svcconf.backups.schedules import BackupJob, run_scheduled
from svcconf.observability import logger, metrics

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.typing import LambdaContext


class BackupJobRecord(SqsRecordModel):
    body: Json[BackupJob]


processor = BatchProcessor(event_type=EventType.SQS, model=BackupJobRecord, raise_on_entire_batch_failure=False)


def run_backup(record: BackupJobRecord) -> str:
    result = run_scheduled(record.body)
    return result.outcome if result else "ignored"


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=run_backup, processor=processor, context=context)
