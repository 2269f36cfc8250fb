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


class UpdateExpression:
    """An UpdateItem's UpdateExpression built piece by piece, with placeholders for every name and value."""

    def __init__(self) -> None:
        self.sets: list[str] = []
        self.removes: list[str] = []
        self.names: dict[str, str] = {}
        self._placeholders: dict[str, str] = {}  # name -> its placeholder
        self.values: dict[str, Any] = {}

    def name(self, text: str) -> str:
        """One placeholder a name, however often it is used: a journal's batch names its maps once."""
        if text not in self._placeholders:
            self._placeholders[text] = f"#n{len(self.names)}"
            self.names[self._placeholders[text]] = text
        return self._placeholders[text]

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def set(self, path: list[str], value: Any) -> None:
        self.sets.append(f"{'.'.join(self.name(part) for part in path)} = {self.value(value)}")

    def default(self, path: list[str], value: Any) -> None:
        """Sets the attribute only where it is missing (a record written before it existed)."""
        target = ".".join(self.name(part) for part in path)
        self.sets.append(f"{target} = if_not_exists({target}, {self.value(value)})")

    def add(self, path: list[str], amount: int) -> None:
        target = ".".join(self.name(part) for part in path)
        self.sets.append(f"{target} = {target} + {self.value(amount)}")

    def append(self, path: list[str], items: list[Any]) -> None:
        target = ".".join(self.name(part) for part in path)
        self.sets.append(f"{target} = list_append({target}, {self.value(items)})")

    def remove(self, path: list[str]) -> None:
        self.removes.append(".".join(self.name(part) for part in path))

    def arguments(self) -> dict[str, Any]:
        remove = f" REMOVE {', '.join(self.removes)}" if self.removes else ""
        return {
            "UpdateExpression": "SET " + ", ".join(self.sets) + remove,
            "ExpressionAttributeNames": self.names,
            "ExpressionAttributeValues": self.values,
        }
