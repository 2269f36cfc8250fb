"""POST /functions/chatAuth: exchange the chat platform's OAuth code for the user's identity and token."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api import create_app, error_responses, lambda_entry_point
from svcconf.auth import BearerUser, optional_bearer_user
from svcconf.chat_accounts import ChatIdentity, sign_in
from svcconf.observability import metrics


class ChatAuthRequest(BaseModel):
    # repr=False: Powertools logs the validated request at DEBUG, and the code is a credential until it is used.
    code: str = Field(min_length=1, max_length=512, repr=False, description="OAuth code issued by the chat platform.")
    redirect_uri: str = Field(min_length=1, max_length=2048, description="One of CHAT_REDIRECT_URIS.")


app = create_app("chatAuth")


@app.post(
    "/functions/chatAuth",
    summary="Sign in with the chat platform (links the account when a bearer token is sent)",
    responses={200: {"description": "The chat identity"}, **error_responses(400, 413, 415, 500, 502, 503)},
)
def chat_auth(
    request: Annotated[ChatAuthRequest, Body()],
    user: Annotated[BearerUser | None, Depends(optional_bearer_user)],
) -> ChatIdentity:
    identity = sign_in(request.code, request.redirect_uri, user)
    metrics.add_metric(name="ChatSignIn", unit="Count", value=1)
    return identity


lambda_handler = lambda_entry_point(app)
