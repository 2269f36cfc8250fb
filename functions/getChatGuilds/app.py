"""POST /functions/getChatGuilds: the chat-platform servers the bearer user can access."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from pydantic import BaseModel

from svcconf.accounts.chat_account import GuildSummary, accessible_guilds
from svcconf.api.auth import BearerUser, bearer_user
from svcconf.api.examples import GUILDS_ANSWERS
from svcconf.api.resolver import create_app, lambda_entry_point
from svcconf.api.responses import BEARER_AUTH, BEARER_ERRORS, error_responses, success
from svcconf.limits import platform_reads


class GuildList(BaseModel):
    guilds: list[GuildSummary]


app = create_app("getChatGuilds")


@app.post(
    "/functions/getChatGuilds",
    operation_id="getChatGuilds",
    tags=["Servers"],
    summary="Servers of the chat platform that the user can access",
    description=(
        "The servers (guilds) of the chat account linked to the bearer user (chatAuth links it), with the user's "
        "permissions there, whether the user may manage it and whether the service's bot is in it. The body may "
        "be empty or `{}`. Counts as a platform read (`SVC_PLATFORM_READS_PER_MINUTE`, v4). A chat account whose "
        "refresh the platform refused is answered 400 without asking the platform again until chatAuth links it anew."
    ),
    security=[{BEARER_AUTH: []}],
    responses={
        200: success("The user's servers", GuildList, GUILDS_ANSWERS),
        **error_responses(
            {
                **BEARER_ERRORS,
                400: "no usable chat account is linked to the bearer user: sign in with chatAuth again",
                502: "the chat platform failed or is rate-limiting the service",
            },
            limited=True,
        ),
    },
)
def get_chat_guilds(user: Annotated[BearerUser, Depends(bearer_user)]) -> GuildList:
    with platform_reads(user):
        return GuildList(guilds=accessible_guilds(user))


lambda_handler = lambda_entry_point(app)
