"""The request bodies' decoder: plain JSON comes back as sent; what JSON cannot carry is refused with its path."""

from __future__ import annotations

import json
import sys

import pytest

from svcconf.api.strict_json import MAX_DEPTH, MAX_PROBLEMS, NotPlainJSON, loads

DIGITS = sys.get_int_max_str_digits()


def refusal(text: str) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(NotPlainJSON) as raised:
        loads(text)
    return raised.value.problems


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_plain_json_comes_back_exactly_as_sent():
    text = '{"name": "Hall", "n": [0, -1, 2.5, 1e300, true, null], "emoji": "\\ud83d\\ude00", "deep": {"a": {}}}'

    value = loads(text)

    assert value == {"name": "Hall", "n": [0, -1, 2.5, 1e300, True, None], "emoji": "😀", "deep": {"a": {}}}
    assert json.loads(json.dumps(value)) == value


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ('{"a": NaN}', ("a",), "is NaN, which is not a JSON number"),
        ('{"a": [1, Infinity]}', ("a", 1), "is Infinity, which is not a JSON number"),
        ('{"a": -Infinity}', ("a",), "is -Infinity, which is not a JSON number"),
        ('{"a": {"b": 1e400}}', ("a", "b"), "is a number too large to represent"),
        ('{"a": -1e400}', ("a",), "is a number too large to represent"),
        ('{"a": ' + "9" * (DIGITS + 1) + "}", ("a",), f"is an integer of more than {DIGITS} digits"),
        ('{"a": ["x", "\\ud800"]}', ("a", 1), "holds an unpaired UTF-16 surrogate"),
        ('{"a": "\\udfff"}', ("a",), "holds an unpaired UTF-16 surrogate"),
    ],
)
def test_a_value_json_cannot_carry_is_refused_at_its_path(text: str, path: tuple[str | int, ...], message: str):
    assert refusal(text) == [(path, message)]


def test_a_bare_value_that_json_cannot_carry_is_refused_as_the_body():
    assert refusal("NaN") == [((), "is NaN, which is not a JSON number")]
    assert refusal('"\\ud800"') == [((), "holds an unpaired UTF-16 surrogate")]
    assert str(NotPlainJSON([((), "is NaN, which is not a JSON number")])) == "body: is NaN, which is not a JSON number"


def test_a_key_holding_a_lone_surrogate_is_refused_at_its_object():
    assert refusal('{"a": {"\\ud800": 1}}') == [(("a",), "has a key that holds an unpaired UTF-16 surrogate")]


def test_a_raw_surrogate_means_the_text_was_not_utf8():
    assert refusal('{"a": "\ud800"}') == [((), "is not UTF-8 encoded JSON")]


def test_an_objects_own_values_come_first_then_what_nests_in_it_in_document_order():
    with pytest.raises(NotPlainJSON) as raised:
        loads('{"roles": [{"c": NaN}, {"c": 1}, {"c": Infinity}], "z": 1e999}')

    assert raised.value.problems == [
        (("z",), "is a number too large to represent"),
        (("roles", 0, "c"), "is NaN, which is not a JSON number"),
        (("roles", 2, "c"), "is Infinity, which is not a JSON number"),
    ]
    assert str(raised.value) == (
        "z: is a number too large to represent; roles/0/c: is NaN, which is not a JSON number; "
        "roles/2/c: is Infinity, which is not a JSON number"
    )


def test_at_most_the_first_problems_are_named():
    problems = refusal("[" + ", ".join(["NaN"] * (MAX_PROBLEMS + 5)) + "]")

    assert problems == [((index,), "is NaN, which is not a JSON number") for index in range(MAX_PROBLEMS)]


def test_nesting_up_to_the_limit_passes_and_one_level_more_is_refused():
    assert loads(nested(MAX_DEPTH)) is not None
    too_deep = f"nests arrays and objects deeper than {MAX_DEPTH} levels"
    assert refusal(nested(MAX_DEPTH + 1)) == [((0,) * MAX_DEPTH, too_deep)]


def test_nesting_that_exhausts_the_decoder_is_refused_as_the_body():
    assert refusal(nested(100_000)) == [((), f"nests arrays and objects deeper than {MAX_DEPTH} levels")]


def test_text_that_is_not_json_raises_the_decoders_error():
    with pytest.raises(json.JSONDecodeError):
        loads("{'single': 'quotes'}")


def test_a_bare_scalar_body_comes_back_as_sent():
    assert [loads(text) for text in ("5", '"x"', "true", "null", "-0.5")] == [5, "x", True, None, -0.5]


def test_every_branch_too_deep_and_every_key_with_a_lone_surrogate_is_named():
    too_deep = f"nests arrays and objects deeper than {MAX_DEPTH} levels"
    bad_key = "has a key that holds an unpaired UTF-16 surrogate"

    assert refusal(f"[{nested(MAX_DEPTH)}, {nested(MAX_DEPTH)}]") == [
        ((0,) * MAX_DEPTH, too_deep),
        ((1,) + (0,) * (MAX_DEPTH - 1), too_deep),
    ]
    assert refusal('[{"\\ud800": 1}, {"\\udc00": 2}]') == [((0,), bad_key), ((1,), bad_key)]
