"""SQS → the template worker: plans a seeding job's rounds and generates, vets and stores its chunks.

Idempotent per message (Powertools Idempotency on the SQS message id) and, beneath that, per job and chunk: a
chunk's candidates are kept before anything is stored and each store is counted against the job's quota in one
transaction, so a message delivered again never stores a template twice or more than the job asked for.
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

from svcconf.api import budget
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.templates.generation import generate_templates  # loads the AI SDK: in the init phase
from svcconf.templates.seeding import TemplateMessage, run_message

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.typing import LambdaContext


class TemplateMessageRecord(SqsRecordModel):
    body: Json[TemplateMessage]


processor = BatchProcessor(event_type=EventType.SQS, model=TemplateMessageRecord, raise_on_entire_batch_failure=False)
idempotency = IdempotencyConfig(event_key_jmespath="messageId")
persistence = DynamoDBPersistenceLayer(table_name=get_settings().idempotency_table)


# Powertools' idempotent_function is not annotated: the decorated function keeps its signature.
@idempotent_function(  # type: ignore[untyped-decorator]
    data_keyword_argument="record", config=idempotency, persistence_store=persistence
)
def handle_message(record: TemplateMessageRecord, lambda_context: LambdaContext) -> str:
    last_delivery = int(record.attributes.ApproximateReceiveCount) >= get_settings().template_max_receives
    run_message(record.body, generate=generate_templates, last_delivery=last_delivery)
    return record.body.job_id


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    idempotency.register_lambda_context(context)
    budget.start(context)  # the model call gives up before the function times out
    return process_partial_response(event=event, record_handler=handle_message, processor=processor, context=context)
