"""getConfigByCode: the bot resolves (and consumes) deployment codes; every refusal in the contract's body."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from svcconf import codes
from svcconf.clock import utc_now
from svcconf.errors import ServiceError
from svcconf.settings import get_settings

CONFIG = {
    "name": "Study Hall",
    "roles": [{"name": "Tutors", "color": 3447003, "permissions": ["MANAGE_MESSAGES"]}],
    "categories": [{"name": "Rooms", "channels": [{"name": "maths", "type": "text"}]}],
    "channels": [],
}


def stored_item(code: str) -> dict:
    table = boto3.resource("dynamodb").Table(get_settings().codes_table)
    return table.get_item(Key={"code": code}).get("Item", {})


def test_code_returns_its_configuration_and_project_name(invoke):
    # Given a code minted for a project
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)
    # When the bot asks for it
    response = invoke("getConfigByCode", {"code": minted.code})
    # Then it gets the configuration exactly, with the project's name and the code's expiry
    assert response.status == 200
    assert response.body["configuration"] == CONFIG
    assert response.body["project_name"] == "Study Hall"
    assert response.body["project_id"] == "proj-1"
    assert response.body["expires_at"].startswith(minted.expires_at.strftime("%Y-%m-%dT%H:%M"))


def test_code_fetched_without_consume_stays_usable(invoke):
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)
    assert invoke("getConfigByCode", {"code": minted.code}).status == 200
    assert invoke("getConfigByCode", {"code": minted.code}).status == 200
    assert "consumed_at" not in stored_item(minted.code)


def test_consumed_code_cannot_be_fetched_twice(invoke):
    # Given a code
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)
    # When the bot consumes it
    first = invoke("getConfigByCode", {"code": minted.code, "consume": True})
    second = invoke("getConfigByCode", {"code": minted.code, "consume": True})
    without_consume = invoke("getConfigByCode", {"code": minted.code})
    # Then the first call gets the configuration, the item records it, and every later call gets 404
    assert first.status == 200
    assert first.body["configuration"] == CONFIG
    assert "consumed_at" in stored_item(minted.code)
    for later in (second, without_consume):
        assert later.status == 404
        assert later.body == {
            "error": "Not Found",
            "message": "The deployment code is unknown, expired or already used.",
            "code": 404,
            "requestId": later.headers["x-request-id"],
        }


def test_expired_code_is_not_found(invoke, monkeypatch):
    # Given a code whose lifetime (SVC_CODE_TTL_HOURS, 168 h by default) has passed, TTL not yet run
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)
    later = utc_now() + timedelta(hours=get_settings().code_ttl_hours, minutes=1)
    monkeypatch.setattr(codes, "utc_now", lambda: later)
    # When the bot asks for it, with or without consuming
    # Then it is gone
    assert invoke("getConfigByCode", {"code": minted.code}).status == 404
    assert invoke("getConfigByCode", {"code": minted.code, "consume": True}).status == 404
    assert stored_item(minted.code)["expiration"] == int(minted.expires_at.timestamp())


def test_unknown_code_is_not_found(invoke):
    response = invoke("getConfigByCode", {"code": "SVC-ZZZZ-9999"})
    assert response.status == 404
    assert response.body["error"] == "Not Found"


def test_code_bound_to_a_user_refuses_another_user_without_consuming_it(invoke):
    # Given a code minted for the chat user 111…
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG, chat_user_id="111111111111111111")
    # When another user asks to consume it
    refused = invoke("getConfigByCode", {"code": minted.code, "user_id": "222222222222222222", "consume": True})
    # Then 403, and the code still works for its owner
    assert refused.status == 403
    assert refused.body["message"] == "This deployment code was issued to another user."
    owner = invoke("getConfigByCode", {"code": minted.code, "user_id": "111111111111111111", "consume": True})
    assert owner.status == 200
    assert owner.body["configuration"] == CONFIG


def test_an_empty_user_id_is_refused_naming_the_field_and_the_bound_code_stays_unread(invoke):
    # Given a code bound to a chat user, When asked for with `user_id: ""` (no one), Then 400 on user_id, not the
    # configuration: an empty id must not pass for "no user given"
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG, chat_user_id="111111111111111111")
    refused = invoke("getConfigByCode", {"code": minted.code, "user_id": "", "consume": True})
    assert refused.status == 400
    assert [detail["field"] for detail in refused.body["details"]] == ["user_id"]
    assert "configuration" not in refused.body
    assert "consumed_at" not in stored_item(minted.code)


@pytest.mark.parametrize(
    "code",
    ["svc-abcd-1234", "SVC-ABCD-123", "SVC-ABCD-12345", "SVC-ABCD_1234", " SVC-ABCD-1234", "SVC-ABCD-1234\n", 1234],
)
def test_code_of_the_wrong_format_is_rejected_naming_the_field(invoke, code):
    response = invoke("getConfigByCode", {"code": code})
    assert response.status == 400
    assert response.body["error"] == "Bad Request"
    assert [detail["field"] for detail in response.body["details"]] == ["code"]


SHAPE = "must look like SVC-XXXX-XXXX: upper-case letters and digits in two groups of four"


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("svc-7kq2-m9xd", f"{SHAPE} (did you mean 'SVC-7KQ2-M9XD'?)"),
        ("SVC-7KQ2-M9X", SHAPE),
        ("7KQ2M9XD", SHAPE),
    ],
)
def test_a_code_of_the_wrong_shape_is_told_the_shape_in_words_not_a_regular_expression(invoke, code, message):
    response = invoke("getConfigByCode", {"code": code})

    assert response.status == 400
    assert response.body["details"] == [{"field": "code", "message": message}]
    assert "[A-Z0-9]" not in response.body["message"]


def test_missing_code_is_rejected_naming_the_field(invoke):
    response = invoke("getConfigByCode", {"user_id": "1"})
    assert response.status == 400
    assert response.body["details"] == [{"field": "code", "message": "is required"}]
    assert response.body["message"] == "Invalid request: code: is required."


@pytest.mark.parametrize("consume", ["yes", 1, "true", None])
def test_consume_must_be_a_boolean(invoke, consume):
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)
    response = invoke("getConfigByCode", {"code": minted.code, "consume": consume})
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == ["consume"]
    assert "consumed_at" not in stored_item(minted.code)


def test_minting_retries_when_a_code_is_already_taken(aws, monkeypatch):
    # Given an existing code, and a generator that first produces that same code
    taken = codes.mint_code("proj-1", "Study Hall", CONFIG).code
    candidates = iter([taken, taken, "SVC-NEW0-CODE"])
    monkeypatch.setattr(codes, "new_code_text", lambda: next(candidates))
    # When a second code is minted
    minted = codes.mint_code("proj-2", "Other", CONFIG)
    # Then the collision is skipped and the first project's code is untouched
    assert minted.code == "SVC-NEW0-CODE"
    assert stored_item(taken)["project_id"] == "proj-1"


def test_minting_gives_up_after_repeated_collisions(aws, monkeypatch):
    taken = codes.mint_code("proj-1", "Study Hall", CONFIG).code
    monkeypatch.setattr(codes, "new_code_text", lambda: taken)
    with pytest.raises(ServiceError, match="unique deployment code"):
        codes.mint_code("proj-2", "Other", CONFIG)
