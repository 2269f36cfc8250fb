"""The contract's 400 from pydantic's validation errors: one `details` entry per field, named as a path the caller
sent (a discriminated union's tag left out) and worded for people."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svcconf.errors import FieldError, field_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

_HUMAN_MESSAGES = {
    "missing": "is required",
    "json_invalid": "is not valid JSON",
    "model_attributes_type": "must be a JSON object",
    "dict_type": "must be a JSON object",
    "model_type": "must be a JSON object",
}


def _without_union_tag(loc: tuple[Any, ...], body: Any) -> tuple[Any, ...]:
    """pydantic puts a discriminated union's tag into the loc (body.deploy.config...); the caller sent none."""
    tagged = len(loc) > 1 and isinstance(body, dict) and isinstance(loc[1], str) and loc[1] not in body
    return (loc[0], *loc[2:]) if tagged and loc[1] in body.values() else loc


def _union_tag_detail(error: Mapping[str, Any]) -> FieldError:
    context = error.get("ctx") or {}
    discriminator = str(context.get("discriminator", "")).strip("'") or "body"
    if error.get("type") == "union_tag_not_found":
        return FieldError(field=discriminator, message="is required")
    expected = str(context.get("expected_tags", "")).replace("'", "")
    return FieldError(field=discriminator, message=f"must be one of: {expected}")


def validation_details(exc: RequestValidationError, body: Any = None) -> list[FieldError]:
    details: list[FieldError] = []
    for error in exc.errors():
        kind = error.get("type", "")
        if kind in ("union_tag_invalid", "union_tag_not_found"):
            details.append(_union_tag_detail(error))
            continue
        loc = _without_union_tag(tuple(error.get("loc", ())), body)
        if kind == "json_invalid":
            loc = ("body",)  # Powertools adds the character offset
        if loc == ("body",) and kind == "missing":
            kind = "model_type"  # a JSON null body
        message = _HUMAN_MESSAGES.get(kind) or error.get("msg") or "is invalid"
        details.append(FieldError(field=field_path(loc), message=message))
    return details
