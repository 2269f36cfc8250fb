"""POST /functions/chatAuth: exchange the chat platform's OAuth code for the user's identity and token."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.accounts.chat_account import ChatIdentity, sign_in
from svcconf.api.auth import BearerUser, optional_bearer_user
from svcconf.api.examples import CHAT_AUTH_ANSWERS, CHAT_AUTH_REQUESTS
from svcconf.api.resolver import create_app, lambda_entry_point
from svcconf.api.responses import error_responses, request_examples, success
from svcconf.observability import metrics


class ChatAuthRequest(BaseModel):
    # repr=False: Powertools logs the validated request at DEBUG, and the code is a credential until it is used.
    code: str = Field(min_length=1, max_length=512, repr=False, description="OAuth code issued by the chat platform.")
    redirect_uri: str = Field(min_length=1, max_length=2048, description="One of CHAT_REDIRECT_URIS.")


app = create_app("chatAuth")


@app.post(
    "/functions/chatAuth",
    operation_id="chatAuth",
    tags=["Sign-in"],
    summary="Sign in with the chat platform (links the account when a bearer token is sent)",
    description=(
        "Exchanges the chat platform's OAuth code for the user's chat identity and access token. No authentication "
        "is needed. A bearer token is optional: when a valid one is sent in `Authorization: Bearer <JWT>`, the chat "
        "identity is linked to that user (`sub`), which getChatGuilds and deployToChat use later (`linked: true`); "
        "a bearer token that is sent and not valid is refused with 401."
    ),
    # Powertools leaves out an empty security list; `[]` says that the operation needs none.
    openapi_extensions={"security": []},
    responses={
        200: success("The chat identity and its access token", ChatIdentity, CHAT_AUTH_ANSWERS),
        **error_responses(
            {
                401: "a bearer token was sent (it is optional) and is missing its scheme, expired or badly signed",
                502: "the chat platform refused the code or failed",
                503: "the chat platform's OAuth client, or bearer authentication, is not configured",
            }
        ),
    },
)
def chat_auth(
    request: Annotated[ChatAuthRequest, Body(openapi_examples=request_examples(CHAT_AUTH_REQUESTS))],
    user: Annotated[BearerUser | None, Depends(optional_bearer_user)],
) -> ChatIdentity:
    identity = sign_in(request.code, request.redirect_uri, user)
    metrics.add_metric(name="ChatSignIn", unit="Count", value=1)
    return identity


lambda_handler = lambda_entry_point(app)
