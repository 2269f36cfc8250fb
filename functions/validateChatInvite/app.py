"""POST /functions/validateChatInvite: is this invitation of the chat platform valid, and to which server."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api.auth import BearerUser, bearer_user
from svcconf.api.examples import INVITE_ANSWERS, INVITE_REQUESTS
from svcconf.api.resolver import create_app, lambda_entry_point
from svcconf.api.responses import BEARER_AUTH, BEARER_ERRORS, error_responses, request_examples, success
from svcconf.invites import InviteValidation, validate_invite
from svcconf.limits import platform_reads
from svcconf.observability import metrics


class InviteRequest(BaseModel):
    invite: str = Field(min_length=1, max_length=200, examples=["https://discord.gg/svcDemo", "svcDemo"])


app = create_app("validateChatInvite")


@app.post(
    "/functions/validateChatInvite",
    operation_id="validateChatInvite",
    tags=["Servers"],
    summary="Check an invitation link or code of the chat platform",
    description=(
        "Reads an invitation (a link or its bare code) from the chat platform: whether it is valid, permanent or "
        "expired, its server's name and member count. An unknown invitation is an answer (`valid: false`), not a 404."
    ),
    security=[{BEARER_AUTH: []}],
    responses={
        200: success("The invitation's status", InviteValidation, INVITE_ANSWERS),
        **error_responses(
            {**BEARER_ERRORS, 502: "the chat platform failed or is rate-limiting the service"}, limited=True
        ),
    },
)
def validate_chat_invite(
    request: Annotated[InviteRequest, Body(openapi_examples=request_examples(INVITE_REQUESTS))],
    user: Annotated[BearerUser, Depends(bearer_user)],
) -> InviteValidation:
    with platform_reads(user):
        result = validate_invite(request.invite)
    metrics.add_metric(name="InviteValid" if result.valid else "InviteInvalid", unit="Count", value=1)
    return result


lambda_handler = lambda_entry_point(app)
