"""getChatGuilds for a bot in 5,000 guilds and a user in 20: platform requests per call, before and after the
shared guild set.

The handler runs in-process under moto with the resources of template.yaml, against the sandbox over HTTP, grown
to 5,000 guilds of the bot (`local.chat_sandbox.many_guilds`). "Before" is the algorithm the service had until the
shared set: `CHAT_BOT_GUILDS_CACHE_SECONDS=0` takes that same code path (every call pages through the bot's guilds,
200 a page). "After" is the default (60 s): a cold call (no shared set yet), warm calls (the set is fresh), and a
call once the set is older than its lifetime.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

from bench.chat_rate_limits import _invoke, signed_in_world
from bench.quick import scaled

ROOT = Path(__file__).resolve().parents[1]
ALICE = "1191000000000000101"
BOT_GUILDS = scaled(5_000, 200)
USER_GUILDS = 20
CALLS = scaled(10, 2)


def run() -> None:
    with mock.patch.dict(os.environ):
        rows = _measure_all()
    print(f"\ngetChatGuilds, a bot in {BOT_GUILDS:,} guilds and a user in {USER_GUILDS}: platform requests per call")
    print("  {:<48} {:>5} {:>12} {:>9}".format("case", "calls", "req/call", "median"))
    for case, calls, requests, latencies in rows:
        print(f"  {case:<48} {calls:>5} {requests / calls:>12.1f} {statistics.median(latencies) * 1000:>6.0f} ms")


def _guilds_of(fixture: dict[str, Any], user_id: str) -> int:
    return sum(1 for guild in fixture["guilds"] if any(member["user_id"] == user_id for member in guild["members"]))


def _measure_all() -> list[tuple[str, int, int, list[float]]]:
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]
    from local.chat_sandbox import DEFAULT_FIXTURE
    from local.chat_sandbox.many_guilds import with_bot_in_guilds
    from svcconf.settings import get_settings
    from svcconf.store.dynamo import table

    fixture = json.loads(Path(DEFAULT_FIXTURE).read_text())
    # The fixture's own guilds count too (it grows as the sandbox does): the bot's and alice's, read from it.
    bot_guilds, alice_guilds = (_guilds_of(fixture, user) for user in (fixture["bot"]["id"], ALICE))
    grown = with_bot_in_guilds(fixture, BOT_GUILDS - bot_guilds, members={ALICE: USER_GUILDS - alice_guilds})

    with signed_in_world(grown, user="bench-guilds-user") as (sandbox, token):

        def measure(case: str, calls: int) -> tuple[str, int, int, list[float]]:
            before, latencies = len(sandbox.state.request_log), []
            for _ in range(calls):
                started = time.perf_counter()
                response = _invoke("getChatGuilds", {}, token)
                latencies.append(time.perf_counter() - started)
                body = json.loads(response["body"])
                assert response["statusCode"] == 200, response["body"]
                assert len(body["guilds"]) == USER_GUILDS, len(body["guilds"])
            return case, calls, len(sandbox.state.request_log) - before, latencies

        def use_cache(seconds: str) -> None:
            os.environ["CHAT_BOT_GUILDS_CACHE_SECONDS"] = seconds
            get_settings.cache_clear()

        rows = []
        use_cache("0")
        rows.append(measure("before: every call pages the bot's guilds", CALLS))
        use_cache("60")
        rows.append(measure("after, cold: no shared set yet", 1))
        rows.append(measure("after, warm: shared set under 60 s old", CALLS))
        table(get_settings().chat_cache_table).update_item(
            Key={"key": "bot-guilds"},
            UpdateExpression="SET fetched_at = fetched_at - :age",
            ExpressionAttributeValues={":age": Decimal(61)},
        )
        rows.append(measure("after, stale: set over 60 s old, fetched again", 1))
        rows.append(measure("after, warm again", CALLS))
    return rows
