"""POST /functions/seedTemplates: an administrator starts generating templates into the library."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field, field_validator

from svcconf.api.auth import BearerUser, admin_user
from svcconf.api.examples import SEED_JOB, SEED_REQUESTS, SEED_RUNNING, SEED_STARTED
from svcconf.api.resolver import create_app, lambda_entry_point
from svcconf.api.responses import BEARER_AUTH, BEARER_ERRORS, error_responses, request_examples, success
from svcconf.config.field_types import json_integer
from svcconf.errors import BadRequest
from svcconf.templates.seeding import DEFAULT_COUNT, MAX_COUNT, MIN_COUNT, SeedAnswer, read_job, start_seeding


class SeedTemplatesRequest(BaseModel):
    count: int = Field(DEFAULT_COUNT, ge=MIN_COUNT, le=MAX_COUNT, description="How many new templates to generate.")
    job_id: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="Instead of count: read this job's progress or result (starts nothing).",
        examples=[SEED_JOB],
    )

    _integers = field_validator("count", mode="before")(json_integer)


app = create_app("seedTemplates")


@app.post(
    "/functions/seedTemplates",
    operation_id="seedTemplates",
    tags=["Templates"],
    summary="Generate templates into the template library (administrators only)",
    description=(
        "Starts a job that has the AI generate `count` new templates into the library that svcAiChat suggests "
        "from. One job runs at a time: while one runs, the answer is 200 with `started: false` and its job_id. "
        "With `job_id` instead of `count` it reads that job (`job`: status, counts and times) and starts nothing."
    ),
    security=[{BEARER_AUTH: []}],
    responses={
        200: success(
            "Nothing started: another job is still running (job_id names it), or the job asked for by job_id",
            SeedAnswer,
            SEED_RUNNING,
        ),
        202: success("Started: the worker generates the templates (job_id names the job)", SeedAnswer, SEED_STARTED),
        **error_responses(
            {
                **BEARER_ERRORS,
                403: "the bearer user is not an administrator (claim `role` is not `admin`)",
                404: "job_id: no such job",
                503: "the AI or bearer authentication is not configured, or the job could not be started",
            }
        ),
    },
)
def seed_templates(
    request: Annotated[SeedTemplatesRequest, Body(openapi_examples=request_examples(SEED_REQUESTS))],
    user: Annotated[BearerUser, Depends(admin_user)],
) -> Response[SeedAnswer]:
    if request.job_id is not None:
        if "count" in request.model_fields_set:
            raise BadRequest.for_field("job_id", "reads a job; send it without count (count starts one)")
        return Response(200, content_types.APPLICATION_JSON, read_job(request.job_id))
    answer = start_seeding(user, request.count)
    return Response(202 if answer.started else 200, content_types.APPLICATION_JSON, answer)


lambda_handler = lambda_entry_point(app)
