"""POST /functions/seedTemplates: an administrator starts generating templates into the library."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api import BEARER_AUTH, create_app, error_responses, lambda_entry_point
from svcconf.auth import BearerUser, admin_user
from svcconf.templates.seeding import DEFAULT_COUNT, MAX_COUNT, MIN_COUNT, SeedAnswer, start_seeding


class SeedTemplatesRequest(BaseModel):
    count: int = Field(
        DEFAULT_COUNT, ge=MIN_COUNT, le=MAX_COUNT, strict=True, description="How many new templates to generate."
    )


app = create_app("seedTemplates")


@app.post(
    "/functions/seedTemplates",
    summary="Generate templates into the template library (administrators only)",
    security=[{BEARER_AUTH: []}],
    responses={
        200: {"description": "Another job is still running: started is false and job_id names it"},
        202: {"description": "Started: the worker generates the templates (job_id names the job)"},
        **error_responses(400, 401, 403, 413, 415, 500, 503),
    },
)
def seed_templates(
    request: Annotated[SeedTemplatesRequest, Body()],
    user: Annotated[BearerUser, Depends(admin_user)],
) -> Response[SeedAnswer]:
    answer = start_seeding(user, request.count)
    return Response(202 if answer.started else 200, content_types.APPLICATION_JSON, answer)


lambda_handler = lambda_entry_point(app)
