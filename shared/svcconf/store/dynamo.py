"""AWS clients and table handles, built once per process and reused while the Lambda stays warm."""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from botocore.config import Config

# Fail fast instead of waiting out the SDK's default 60 s socket timeouts inside a 15 s Lambda.
CLIENT_CONFIG = Config(connect_timeout=3, read_timeout=10, retries={"mode": "standard", "max_attempts": 4})


@cache
def dynamodb() -> Any:
    return boto3.resource("dynamodb", config=CLIENT_CONFIG)


@cache
def s3() -> Any:
    return boto3.client("s3", config=CLIENT_CONFIG)


@cache
def table(name: str) -> Any:
    return dynamodb().Table(name)


def is_conditional_check_failure(error: Exception) -> bool:
    code = getattr(error, "response", {}).get("Error", {}).get("Code")
    return code in ("ConditionalCheckFailedException", "TransactionCanceledException")


def plain_integers(value: Any) -> Any:
    """An item as plain Python: DynamoDB hands numbers back as Decimal, and every number we store is an integer."""
    if isinstance(value, dict):
        return {key: plain_integers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_integers(item) for item in value]
    if type(value).__name__ == "Decimal":
        return int(value)
    return value
