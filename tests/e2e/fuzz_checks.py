"""The fuzz gate's own checks, beside schemathesis' built-in ones (loaded with SCHEMATHESIS_HOOKS).

The gate passes the runner's valid credentials in FUZZ_BEARER_TOKEN and FUZZ_BOT_TOKEN; a request that does not
carry the valid credential of an operation's security scheme must never be answered 2xx.
"""

from __future__ import annotations

import hmac
import itertools
import os
from typing import Any

import schemathesis

SCHEMES = {  # openapi.json's security schemes: the header each one reads, and the valid value for it
    "bearerAuth": ("authorization", lambda: f"Bearer {os.environ['FUZZ_BEARER_TOKEN']}"),
    "botToken": ("x-bot-token", lambda: os.environ["FUZZ_BOT_TOKEN"]),
}


def _required_schemes(case: Any) -> list[str]:
    definition = case.operation.definition.raw
    security = definition.get("security", case.operation.schema.raw_schema.get("security")) or []
    return [name for requirement in security for name in requirement]


@schemathesis.check
def credentials_never_ignored(ctx: Any, response: Any, case: Any) -> bool | None:
    """A 2xx only for a request that carries the valid credential of every scheme the operation requires."""
    if not 200 <= response.status_code < 300:
        return None
    headers = {name.lower(): value for name, value in response.request.headers.items()}
    for scheme in _required_schemes(case):
        header, valid = SCHEMES[scheme]
        sent = headers.get(header)
        if sent is None or not hmac.compare_digest(sent.encode(), valid().encode()):
            raise AssertionError(
                f"{case.operation.label} answered {response.status_code} to a request without the valid {scheme}"
            )
    return None


@schemathesis.check
def request_id_on_every_answer(ctx: Any, response: Any, case: Any) -> bool | None:
    """The contract: every answer carries x-request-id."""
    request_id = response.headers.get("x-request-id")
    if not request_id:
        raise AssertionError(f"{case.operation.label} answered {response.status_code} without x-request-id")
    return None


# FUZZ_SHARD="k/n": this run sends the coverage phase's k-th case of every n (0-based), so n runs side by side send
# them all. The phase's cases come in a fixed order, one pass and no retry, so the n runs' shares make up the whole.
_SHARD = tuple(int(part) for part in os.environ["FUZZ_SHARD"].split("/")) if os.environ.get("FUZZ_SHARD") else None
_coverage_cases_seen = itertools.count()


@schemathesis.hook
def filter_case(ctx: Any, case: Any) -> bool:
    if _SHARD is None or case.meta is None or case.meta.phase.name != "coverage":
        return True
    index, count = _SHARD
    return next(_coverage_cases_seen) % count == index
