"""POST /functions/svcAiChat: a conversation with the AI that builds or changes a server configuration.

The AI provider's SDK is imported here, at init (through svcconf.conversation.turn): only the AI functions pay for it.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api.auth import BearerUser, bearer_user
from svcconf.api.examples import AI_CHAT_ANSWERS, AI_CHAT_REQUESTS
from svcconf.api.examples_ai_community import COMMUNITY_AI_CHAT_ANSWERS
from svcconf.api.fields import Snowflake
from svcconf.api.near_miss import ShapedAs
from svcconf.api.resolver import MIB, create_app, lambda_entry_point
from svcconf.api.responses import BEARER_AUTH, BEARER_ERRORS, error_responses, request_examples, success
from svcconf.config import ServerConfig
from svcconf.conversation.models import (
    MAX_ATTACHMENTS,
    MAX_FILE_URLS,
    MAX_MESSAGES,
    Attachment,
    ChatAnswer,
    ChatMessage,
    HttpsUrl,
    LiveGuildChecks,
)
from svcconf.conversation.turn import take_turn
from svcconf.limits import TurnTokens, ai_turn, platform_reads


class AiChatRequest(BaseModel):
    messages: list[ChatMessage] = Field(default_factory=list, max_length=MAX_MESSAGES)
    attachments: list[Attachment] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)
    currentConfig: Annotated[dict[str, Any] | None, ShapedAs(ServerConfig)] = Field(  # noqa: N815 - the spec's spelling
        None, description="The configuration so far; the AI changes it. Returned again only if it is valid."
    )
    file_urls: list[HttpsUrl] = Field(default_factory=list, max_length=MAX_FILE_URLS)
    style: dict[str, Any] | None = None
    questionnaire_data: dict[str, Any] | None = None
    guild_id: Snowflake | None = Field(
        None,
        description="A server the caller manages: the conversation starts from it, and answers carry the plan a "
        "deploy with `prune` would run there, its `plan_id` and the `problems` that deploy would refuse.",
    )


app = create_app("svcAiChat", max_body_bytes=MIB)


@app.post(
    "/functions/svcAiChat",
    operation_id="svcAiChat",
    tags=["AI assistant"],
    summary="Talk with the AI to generate or change a server configuration",
    description=(
        "Sends the conversation so far (and optionally the current configuration, attachments, a style and the "
        "questionnaire's answers) to the AI, which answers with a reply, a configuration valid per the schema "
        "(or null), quick replies, templates from the library that fit, and warnings. With `guild_id`, on a server "
        "the caller manages: what a deploy of the configuration would do there (`plan`, `plan_id` for its "
        "`confirm`) and refuse (`problems`)."
    ),
    security=[{BEARER_AUTH: []}],
    responses={
        200: success(
            "The AI's reply and a configuration valid per the schema (or null), with warnings",
            ChatAnswer,
            {**AI_CHAT_ANSWERS, **COMMUNITY_AI_CHAT_ANSWERS},
        ),
        **error_responses(
            {
                **BEARER_ERRORS,
                403: "guild_id: no usable chat account is linked, or the user may not manage the server",
                400: "a field is invalid; or the turn's fixed part (the configuration, style, questionnaire_data, the "
                "files at their allowances, the newest user message) alone passes the input budget "
                "(SVC_AI_MAX_INPUT_TOKENS): `details` names its largest field",
                409: "guild_id: the bot is not in the server (`install_url` says how to add it)",
                502: "the AI provider failed",
                503: "the AI provider or bearer authentication is not configured, or the provider is overloaded",
                504: "the AI provider did not answer in time",
            },
            limited=True,
        ),
    },
)
def svc_ai_chat(
    request: Annotated[AiChatRequest, Body(openapi_examples=request_examples(AI_CHAT_REQUESTS))],
    user: Annotated[BearerUser, Depends(bearer_user)],
) -> ChatAnswer:
    if request.guild_id is None:
        with ai_turn(user) as tokens:
            return _turn(request, request.currentConfig, tokens)
    # The live guild's modules (deploy engine, deployments, chat accounts) load for turns on a live guild only:
    # every other cold start stays the SDK's and this handler's (`python -m bench ai`).
    from svcconf.conversation.live_guild import open_guild_turn

    with platform_reads(user), ai_turn(user) as tokens:
        guild = open_guild_turn(user, request.guild_id)
        return _turn(request, guild.starting_config(request.currentConfig), tokens, guild)


def _turn(
    request: AiChatRequest, current: dict[str, Any] | None, tokens: TurnTokens, guild: LiveGuildChecks | None = None
) -> ChatAnswer:
    return take_turn(
        messages=request.messages,
        current_config=current,
        style=request.style,
        questionnaire_data=request.questionnaire_data,
        attachments=request.attachments,
        file_urls=request.file_urls,
        guild=guild,
        config_field="currentConfig" if request.currentConfig or guild is None else "guild_id",
        reserve=tokens.reserve,
    )


lambda_handler = lambda_entry_point(app)
