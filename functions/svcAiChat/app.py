"""POST /functions/svcAiChat: a conversation with the AI that builds or changes a server configuration.

The AI provider's SDK is imported here, at init (through svcconf.ai_chat): only the AI functions pay for it.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.ai_chat import (
    MAX_ATTACHMENTS,
    MAX_FILE_URLS,
    MAX_MESSAGES,
    Attachment,
    ChatAnswer,
    ChatMessage,
    HttpsUrl,
    chat,
)
from svcconf.api import BEARER_AUTH, MIB, create_app, error_responses, lambda_entry_point
from svcconf.auth import BearerUser, bearer_user
from svcconf.fields import Snowflake
from svcconf.guild_configs import guild_plan, starting_config


class AiChatRequest(BaseModel):
    messages: list[ChatMessage] = Field(default_factory=list, max_length=MAX_MESSAGES)
    attachments: list[Attachment] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)
    currentConfig: dict[str, Any] | None = Field(  # noqa: N815 - the specification's spelling
        None, description="The configuration so far; the AI changes it. Returned again only if it is valid."
    )
    file_urls: list[HttpsUrl] = Field(default_factory=list, max_length=MAX_FILE_URLS)
    style: dict[str, Any] | None = None
    questionnaire_data: dict[str, Any] | None = None
    guild_id: Snowflake | None = Field(
        None, description="A server the caller manages: the conversation starts from it, and answers carry a plan."
    )


app = create_app("svcAiChat", max_body_bytes=MIB)


@app.post(
    "/functions/svcAiChat",
    summary="Talk with the AI to generate or change a server configuration",
    security=[{BEARER_AUTH: []}],
    responses={
        200: {"description": "The AI's reply and a configuration valid per the schema (or null), with warnings"},
        **error_responses(400, 401, 403, 409, 413, 415, 500, 502, 503, 504),
    },
)
def svc_ai_chat(
    request: Annotated[AiChatRequest, Body()],
    user: Annotated[BearerUser, Depends(bearer_user)],
) -> ChatAnswer:
    current = request.currentConfig
    if request.guild_id:
        current = starting_config(user, request.guild_id, current)
    answer = chat(
        messages=request.messages,
        current_config=current,
        style=request.style,
        questionnaire_data=request.questionnaire_data,
        attachments=request.attachments,
        file_urls=request.file_urls,
    )
    if request.guild_id:
        answer.plan = guild_plan(user, request.guild_id, answer.config)
    return answer


lambda_handler = lambda_entry_point(app)
