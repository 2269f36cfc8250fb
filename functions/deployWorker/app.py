"""SQS → the deploy worker: runs, or resumes, one deployment or rollback per message.

Idempotent per message (Powertools Idempotency on the SQS message id): a message delivered twice at once
runs once; one whose worker died runs again once its in-progress record expires with that invocation, and
resumes where the deployment's journal says it stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.parser.types import Json

from svcconf.deployments.common import DeployJob
from svcconf.deployments.worker import abandon, run_job
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.typing import LambdaContext


class DeployJobRecord(SqsRecordModel):
    body: Json[DeployJob]


# One message per batch: report its failure as such rather than as an error of the whole invocation.
processor = BatchProcessor(event_type=EventType.SQS, model=DeployJobRecord, raise_on_entire_batch_failure=False)
idempotency = IdempotencyConfig(event_key_jmespath="messageId")
persistence = DynamoDBPersistenceLayer(table_name=get_settings().idempotency_table)


# Powertools' idempotent_function is not annotated: the decorated function keeps its signature.
@idempotent_function(  # type: ignore[untyped-decorator]
    data_keyword_argument="record", config=idempotency, persistence_store=persistence
)
def run_deployment(record: DeployJobRecord, lambda_context: LambdaContext) -> str:
    try:
        run_job(record.body, lambda: lambda_context.get_remaining_time_in_millis() / 1000)
    except Exception:
        # SQS retries the message; after its last delivery it goes to the dead-letter queue, and the deployment
        # must not stay "running" with its guild locked until the lock expires.
        if int(record.attributes.ApproximateReceiveCount) >= get_settings().deploy_max_receives:
            abandon(record.body, f"The deployment failed unexpectedly (request {lambda_context.aws_request_id}).")
        raise
    return record.body.deployment_id


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    idempotency.register_lambda_context(context)
    return process_partial_response(event=event, record_handler=run_deployment, processor=processor, context=context)
