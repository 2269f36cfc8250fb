"""POST /functions/getChatGuilds: the chat-platform servers the bearer user can access."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.logging import correlation_paths
from pydantic import BaseModel

from svcconf.api import BEARER_AUTH, create_app, error_responses
from svcconf.auth import BearerUser, bearer_user
from svcconf.chat_accounts import GuildSummary, accessible_guilds
from svcconf.observability import logger, metrics, tracer


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


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict, context: Any) -> dict:
    return app.resolve(event, context)
