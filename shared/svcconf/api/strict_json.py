"""The one decoder of request bodies: JSON as RFC 8259 defines it, and only values that come back as sent.

Python's `json.loads` accepts more than JSON and builds values that later fail far from the request: `NaN` and
`Infinity` (not JSON), `1e400` (becomes `inf`, which `json.dumps` writes back as `Infinity`), integers beyond
Python's string-conversion limit (a `ValueError` at parse time), lone UTF-16 surrogates such as `"\\ud800"` (a
`UnicodeEncodeError` when the value is stored or answered), and nesting deep enough to exhaust the
interpreter's recursion. Each is refused here with the path of the value, so the caller gets a 400 naming the
field, and whatever passes (`manageBackup`'s `backup_data` above all) is stored and answered exactly as sent.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_DEPTH = 100  # arrays and objects inside each other; responses and storage serialise far below their limits
MAX_PROBLEMS = 10  # named in one answer; a hostile body may hold thousands

# A \uD800-\uDFFF escape: the only way a surrogate gets into a decoded string (real pairs are joined by the
# decoder, so strings are searched only when the text holds one of these escapes).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")

Path = tuple[str | int, ...]


class NotPlainJSON(ValueError):
    """The body parses, but holds values that JSON cannot carry or that would not come back as sent."""

    def __init__(self, problems: list[tuple[Path, str]]):
        super().__init__("; ".join(f"{'/'.join(map(str, path)) or 'body'}: {message}" for path, message in problems))
        self.problems = problems


class _Refused:
    """Stands in for a number the decoder refuses until the walk names its path."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _constant(name: str) -> _Refused:
    return _Refused(f"is {name}, which is not a JSON number")


def _integer(text: str) -> int | _Refused:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return _Refused(f"is an integer of more than {sys.get_int_max_str_digits()} digits")


def _float(text: str) -> float | _Refused:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return _Refused("is a number too large to represent")
    return value


def loads(text: str) -> Any:
    """The JSON value of `text`; `json.JSONDecodeError` when it is not JSON, `NotPlainJSON` as above."""
    if _SURROGATE.search(text):
        # Surrogates cannot be encoded in UTF-8, so raw ones mean the text did not come from UTF-8 bytes.
        raise NotPlainJSON([((), "is not UTF-8 encoded JSON")])
    try:
        value = json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_float)
    except RecursionError:
        raise NotPlainJSON([((), f"nests arrays and objects deeper than {MAX_DEPTH} levels")]) from None
    problems = _problems(value, check_strings=_SURROGATE_ESCAPE.search(text) is not None)
    if problems:
        raise NotPlainJSON(problems)
    return value


def _scalar_problem(value: Any, check_strings: bool) -> str | None:
    if type(value) is _Refused:
        return value.message
    if check_strings and type(value) is str and _SURROGATE.search(value):
        return "holds an unpaired UTF-16 surrogate"
    return None


def _problems(value: Any, *, check_strings: bool) -> list[tuple[Path, str]]:
    """Refused numbers, lone surrogates and excess depth, each with its path; iterative, so depth cannot hurt."""
    problems: list[tuple[Path, str]] = []
    if (message := _scalar_problem(value, check_strings)) is not None:
        return [((), message)]
    stack: list[tuple[Any, Path]] = [(value, ())] if type(value) in (dict, list) else []
    while stack and len(problems) < MAX_PROBLEMS:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            problems.append((path, f"nests arrays and objects deeper than {MAX_DEPTH} levels"))
            continue
        if type(node) is dict:
            items: Any = node.items()
            if check_strings and any(_SURROGATE.search(key) for key in node):
                problems.append((path, "has a key that holds an unpaired UTF-16 surrogate"))
                continue
        else:
            items = enumerate(node)
        children = []
        for key, item in items:
            if type(item) in (dict, list):
                children.append((item, (*path, key)))
            elif (message := _scalar_problem(item, check_strings)) is not None:
                problems.append(((*path, key), message))
        stack.extend(reversed(children))  # popped in document order
    return problems[:MAX_PROBLEMS]
