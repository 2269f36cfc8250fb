"""POST /functions/getChatGuilds: the chat-platform servers the bearer user can access."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends
from pydantic import BaseModel

from svcconf.api import BEARER_AUTH, create_app, error_responses, lambda_entry_point
from svcconf.auth import BearerUser, bearer_user
from svcconf.chat_accounts import GuildSummary, accessible_guilds


class GuildList(BaseModel):
    guilds: list[GuildSummary]


app = create_app("getChatGuilds")


@app.post(
    "/functions/getChatGuilds",
    summary="Servers of the chat platform that the user can access",
    security=[{BEARER_AUTH: []}],
    responses={200: {"description": "The user's servers"}, **error_responses(400, 401, 413, 415, 500, 502)},
)
def get_chat_guilds(user: Annotated[BearerUser, Depends(bearer_user)]) -> GuildList:
    return GuildList(guilds=accessible_guilds(user))


lambda_handler = lambda_entry_point(app)
