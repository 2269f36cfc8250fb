"""Requests modelled as a union discriminated by `action`: errors name the caller's fields, never the union's tag."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from aws_lambda_powertools.event_handler.openapi.params import Body
from pydantic import BaseModel, Field

from svcconf.api.resolver import create_app


class Deploy(BaseModel):
    action: Literal["deploy"]
    guild_id: str
    config: dict[str, Annotated[int, Field(ge=0)]]


class Info(BaseModel):
    action: Literal["info"]
    project_id: str


app = create_app("unionProbe")


@app.post("/functions/unionProbe")
def union_probe(request: Annotated[Annotated[Deploy | Info, Field(discriminator="action")], Body()]) -> dict[str, Any]:
    return request.model_dump()


def call(body: Any) -> tuple[int, dict[str, Any]]:
    event = {
        "httpMethod": "POST",
        "path": "/functions/unionProbe",
        "resource": "/functions/unionProbe",
        "headers": {"content-type": "application/json"},
        "body": json.dumps(body),
        "requestContext": {"requestId": "union-probe"},
    }
    answer = app.resolve(event, None)
    return answer["statusCode"], json.loads(answer["body"])


def test_a_valid_member_of_the_union_is_accepted():
    assert call({"action": "info", "project_id": "p1"}) == (200, {"action": "info", "project_id": "p1"})


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"action": "deploy"}, [("guild_id", "is required"), ("config", "is required")]),
        ({"action": "deploy", "guild_id": "1", "config": {"a": -1}}, [("config.a", None)]),
        ({"action": "publish"}, [("action", "must be one of: deploy, info")]),
        ({"project_id": "p1"}, [("action", "is required")]),
    ],
)
def test_errors_name_the_callers_fields_without_the_unions_tag(body, details):
    status, answer = call(body)

    assert status == 400
    found = [(detail["field"], detail["message"]) for detail in answer["details"]]
    assert [field for field, _ in found] == [field for field, _ in details]
    for (_, message), (_, expected) in zip(found, details, strict=True):
        assert expected is None or message == expected
