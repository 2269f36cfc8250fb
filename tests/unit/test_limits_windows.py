"""Limits per user at the layer, with the usage table in moto and the clock moved by the test: which window a
request counts in, the item it leaves, the 429 past a limit, the AI turn's tokens counted after it, and the users'
share of the bot's rate in each second (waiting for the next one, or 503)."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from svcconf import limits
from svcconf.ai.usage import TokenUsage, record_call
from svcconf.api.auth import BearerUser
from svcconf.backups.own_pace import bots_own_work, claim_guild_share
from svcconf.chat.transport import user_share
from svcconf.errors import LimitReached, ServiceUnavailable
from svcconf.observability import metrics
from svcconf.settings import get_settings

NOON = datetime(2026, 11, 25, 12, 0, 20, 400_000, tzinfo=UTC)  # 39.6 s before the minute ends
MINUTE_START = int(NOON.timestamp()) // 60 * 60
DAY_START = int(NOON.timestamp()) // 86_400 * 86_400
ANA = BearerUser(sub="ana")


class Clock:
    """The limits' wall clock and monotonic clock together: a sleep moves both."""

    def __init__(self) -> None:
        self.now = NOON
        self.slept: list[float] = []

    def utc_now(self) -> datetime:
        return self.now

    def monotonic(self) -> float:
        return self.now.timestamp()

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """A usage table as template.yaml declares it, in moto; the limits' clocks; no refusal an earlier test saw."""
    fake = Clock()
    monkeypatch.setattr(limits, "utc_now", fake.utc_now)
    monkeypatch.setattr(limits, "time", fake)
    monkeypatch.setattr(limits, "_refused_until", {})
    monkeypatch.setenv("USAGE_TABLE_NAME", "usage-under-test")
    get_settings.cache_clear()
    metrics.clear_metrics()
    with mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(
            TableName="usage-under-test",
            AttributeDefinitions=[{"AttributeName": "key", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "key", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield fake
    get_settings.cache_clear()
    metrics.clear_metrics()


def limit_to(monkeypatch: pytest.MonkeyPatch, **values: int) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, str(value))
    get_settings.cache_clear()


def items() -> dict[str, dict[str, int]]:
    """The usage table's items by key: what each counter holds and when the TTL may delete it."""
    table = boto3.resource("dynamodb", region_name="us-east-1").Table("usage-under-test")
    return {i["key"]: {"used": int(i["used"]), "expiration": int(i["expiration"])} for i in table.scan()["Items"]}


def refusal(error: pytest.ExceptionInfo[LimitReached]) -> dict[str, Any]:
    return {"message": error.value.message, **error.value.extra, "headers": error.value.headers()}


def emitted() -> dict[str, tuple[str, list[float]]]:
    """The CloudWatch metrics this invocation would emit: each one's unit and values."""
    document = metrics.serialize_metric_set()
    units = {m["Name"]: m["Unit"] for m in document["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    return {name: (unit, document[name]) for name, unit in units.items()}


# ---------------------------------------------------------------- a limit's window and its 429


def test_a_users_turns_count_in_the_clocks_minute_and_the_item_outlives_it_by_an_hour(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=2)
    limits.take(limits.AI_TURNS, ANA)
    limits.take(limits.AI_TURNS, ANA)
    assert items() == {f"ai-turns#ana#{MINUTE_START}": {"used": 2, "expiration": MINUTE_START + 60 + 3_600}}


def test_past_the_minutes_turns_the_429_names_the_limit_and_when_it_frees_counting_nothing(clock, monkeypatch):
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=2)
    limits.take(limits.AI_TURNS, ANA)
    limits.take(limits.AI_TURNS, ANA)

    with pytest.raises(LimitReached) as refused:
        limits.take(limits.AI_TURNS, ANA)

    assert refused.value.status == 429
    assert refusal(refused) == {
        "message": "The limit of 2 svcAiChat turns a minute (SVC_AI_TURNS_PER_MINUTE) is reached; it frees at "
        "2026-11-25T12:01:00Z, in 40 s.",
        "limit": "SVC_AI_TURNS_PER_MINUTE",
        "retry_after": 40,
        "frees_at": "2026-11-25T12:01:00Z",
        "headers": {"Retry-After": "40"},
    }
    assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 2


def test_a_refusal_is_counted_in_cloudwatch_and_logged_with_its_limit_and_wait(clock, monkeypatch, caplog):
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    limits.take(limits.AI_TURNS, ANA)
    with pytest.raises(LimitReached):
        limits.take(limits.AI_TURNS, ANA)
    assert emitted() == {"LimitReached": ("Count", [1.0])}
    [logged] = [(r.getMessage(), r.limit, r.retry_after) for r in caplog.records if hasattr(r, "retry_after")]
    assert logged == ("limit reached", "SVC_AI_TURNS_PER_MINUTE", 40)


@pytest.fixture
def host_in_new_york() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_when_a_limit_frees_is_said_in_utc_whatever_the_hosts_time_zone(clock, monkeypatch, host_in_new_york):
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    limits.take(limits.AI_TURNS, ANA)
    with pytest.raises(LimitReached) as refused:
        limits.take(limits.AI_TURNS, ANA)
    assert refused.value.extra["frees_at"] == "2026-11-25T12:01:00Z"
    assert "it frees at 2026-11-25T12:01:00Z" in refused.value.message


def test_the_next_minute_is_a_new_window_and_another_user_has_their_own(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    limits.take(limits.AI_TURNS, ANA)
    limits.take(limits.AI_TURNS, BearerUser(sub="ben"))
    with pytest.raises(LimitReached):
        limits.take(limits.AI_TURNS, ANA)
    clock.now += timedelta(seconds=39.6)  # the minute's first instant
    limits.take(limits.AI_TURNS, ANA)
    assert {key: item["used"] for key, item in items().items()} == {
        f"ai-turns#ana#{MINUTE_START}": 1,
        f"ai-turns#ben#{MINUTE_START}": 1,
        f"ai-turns#ana#{MINUTE_START + 60}": 1,
    }


def test_in_the_windows_last_instant_the_429_still_says_one_second(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    clock.now = NOON.replace(second=59, microsecond=900_000)
    limits.take(limits.AI_TURNS, ANA)
    with pytest.raises(LimitReached) as refused:
        limits.take(limits.AI_TURNS, ANA)
    assert (refused.value.extra["retry_after"], refused.value.headers()) == (1, {"Retry-After": "1"})


def test_a_refusal_stands_on_this_instance_until_its_window_ends(clock, monkeypatch) -> None:
    # Given a user refused this minute, When the limit is raised, Then this instance still refuses them until the
    # minute ends (a count only grows within its window: it does not ask the table again), and counts nothing
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=1)
    limits.take(limits.AI_TURNS, ANA)
    with pytest.raises(LimitReached):
        limits.take(limits.AI_TURNS, ANA)
    limit_to(monkeypatch, SVC_AI_TURNS_PER_MINUTE=5)
    clock.now += timedelta(seconds=39)
    with pytest.raises(LimitReached) as refused:
        limits.take(limits.AI_TURNS, ANA)
    assert refused.value.extra["retry_after"] == 1
    assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 1
    clock.now += timedelta(seconds=1)
    limits.take(limits.AI_TURNS, ANA)
    assert items()[f"ai-turns#ana#{MINUTE_START + 60}"]["used"] == 1


def test_an_instance_forgets_the_refusals_of_windows_that_ended(clock, monkeypatch) -> None:
    # Given refusals of many users in one minute, When a refusal comes in a later minute, Then this instance keeps
    # that one alone: what it remembers does not grow with every window a flood goes through
    limit_to(monkeypatch, SVC_PLATFORM_READS_PER_MINUTE=1)
    for n in range(3):
        user = BearerUser(sub=f"user-{n}")
        limits.take(limits.PLATFORM_READS, user)
        with pytest.raises(LimitReached):
            limits.take(limits.PLATFORM_READS, user)
    assert len(limits._refused_until) == 3
    clock.now += timedelta(seconds=39.6)
    limits.take(limits.PLATFORM_READS, ANA)
    with pytest.raises(LimitReached):
        limits.take(limits.PLATFORM_READS, ANA)
    assert limits._refused_until == {f"platform-reads#ana#{MINUTE_START + 60}": MINUTE_START + 120}


def test_a_subject_of_two_hundred_characters_is_its_own_key_and_a_longer_one_its_digest(clock) -> None:
    at_most, longer = "u" * 200, "u" * 201
    for sub in (at_most, longer):
        limits.take(limits.AI_TURNS, BearerUser(sub=sub))
    digest = hashlib.sha256(longer.encode()).hexdigest()
    assert set(items()) == {f"ai-turns#{at_most}#{MINUTE_START}", f"ai-turns#sha256:{digest}#{MINUTE_START}"}


# ---------------------------------------------------------------- the AI turn and its tokens


def call_using(tokens: TokenUsage) -> None:
    record_call(purpose="build", model="m", usage=tokens, stop_reason="end_turn", seconds=0.1)


def test_an_ai_turn_counts_a_turn_and_after_it_the_tokens_its_calls_reported(clock) -> None:
    with limits.ai_turn(ANA):
        call_using(TokenUsage(input_tokens=100, output_tokens=20, cache_read_input_tokens=55))
        call_using(TokenUsage(input_tokens=7, cache_creation_input_tokens=3))
    assert items() == {
        f"ai-turns#ana#{MINUTE_START}": {"used": 1, "expiration": MINUTE_START + 60 + 3_600},
        f"ai-tokens#ana#{DAY_START}": {"used": 100 + 20 + 6 + 7 + 3, "expiration": DAY_START + 86_400 + 3_600},
    }


def test_a_turn_that_fails_still_counts_its_tokens_and_one_that_called_nothing_counts_none(clock) -> None:
    def failing_turn() -> None:
        with limits.ai_turn(ANA):
            call_using(TokenUsage(input_tokens=40))
            raise RuntimeError("the model's answer was not JSON")

    with pytest.raises(RuntimeError):
        failing_turn()
    with limits.ai_turn(ANA):
        pass
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 40
    assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 2


def test_the_days_tokens_spent_past_the_limit_refuse_the_next_turn_until_midnight(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=1_000_000)
    with limits.ai_turn(ANA):
        call_using(TokenUsage(input_tokens=1_000_001))
    with pytest.raises(LimitReached) as refused:
        limits.ai_turn(ANA).__enter__()
    assert refused.value.message == (
        "The limit of 1,000,000 AI tokens a day (UTC) (SVC_AI_TOKENS_PER_DAY) is reached; it frees at "
        "2026-11-26T00:00:00Z, in 43180 s."
    )
    assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 1  # the refused turn took no turn


def test_at_exactly_the_days_tokens_the_next_turn_is_refused(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=50)
    with limits.ai_turn(ANA):
        call_using(TokenUsage(input_tokens=49))
    with limits.ai_turn(ANA):
        call_using(TokenUsage(input_tokens=1))
    with pytest.raises(LimitReached):
        limits.ai_turn(ANA).__enter__()


def test_a_turn_reserves_before_its_calls_and_keeps_only_what_they_reported(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=10_000)
    with limits.ai_turn(ANA) as tokens:
        tokens.reserve(6_000)
        assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 6_000  # held while the turn runs
        call_using(TokenUsage(input_tokens=2_500, output_tokens=500))
    assert items()[f"ai-tokens#ana#{DAY_START}"] == {"used": 3_000, "expiration": DAY_START + 86_400 + 3_600}
    assert tokens.reserved == 6_000


def test_a_turn_that_reserves_twice_holds_both_and_settles_both(clock, monkeypatch) -> None:
    with limits.ai_turn(ANA) as tokens:
        tokens.reserve(1_000)
        tokens.reserve(500)
        call_using(TokenUsage(input_tokens=200))
    assert tokens.reserved == 1_500
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 200


def test_a_turn_that_spent_exactly_its_reservation_or_nothing_writes_and_logs_no_settlement(clock, caplog) -> None:
    with limits.ai_turn(ANA) as tokens:
        tokens.reserve(300)
        call_using(TokenUsage(input_tokens=300))
    with limits.ai_turn(ANA):
        pass
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 300
    assert [r for r in caplog.records if r.getMessage() == "ai tokens counted"] == []


def test_a_turn_that_spends_more_than_it_reserved_counts_all_of_it(clock, monkeypatch) -> None:
    with limits.ai_turn(ANA) as tokens:
        tokens.reserve(100)
        call_using(TokenUsage(input_tokens=150))
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 150


def test_two_reservations_that_pass_the_day_together_refuse_the_second_and_give_its_turn_back(
    clock, monkeypatch
) -> None:
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=10_000)
    with limits.ai_turn(ANA) as first:
        first.reserve(6_000)
        with pytest.raises(LimitReached) as refused, limits.ai_turn(ANA) as second:
            second.reserve(4_001)
        assert refused.value.extra["limit"] == "SVC_AI_TOKENS_PER_DAY"
        assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 1  # the refused turn gave its turn back
        with limits.ai_turn(ANA) as third:
            third.reserve(4_000)  # exactly what is left: a smaller reservation is not refused for the day
        call_using(TokenUsage(input_tokens=1_000))
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 1_000
    assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 2


def test_a_turn_refused_for_another_limit_or_after_a_call_keeps_its_turn(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=10_000)

    def reserving_after_a_call() -> None:
        with limits.ai_turn(ANA) as tokens:
            call_using(TokenUsage(input_tokens=10))
            tokens.reserve(20_000)

    with pytest.raises(LimitReached):
        reserving_after_a_call()
    with pytest.raises(LimitReached), limits.ai_turn(ANA):
        raise LimitReached("another limit", limit="SVC_PLATFORM_READS_PER_MINUTE", retry_after=1, frees_at="x")
    assert items()[f"ai-turns#ana#{MINUTE_START}"]["used"] == 2
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 10


def test_a_reservation_settles_in_the_day_it_was_made_in(clock, monkeypatch) -> None:
    with limits.ai_turn(ANA) as tokens:
        tokens.reserve(5_000)
        clock.now = datetime(2026, 11, 26, 0, 0, 1, tzinfo=UTC)  # the turn ends after midnight
        call_using(TokenUsage(input_tokens=1_200))
    assert items()[f"ai-tokens#ana#{DAY_START}"]["used"] == 1_200
    assert f"ai-tokens#ana#{DAY_START + 86_400}" not in items()


def test_a_refused_reservation_is_not_remembered_as_a_refusal_of_the_day(clock, monkeypatch) -> None:
    limit_to(monkeypatch, SVC_AI_TOKENS_PER_DAY=10_000)
    with pytest.raises(LimitReached), limits.ai_turn(ANA) as tokens:
        tokens.reserve(20_000)
    assert limits._refused_until == {}
    with limits.ai_turn(ANA) as tokens:
        tokens.reserve(9_000)


def test_spend_counts_past_the_limit_and_answers_the_windows_total(clock) -> None:
    assert limits.spend(limits.AI_TOKENS, ANA, 700) == 700
    assert limits.spend(limits.AI_TOKENS, ANA, 2_000_000) == 2_000_700


# ---------------------------------------------------------------- platform reads and the bot's share


def test_a_platform_read_counts_and_its_requests_claim_the_bots_share_inside_the_block_only(clock) -> None:
    with limits.platform_reads(ANA):
        claim = user_share.get()
        assert claim is not None
        claim(5.0)
        claim(5.0)
    assert user_share.get() is None
    second = int(NOON.timestamp())
    assert items() == {
        f"platform-reads#ana#{MINUTE_START}": {"used": 1, "expiration": MINUTE_START + 60 + 3_600},
        f"bot-share#{second}": {"used": 2, "expiration": second + 1 + 3_600},
    }


HALF_PAST = NOON.replace(microsecond=500_000)  # half a second to the next: a wait of 0.5 s, exact in binary


def test_a_full_second_of_the_bots_share_waits_for_the_next_one(clock, monkeypatch) -> None:
    limit_to(monkeypatch, CHAT_USER_REQUESTS_PER_SECOND=2)
    clock.now = HALF_PAST
    for _ in range(3):
        limits.claim_bot_share(5.0)
    second = int(HALF_PAST.timestamp())
    assert clock.slept == [0.5]
    assert items() == {
        f"bot-share#{second}": {"used": 2, "expiration": second + 1 + 3_600},
        f"bot-share#{second + 1}": {"used": 1, "expiration": second + 2 + 3_600},
    }


def test_a_wait_longer_than_the_call_may_wait_is_503_without_a_sleep(clock, monkeypatch) -> None:
    limit_to(monkeypatch, CHAT_USER_REQUESTS_PER_SECOND=1)
    clock.now = HALF_PAST
    limits.claim_bot_share(5.0)
    with pytest.raises(ServiceUnavailable) as refused:
        limits.claim_bot_share(0.4)  # the next second is 0.5 s away
    assert refused.value.status == 503
    assert refused.value.headers() == {"Retry-After": "1"}
    assert refused.value.message == (
        "The chat platform's rate for users' requests is taken this second (CHAT_USER_REQUESTS_PER_SECOND); "
        "try again in a second."
    )
    assert emitted() == {"BotShareFull": ("Count", [1.0])}
    assert clock.slept == []
    limits.claim_bot_share(0.5)  # exactly the wait: it waits
    assert clock.slept == [0.5]


def test_a_share_wait_is_bounded_by_two_seconds_however_long_the_call_may_wait(clock, monkeypatch) -> None:
    # Given one request a second and the clock standing still but for the sleeps, When the second is full for
    # four seconds (another instance's requests), Then a call that may wait a minute gives up after two
    limit_to(monkeypatch, CHAT_USER_REQUESTS_PER_SECOND=1)
    clock.now = HALF_PAST
    second = int(HALF_PAST.timestamp())
    table = boto3.resource("dynamodb", region_name="us-east-1").Table("usage-under-test")
    for taken in range(second, second + 4):
        table.put_item(Item={"key": f"bot-share#{taken}", "used": 1, "expiration": taken + 3_601})
    with pytest.raises(ServiceUnavailable):
        limits.claim_bot_share(60.0)
    assert clock.slept == [0.5, 1.0]


def test_without_a_share_set_the_bots_rate_is_not_counted(clock, monkeypatch) -> None:
    limit_to(monkeypatch, CHAT_USER_REQUESTS_PER_SECOND=0)
    limits.claim_bot_share(5.0)
    assert items() == {}


def test_the_bots_own_work_takes_its_guilds_share_then_the_users_share_and_waits_when_the_guilds_is_full(
    clock, monkeypatch
) -> None:
    # Given 2 own requests a second per guild and 10 of the users' share, When a scheduled backup of one guild
    # sends 3 requests in a second and another guild's sends 1, Then the first guild's third waits for the next
    # second, the other guild's does not, and every request also took a place in the users' share
    limit_to(monkeypatch, CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND=2, CHAT_USER_REQUESTS_PER_SECOND=10)
    clock.now = HALF_PAST
    second = int(HALF_PAST.timestamp())
    with bots_own_work("111"):
        claim = user_share.get()
        assert claim is not None
        claim(5.0)
        claim(5.0)
        claim(5.0)
    with bots_own_work("222"):
        claim = user_share.get()
        assert claim is not None
        claim(5.0)
    assert user_share.get() is None
    assert clock.slept == [0.5]
    assert items() == {
        f"bot-own#111#{second}": {"used": 2, "expiration": second + 1 + 3_600},
        f"bot-own#111#{second + 1}": {"used": 1, "expiration": second + 2 + 3_600},
        f"bot-own#222#{second + 1}": {"used": 1, "expiration": second + 2 + 3_600},
        f"bot-share#{second}": {"used": 2, "expiration": second + 1 + 3_600},
        f"bot-share#{second + 1}": {"used": 2, "expiration": second + 2 + 3_600},
    }


def test_a_guilds_full_own_share_past_the_wait_is_503_naming_its_setting(clock, monkeypatch) -> None:
    limit_to(monkeypatch, CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND=1)
    clock.now = HALF_PAST
    claim_guild_share("111", 5.0)
    with pytest.raises(ServiceUnavailable) as refused:
        claim_guild_share("111", 0.4)
    assert "CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND" in refused.value.message
    assert emitted() == {"BotOwnShareFull": ("Count", [1.0])}
    assert clock.slept == []
