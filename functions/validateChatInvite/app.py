"""POST /functions/validateChatInvite: is this invitation of the chat platform valid, and to which server."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel, Field

from svcconf.api import BEARER_AUTH, create_app, error_responses
from svcconf.auth import BearerUser, bearer_user
from svcconf.invites import InviteValidation, validate_invite
from svcconf.observability import logger, metrics, tracer


class InviteRequest(BaseModel):
    invite: str = Field(min_length=1, max_length=200, examples=["https://discord.gg/svcDemo", "svcDemo"])


app = create_app("validateChatInvite")


@app.post(
    "/functions/validateChatInvite",
    summary="Check an invitation link or code of the chat platform",
    security=[{BEARER_AUTH: []}],
    responses={200: {"description": "The invitation's status"}, **error_responses(400, 401, 413, 415, 500, 502)},
)
def validate_chat_invite(
    request: Annotated[InviteRequest, Body()],
    _user: Annotated[BearerUser, Depends(bearer_user)],
) -> InviteValidation:
    result = validate_invite(request.invite)
    metrics.add_metric(name="InviteValid" if result.valid else "InviteInvalid", unit="Count", value=1)
    return result


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict, context: Any) -> dict:
    return app.resolve(event, context)
