"""POST /functions/getConfigByCode: the bot turns a deployment code into the project's configuration."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api.auth import BotCaller, bot_caller
from svcconf.api.examples import CONFIG_BY_CODE_ANSWERS, CONFIG_BY_CODE_REQUESTS
from svcconf.api.fields import DeploymentCodeText
from svcconf.api.resolver import create_app, lambda_entry_point
from svcconf.api.responses import BOT_ERRORS, BOT_TOKEN_AUTH, error_responses, request_examples, success
from svcconf.codes import resolve_code
from svcconf.config.answers import NullsLeftOut
from svcconf.observability import metrics


class ConfigByCodeRequest(BaseModel):
    code: DeploymentCodeText
    user_id: str | None = Field(
        None, min_length=1, max_length=32, description="Chat-platform id of the user asking (never empty)."
    )
    consume: bool = Field(False, strict=True, description="Use the code up: later requests with it get 404.")


class ConfigByCodeResponse(BaseModel):
    configuration: Annotated[dict[str, Any], NullsLeftOut]
    project_name: str
    project_id: str
    expires_at: datetime


app = create_app("getConfigByCode")


@app.post(
    "/functions/getConfigByCode",
    operation_id="getConfigByCode",
    tags=["Bot"],
    summary="Configuration of a project from its deployment code",
    description=(
        "The bot turns a deployment code (deployToChat mints one per deployment) into the project's configuration. "
        "With `consume: true` the code is used up; with `user_id`, a code bound to another user is refused."
    ),
    security=[{BOT_TOKEN_AUTH: []}],
    responses={
        200: success("The configuration behind the code", ConfigByCodeResponse, CONFIG_BY_CODE_ANSWERS),
        **error_responses(
            {
                **BOT_ERRORS,
                403: "the x-bot-token header is missing or wrong, or the code is bound to another user",
                404: "no such code, or it has expired or was used up",
            }
        ),
    },
)
def get_config_by_code(
    request: Annotated[ConfigByCodeRequest, Body(openapi_examples=request_examples(CONFIG_BY_CODE_REQUESTS))],
    _bot: Annotated[BotCaller, Depends(bot_caller)],
) -> ConfigByCodeResponse:
    resolved = resolve_code(request.code, user_id=request.user_id, consume=request.consume)
    if request.consume:
        metrics.add_metric(name="DeploymentCodeConsumed", unit="Count", value=1)
    return ConfigByCodeResponse.model_validate(resolved.model_dump())


lambda_handler = lambda_entry_point(app)
