"""POST /functions/validateChatInvite: is this invitation of the chat platform valid, and to which server."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api import BEARER_AUTH, create_app, error_responses, lambda_entry_point
from svcconf.auth import BearerUser, bearer_user
from svcconf.invites import InviteValidation, validate_invite
from svcconf.observability import metrics


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


lambda_handler = lambda_entry_point(app)
