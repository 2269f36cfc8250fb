"""openapi.json as client generators read it (docs/03-api.md): names, security, and examples that are true."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((ROOT / "openapi.json").read_text())
OPERATIONS = {path.rsplit("/", 1)[-1]: item["post"] for path, item in DOCUMENT["paths"].items()}


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator({**schema, "components": DOCUMENT["components"]})


def _examples(content: dict[str, Any]) -> dict[str, Any]:
    return {name: example["value"] for name, example in content.get("examples", {}).items()}


def test_every_operation_is_named_tagged_described_and_secured() -> None:
    for name, operation in OPERATIONS.items():
        assert operation["operationId"] == name
        assert operation["tags"], name
        assert operation["summary"], name
        assert operation["description"], name
        assert "security" in operation, name
    assert OPERATIONS["chatAuth"]["security"] == []
    assert "optional" in OPERATIONS["chatAuth"]["description"]


@pytest.mark.parametrize("name", sorted(name for name, operation in OPERATIONS.items() if "requestBody" in operation))
def test_every_request_example_is_a_valid_request(name: str) -> None:
    content = OPERATIONS[name]["requestBody"]["content"]["application/json"]
    examples = _examples(content)
    assert examples, f"{name} has no request example"
    for example in examples.values():
        _validator(content["schema"]).validate(example)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_success_answer_has_an_example_that_fits_its_schema(name: str) -> None:
    successes = {status: r for status, r in OPERATIONS[name]["responses"].items() if status.startswith("2")}
    for status, response in successes.items():
        content = response["content"]["application/json"]
        examples = _examples(content)
        assert examples, f"{name} {status} has no example"
        for example in examples.values():
            _validator(content["schema"]).validate(example)


def test_every_answer_documents_the_request_id_header_and_errors_use_the_error_body() -> None:
    for name, operation in OPERATIONS.items():
        for status, response in operation["responses"].items():
            assert "x-request-id" in response["headers"], (name, status)
            if status.startswith(("4", "5")):
                body = "LimitBody" if (name, status) in LIMITED_429S else "ErrorBody"
                assert response["content"]["application/json"]["schema"] == {"$ref": f"#/components/schemas/{body}"}
        assert {"405", "413", "415"} <= set(operation["responses"]), name


# The operations that count against the limits per user (docs/07-operations.md, Limits)
LIMITED = ("validateChatInvite", "svcAiChat", "deployToChat", "getChatGuilds")
LIMITED_429S = {(name, "429") for name in LIMITED}


def test_the_limited_operations_document_their_429_and_503_with_retry_after_and_the_others_do_not() -> None:
    for name, operation in OPERATIONS.items():
        for status in ("429", "503"):
            headers = operation["responses"].get(status, {}).get("headers", {})
            assert ("Retry-After" in headers) == (name in LIMITED), (name, status)
    for name in LIMITED:
        too_many = OPERATIONS[name]["responses"]["429"]
        assert "limit per user" in too_many["description"]
        assert too_many["headers"]["Retry-After"]["schema"] == {"type": "integer", "minimum": 1}
    limit_body = DOCUMENT["components"]["schemas"]["LimitBody"]["properties"]
    assert {"limit", "retry_after", "frees_at"} <= set(limit_body)


def test_the_bot_operations_document_503_and_chat_auth_its_401() -> None:
    for name in ("getConfigByCode", "manageBackup"):
        assert "bot token" in OPERATIONS[name]["responses"]["503"]["description"]
    assert "optional" in OPERATIONS["chatAuth"]["responses"]["401"]["description"]


# The events of operations that take a body (the workers' are SQS events; getChatGuilds takes none).
EVENTS_WITH_BODIES = [
    path for path in sorted((ROOT / "events").glob("*.json")) if "requestBody" in OPERATIONS.get(path.stem, {})
]


@pytest.mark.parametrize("event", EVENTS_WITH_BODIES, ids=lambda path: path.stem)
def test_each_events_body_is_one_of_its_operations_examples(event: Path) -> None:
    operation = OPERATIONS[event.stem]
    body = json.loads(json.loads(event.read_text())["body"])
    assert body in _examples(operation["requestBody"]["content"]["application/json"]).values()


def test_answers_with_more_than_one_shape_are_told_apart_by_a_const_field() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    for union, field in (("DeployToChatAnswer", "status"), ("BackupAnswer", "action")):
        assert schemas[union]["discriminator"]["propertyName"] == field
        for ref in schemas[union]["oneOf"]:
            variant = schemas[ref["$ref"].rsplit("/", 1)[-1]]
            assert field in variant["required"]
            assert "const" in variant["properties"][field] or "enum" in variant["properties"][field]
