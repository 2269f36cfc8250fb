"""docs/03-api.md, Transport and Errors, on every path: media type, JSON, sizes, methods, 404s, 500s, request ids."""

from __future__ import annotations

import base64
import json

import pytest

from svcconf import codes

ERROR_KEYS = {"error", "message", "code", "requestId"}
REQUEST_ID = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"  # the one events/*.json carry


@pytest.mark.parametrize("operation", ["getConfigByCode", "manageBackup"])
def test_body_that_is_not_json_is_rejected_as_body(invoke, operation):
    response = invoke(operation, '{"code": "SVC-')
    assert response.status == 400
    assert response.body == {
        "error": "Bad Request",
        "message": "Invalid request: body: is not valid JSON.",
        "code": 400,
        "details": [{"field": "body", "message": "is not valid JSON"}],
        "requestId": REQUEST_ID,
    }


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', "42", "null"])
def test_json_that_is_not_an_object_is_rejected_as_body(invoke, body):
    response = invoke("getConfigByCode", body)
    assert response.status == 400
    assert response.body["details"] == [{"field": "body", "message": "must be a JSON object"}]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_body_sent_with_another_media_type_is_415(invoke, content_type):
    response = invoke("manageBackup", {"action": "list"}, headers={"Content-Type": content_type})
    assert response.status == 415
    assert response.body["error"] == "Unsupported Media Type"
    assert set(response.body) == ERROR_KEYS


def test_json_media_type_with_charset_is_accepted(invoke):
    response = invoke(
        "manageBackup",
        {"action": "list", "guild_id": "1187392640113156136"},
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert (response.status, response.body) == (200, {"action": "list", "backups": [], "schedule": None})


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_other_methods_on_an_operation_are_405(invoke, method):
    response = invoke("getConfigByCode", method=method)
    assert response.status == 405
    assert response.headers["allow"] == "POST"
    assert response.body["error"] == "Method Not Allowed"
    assert response.body["code"] == 405


def test_unknown_operation_is_404(invoke):
    response = invoke("getConfigByCode", path="/functions/noSuchThing")
    assert response.status == 404
    assert response.body["message"] == "No such operation."
    assert set(response.body) == ERROR_KEYS


@pytest.mark.parametrize(("operation", "limit"), [("getConfigByCode", 256 * 1024), ("manageBackup", 5 * 1024 * 1024)])
def test_body_over_the_operations_limit_is_413_and_at_the_limit_is_read(invoke, operation, limit):
    padding = "x" * (limit - len('{"action":"list","code":"SVC-AAAA-AAAA","pad":""}'))
    at_limit = json.dumps({"action": "list", "code": "SVC-AAAA-AAAA", "pad": padding}, separators=(",", ":"))
    assert len(at_limit) == limit
    over = invoke(operation, at_limit + " ")
    assert over.status == 413
    assert over.body["error"] == "Payload Too Large"
    assert invoke(operation, at_limit).status != 413


def test_auth_is_checked_before_the_body_so_strangers_learn_nothing(invoke):
    response = invoke("getConfigByCode", {"code": "not a code"}, drop_headers=("x-bot-token",))
    assert response.status == 403
    assert "details" not in response.body


@pytest.mark.parametrize("operation", ["getConfigByCode", "manageBackup"])
@pytest.mark.parametrize("token", [None, "", "local-dev-bot-token-but-longer", "LOCAL-DEV-BOT-TOKEN"])
def test_missing_or_wrong_bot_token_is_403(invoke, operation, token):
    headers = {} if token is None else {"x-bot-token": token}
    response = invoke(operation, headers=headers, drop_headers=() if token is not None else ("x-bot-token",))
    assert response.status == 403
    assert response.body == {
        "error": "Forbidden",
        "message": "The x-bot-token header is missing or wrong.",
        "code": 403,
        "requestId": REQUEST_ID,
    }


def test_header_names_are_case_insensitive(invoke):
    response = invoke(
        "manageBackup",
        {"action": "list", "guild_id": "1187392640113156136"},
        headers={"X-Bot-Token": "local-dev-bot-token"},
        drop_headers=("x-bot-token",),
    )
    assert (response.status, response.body) == (200, {"action": "list", "backups": [], "schedule": None})


def test_unexpected_failure_is_500_with_request_id_and_no_internals(invoke, monkeypatch, caplog):
    # Given a failure deep in the domain whose text holds something secret
    def explode(*_args, **_kwargs):
        raise RuntimeError("boom: token=sk-secret-value")

    monkeypatch.setattr("functions.getConfigByCode.app.resolve_code", explode)
    # When the bot calls
    response = invoke("getConfigByCode", {"code": "SVC-AAAA-AAAA"})
    # Then the caller sees only the contract's 500 body; the log has the details for us
    assert response.status == 500
    assert response.body == {
        "error": "Internal Server Error",
        "message": "The service failed unexpectedly.",
        "code": 500,
        "requestId": REQUEST_ID,
    }
    assert "sk-secret-value" not in json.dumps(response.body)
    assert any(record.message == "unexpected error" for record in caplog.records)


def test_every_answer_carries_the_request_id_header(invoke):
    minted = codes.mint_code("p", "P", {"name": "x"})
    answers = [
        invoke("getConfigByCode", {"code": minted.code}),
        invoke("getConfigByCode", {"code": "bad"}),
        invoke("getConfigByCode", drop_headers=("x-bot-token",)),
        invoke("getConfigByCode", method="GET"),
    ]
    assert [answer.status for answer in answers] == [200, 400, 403, 405]
    assert all(answer.headers["x-request-id"] == REQUEST_ID for answer in answers)


def test_cors_preflight_allows_the_web_app_headers(invoke):
    response = invoke(
        "getConfigByCode",
        method="OPTIONS",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
    )
    assert response.status == 204
    allowed = response.headers["access-control-allow-headers"].lower()
    assert {"authorization", "content-type", "x-bot-token"} <= set(allowed.split(","))
    assert "POST" in response.headers["access-control-allow-methods"]


def test_body_may_be_omitted_and_is_read_as_an_empty_object(invoke):
    response = invoke("getConfigByCode", "")
    assert response.status == 400
    assert response.body["details"] == [{"field": "code", "message": "is required"}]


def test_body_that_is_not_utf8_is_rejected_as_body(invoke):
    # API Gateway hands over bodies that are not UTF-8 text base64-encoded
    body = base64.b64encode(b'{"action": "list", "x": "\xff\xfe"}').decode()
    response = invoke("manageBackup", body, base64_encoded=True)
    assert response.status == 400
    assert response.body["details"] == [{"field": "body", "message": "is not UTF-8 encoded JSON"}]


def test_body_and_content_type_may_both_be_omitted(invoke):
    # A bare `curl -X POST` sends neither: the operation reads an empty object, not a 415
    response = invoke("getConfigByCode", "", drop_headers=("Content-Type",))
    assert response.status == 400
    assert response.body["details"] == [{"field": "code", "message": "is required"}]
