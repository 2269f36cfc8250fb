"""Constrained string types shared by request models."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

CODE_PATTERN = r"^SVC-[A-Z0-9]{4}-[A-Z0-9]{4}$"

# The chat platform's ids: 64-bit integers written as strings; real ones have 17 to 20 digits.
Snowflake = Annotated[str, Field(pattern=r"^[0-9]{17,20}$", examples=["1187392640113156136"])]
DeploymentCodeText = Annotated[str, Field(pattern=CODE_PATTERN, examples=["SVC-7KQ2-M9XD"])]
