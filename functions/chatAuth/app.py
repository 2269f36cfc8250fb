"""POST /functions/chatAuth: start a sign-in with the chat platform, or exchange its OAuth code for the user's identity
and token (linking it to the bearer user the sign-in was started for)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, ConfigDict, Field, RootModel

from svcconf.accounts.chat_account import ChatIdentity
from svcconf.accounts.sign_in import SignInStarted, finish_sign_in, start_sign_in
from svcconf.api.auth import BearerUser, optional_bearer_user
from svcconf.api.examples import CHAT_AUTH_ANSWERS, CHAT_AUTH_REQUESTS
from svcconf.api.resolver import create_app, lambda_entry_point
from svcconf.api.responses import error_responses, request_examples, success
from svcconf.errors import BadRequest
from svcconf.observability import metrics


class ChatAuthRequest(BaseModel):
    # What the body alone decides, said in the schema: a `state` comes back with the platform's `code` (a state
    # without a code is a 400 on `code`). Whether a state is required depends on the bearer token, a header.
    model_config = ConfigDict(json_schema_extra={"dependentRequired": {"state": ["code"]}})

    # repr=False: Powertools logs the validated request at DEBUG, and the code is a credential until it is used.
    code: str | None = Field(
        None,
        min_length=1,
        max_length=512,
        repr=False,
        description="OAuth code issued by the chat platform. Left out (with a bearer token): a sign-in is started.",
    )
    redirect_uri: str = Field(min_length=1, max_length=2048, description="One of CHAT_REDIRECT_URIS.")
    state: str | None = Field(
        None,
        min_length=1,
        max_length=128,
        repr=False,
        description="The `state` this service minted for the same bearer user (required to link an account).",
    )
    replace: bool = Field(
        False,
        strict=True,
        description="Starting a sign-in: replace the chat account linked to this user already (else 409).",
    )


class ChatAuthAnswer(RootModel[SignInStarted | ChatIdentity]):
    """A sign-in started (`state`, `authorize_url`), or the chat identity (`chatUserId`, ...)."""


app = create_app("chatAuth")


@app.post(
    "/functions/chatAuth",
    operation_id="chatAuth",
    tags=["Sign-in"],
    summary="Sign in with the chat platform (links the account to the bearer user who started the sign-in)",
    description=(
        "Two steps when a web app links a user's chat account (v4). First, with a bearer token in "
        "`Authorization: Bearer <JWT>`, `redirect_uri` and no `code`: the service mints a single-use `state` "
        "(10 minutes) bound to that user and answers the chat platform's `authorize_url` carrying it and a PKCE "
        "challenge (the verifier stays in the service); a user already linked to a chat account needs "
        "`replace: true`, else 409. Then, back from the platform, the same bearer token with `code`, "
        "`redirect_uri` and `state`: the code is exchanged and the identity linked to that user (`linked: true`). "
        "A bearer token with a code and no `state`, or a state used, expired or minted for another user: 400 on "
        "`state`, nothing linked. No authentication is needed otherwise: without a bearer token and without a "
        "state, the code is exchanged for the identity and its access token and nothing is linked. A bearer "
        "token that is sent (it is optional) and not valid is refused with 401. Every answer carries "
        "`Cache-Control: no-store`."
    ),
    # Powertools leaves out an empty security list; `[]` says that the operation needs none.
    openapi_extensions={"security": []},
    responses={
        200: success("A sign-in started, or the chat identity and its access token", ChatAuthAnswer, CHAT_AUTH_ANSWERS),
        **error_responses(
            {
                400: "a field is invalid; `code` left out without a bearer token; `state` missing with a bearer "
                "token, used, expired or minted for another user; the platform refused the code",
                401: "a bearer token was sent (it is optional) and is missing its scheme, expired or badly signed",
                409: "the bearer user is linked to another chat account already and `replace` was not asked for",
                502: "the chat platform failed",
                503: "the chat platform's OAuth client, or bearer authentication, is not configured",
            }
        ),
    },
)
def chat_auth(
    request: Annotated[ChatAuthRequest, Body(openapi_examples=request_examples(CHAT_AUTH_REQUESTS))],
    user: Annotated[BearerUser | None, Depends(optional_bearer_user)],
) -> ChatAuthAnswer:
    if request.code is None:
        if user is None or request.state is not None:
            raise BadRequest.for_field("code", "Field required")
        started = start_sign_in(user, request.redirect_uri, replace=request.replace)
        metrics.add_metric(name="ChatSignInStarted", unit="Count", value=1)
        return ChatAuthAnswer(started)
    identity = finish_sign_in(request.code, request.redirect_uri, request.state, user)
    metrics.add_metric(name="ChatSignIn", unit="Count", value=1)
    return ChatAuthAnswer(identity)


# The answers carry credentials (an access token) or start one (a state): never stored by a browser or a proxy.
lambda_handler = lambda_entry_point(app, headers={"Cache-Control": "no-store"})
