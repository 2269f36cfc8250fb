"""Constrained string types shared by request models."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

CODE_PATTERN = r"^SVC-[A-Z0-9]{4}-[A-Z0-9]{4}$"
_CODE = re.compile(CODE_PATTERN)

# The chat platform's ids: 64-bit integers written as strings; real ones have 17 to 20 digits.
Snowflake = Annotated[str, Field(pattern=r"^[0-9]{17,20}$", examples=["1187392640113156136"])]


def _deployment_code(code: str) -> str:
    # The shape in words, not the regular expression; a code typed in lower case gets its upper-case spelling.
    if _CODE.fullmatch(code):
        return code
    template = "must look like SVC-XXXX-XXXX: upper-case letters and digits in two groups of four"
    if _CODE.fullmatch(code.strip().upper()):
        template += " (did you mean '{suggestion}'?)"
    raise PydanticCustomError("code_format", template, {"suggestion": code.strip().upper()})


DeploymentCodeText = Annotated[
    str,
    AfterValidator(_deployment_code),
    WithJsonSchema({"type": "string", "pattern": CODE_PATTERN, "examples": ["SVC-7KQ2-M9XD"]}),
]
