"""One strict JSON decoder for every operation: a body that is not a JSON object, what Python's json accepts and
JSON does not, numbers that do not survive a round trip, lone surrogates and runaway nesting are a 400 naming
the value's path, on every operation of template.yaml (those without fields too), with the caller's valid
credentials; and what passes comes back exactly as sent."""

from __future__ import annotations

import base64
import json

import pytest

from local.tokens import issue_token
from svcconf.api.strict_json import MAX_DEPTH
from tests.helpers.api_operations import REQUEST_ID, Operation, api_operations, call
from tests.helpers.handlers import BOT_TOKEN, JWT_SECRET

DIGITS = 4300  # Python's default sys.get_int_max_str_digits()
NOT_A_NUMBER = "which is not a JSON number"
TOO_DEEP = f"nests arrays and objects deeper than {MAX_DEPTH} levels"
LONE_SURROGATE = "holds an unpaired UTF-16 surrogate"

# body text -> the details the 400 carries. Values sit in a field no operation has (unknown fields are ignored),
# so each body is refused by the decoder alone, whatever the operation.
REFUSED_BODIES: dict[str, list[dict[str, str]]] = {
    '{"code": "SVC-': [{"field": "body", "message": "is not valid JSON"}],
    '{"probe": 1,}': [{"field": "body", "message": "is not valid JSON"}],
    "[1, 2]": [{"field": "body", "message": "must be a JSON object"}],
    '"text"': [{"field": "body", "message": "must be a JSON object"}],
    "null": [{"field": "body", "message": "must be a JSON object"}],
    '{"probe": NaN}': [{"field": "probe", "message": f"is NaN, {NOT_A_NUMBER}"}],
    '{"probe": {"x": Infinity}}': [{"field": "probe.x", "message": f"is Infinity, {NOT_A_NUMBER}"}],
    '{"probe": [1, 2, -Infinity]}': [{"field": "probe[2]", "message": f"is -Infinity, {NOT_A_NUMBER}"}],
    "NaN": [{"field": "body", "message": f"is NaN, {NOT_A_NUMBER}"}],
    '{"probe": 1e400}': [{"field": "probe", "message": "is a number too large to represent"}],
    '{"probe": [-1.5e309]}': [{"field": "probe[0]", "message": "is a number too large to represent"}],
    '{"probe": %s}' % ("9" * (DIGITS + 1)): [
        {"field": "probe", "message": f"is an integer of more than {DIGITS} digits"}
    ],
    '{"probe": {"deep": [-%s]}}' % ("1" * 10_000): [
        {"field": "probe.deep[0]", "message": f"is an integer of more than {DIGITS} digits"}
    ],
    '{"probe": "\\ud800"}': [{"field": "probe", "message": LONE_SURROGATE}],
    '{"probe": ["ok", "\\udfff at the start of a pair that is not one"]}': [
        {"field": "probe[1]", "message": LONE_SURROGATE}
    ],
    '{"probe": "pair in the wrong order \\udc00\\ud800"}': [{"field": "probe", "message": LONE_SURROGATE}],
    '{"probe": {"\\ud800": 1}}': [{"field": "probe", "message": "has a key that holds an unpaired UTF-16 surrogate"}],
    '"\\ud800"': [{"field": "body", "message": LONE_SURROGATE}],
    '{"probe": %s}' % ("[" * MAX_DEPTH + "]" * MAX_DEPTH): [
        {"field": "probe" + "[0]" * (MAX_DEPTH - 1), "message": TOO_DEEP}
    ],
    "[" * 100_000 + "]" * 100_000: [{"field": "body", "message": TOO_DEEP}],
    '{"a": NaN, "b": [Infinity], "c": "\\ud800"}': [
        {"field": "a", "message": f"is NaN, {NOT_A_NUMBER}"},
        {"field": "c", "message": LONE_SURROGATE},
        {"field": "b[0]", "message": f"is Infinity, {NOT_A_NUMBER}"},
    ],
}


def credentials(operation: Operation) -> dict[str, str]:
    """What the operation's security asks for; an administrator's token, so admin-only operations pass too."""
    headers = {}
    if operation.bearer:
        headers["Authorization"] = f"Bearer {issue_token(JWT_SECRET, 'user-1', role='admin')}"
    if operation.bot:
        headers["x-bot-token"] = BOT_TOKEN
    return headers


@pytest.mark.parametrize("operation", api_operations(), ids=str)
def test_json_that_python_accepts_and_json_does_not_is_400_naming_the_value_on_every_operation(aws, operation):
    answers = {body[:60]: call(operation, body, credentials(operation)) for body in REFUSED_BODIES}
    for (shown, response), details in zip(answers.items(), REFUSED_BODIES.values(), strict=True):
        assert response.status == 400, (shown, response.body)
        assert response.body["details"] == details, shown
        assert response.body["requestId"] == REQUEST_ID
        assert response.body["error"] == "Bad Request"


@pytest.mark.parametrize("operation", api_operations(), ids=str)
def test_a_body_that_is_not_utf8_is_400_on_every_operation(aws, operation):
    for raw in (b'{"probe": "\xff"}', b'{"probe": "\xed\xa0\x80"}'):  # a stray byte; a surrogate in UTF-8 form
        response = call(
            operation,
            base64.b64encode(raw).decode(),
            credentials(operation),
            base64_encoded=True,
        )
        assert response.status == 400, raw
        assert response.body["details"] == [{"field": "body", "message": "is not UTF-8 encoded JSON"}]


def test_backup_data_comes_back_exactly_as_sent(invoke):
    # Given backup data with everything the decoder lets through: the longest integers, the largest and
    # smallest doubles, astral characters as escaped surrogate pairs, nesting just within the limit, key order
    nested: object = "bottom"
    for _ in range(MAX_DEPTH - 2):  # the body, backup_data, then lists: MAX_DEPTH levels exactly
        nested = [nested]
    backup_data = {
        "zeta": 1,
        "alpha": 9 * 10 ** (DIGITS - 1) + 7,
        "negative": -(10 ** (DIGITS - 1)),
        "largest": 1.7976931348623157e308,
        "smallest": 5e-324,
        "minus zero": -0.0,
        "emoji \U0001f600": "\U0001f600 \u00e9 \u4e2d",
        "nested": nested,
        "roles": [{"name": "mod", "permissions": "8"}],
    }
    body = json.dumps(
        {"action": "create", "guild_id": "1187392640113156136", "backup_data": backup_data}, ensure_ascii=True
    )
    created = invoke("manageBackup", body)
    assert created.status == 201, created.body
    # When the bot fetches it
    fetched = invoke("manageBackup", {"action": "get", "backup_id": created.body["data"]["backup_id"]})
    # Then it is what was sent: values, types and key order
    assert fetched.status == 200
    assert json.dumps(fetched.body["data"]["backup_data"]) == json.dumps(backup_data)
