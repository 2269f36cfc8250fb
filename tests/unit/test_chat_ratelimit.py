"""The chat platform's rate limits: the bucket state machine on a fake clock (the client's retries against the
sandbox over HTTP: tests/integration/test_chat_client_transport.py)."""

from __future__ import annotations

import pytest

from svcconf.chat.ratelimit import (
    BucketState,
    BucketView,
    RateLimitBlocked,
    RateLimiter,
    RateLimitWaitTooLong,
    RouteKey,
)

GUILD_A = "1191000000000001001"
GUILD_B = "1191000000000001002"
ROLES_A = RouteKey("POST", "/guilds/{guild_id}/roles", GUILD_A, "bot")
ROLES_B = RouteKey("POST", "/guilds/{guild_id}/roles", GUILD_B, "bot")
INVITE = RouteKey("GET", "/invites/{code}", "", "bot")


class FakeClock:
    """A monotonic clock that only moves when something sleeps."""

    def __init__(self, start: float = 1000.0):
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0, f"the limiter slept {seconds}s: a wait it did not need would loop on this clock"
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def bucket_headers(bucket: str, remaining: int, reset_after: float, limit: int = 5) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset-After": str(reset_after),
        "X-RateLimit-Bucket": bucket,
    }


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def limiter(clock: FakeClock) -> RateLimiter:
    return RateLimiter(clock=clock, sleep=clock.sleep, wall_clock=lambda: 1_700_000_000.0, global_per_second=None)


# -- buckets --------------------------------------------------------------------------------


def test_exhausted_bucket_waits_until_reset_after(limiter: RateLimiter, clock: FakeClock):
    # Given the platform said the roles bucket of guild A has 0 requests left for 2.5 s
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=2.5))
    # When the next request on that bucket is acquired
    waited = limiter.acquire(ROLES_A, deadline=clock.now + 10)
    # Then it slept exactly until the reset, once
    assert waited == pytest.approx(2.5)
    assert clock.sleeps == [2.5]


def test_remaining_requests_go_out_at_once_then_the_bucket_waits(limiter: RateLimiter, clock: FakeClock):
    # Given 2 requests remain in a 5-request window that resets in 1 s
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=2, reset_after=1.0))
    # When three requests are acquired without any answer in between
    limiter.acquire(ROLES_A, deadline=clock.now + 10)
    limiter.acquire(ROLES_A, deadline=clock.now + 10)
    third = limiter.acquire(ROLES_A, deadline=clock.now + 10)
    # Then the first two did not wait (claimed locally) and the third waited for the reset
    assert clock.sleeps == [1.0]
    assert third == pytest.approx(1.0)
    # And after the reset the window is fresh again: limit 5, less the two still unanswered (the platform may count
    # them in the new window) and the one just claimed
    state = limiter.state_of(ROLES_A)
    assert state is not None
    assert state.remaining == 2


def test_two_guilds_do_not_block_each_other(limiter: RateLimiter, clock: FakeClock):
    # Given guild A's roles bucket is exhausted for 30 s
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=30))
    # When the same route is used for guild B
    waited = limiter.acquire(ROLES_B, deadline=clock.now + 1)
    # Then guild B goes at once: buckets are keyed by bucket hash + major parameter
    assert waited == 0
    assert clock.sleeps == []
    assert limiter.delay(ROLES_A) == (pytest.approx(30.0), "bucket")


def test_routes_that_share_a_bucket_hash_share_its_state(limiter: RateLimiter, clock: FakeClock):
    # Given two routes of guild A that the platform names with the same bucket hash
    reorder_a = RouteKey("PATCH", "/guilds/{guild_id}/roles", GUILD_A, "bot")
    limiter.record_response(reorder_a, bucket_headers("b-shared", remaining=3, reset_after=5))
    limiter.record_response(ROLES_A, bucket_headers("b-shared", remaining=0, reset_after=5))
    # When the first route is checked
    wait, reason = limiter.delay(reorder_a)
    # Then it waits for the shared bucket
    assert reason == "bucket"
    assert wait == pytest.approx(5.0)
    assert limiter.bucket_of(reorder_a) == limiter.bucket_of(ROLES_A) == "b-shared"


def test_user_tokens_have_their_own_buckets(limiter: RateLimiter, clock: FakeClock):
    # Given one user's guild-list bucket is exhausted
    alice = RouteKey("GET", "/users/@me/guilds", "", "user:aaaa")
    bob = RouteKey("GET", "/users/@me/guilds", "", "user:bbbb")
    limiter.record_response(alice, bucket_headers("b-my-guilds", remaining=0, reset_after=3))
    # Then another user's token is not held back
    assert limiter.delay(bob) == (0.0, "")
    assert limiter.delay(alice)[1] == "bucket"


def test_reset_epoch_is_used_when_reset_after_is_missing(limiter: RateLimiter, clock: FakeClock):
    # Given a response with only the absolute reset time, 4 s after the (fake) wall clock
    headers = {"X-RateLimit-Bucket": "b", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000004.0"}
    limiter.record_response(INVITE, headers)
    # Then the wait is 4 s
    assert limiter.delay(INVITE) == (pytest.approx(4.0), "bucket")


def test_responses_without_rate_limit_headers_leave_no_state(limiter: RateLimiter):
    limiter.record_response(INVITE, {"Content-Type": "application/json"})
    assert limiter.state_of(INVITE) is None
    assert limiter.delay(INVITE) == (0.0, "")


# -- 429s -----------------------------------------------------------------------------------


def test_bucket_429_uses_the_body_retry_after_over_the_rounded_header(limiter: RateLimiter, clock: FakeClock):
    # Given a 429 whose body says 0.25 s and whose Retry-After header says 1
    headers = {**bucket_headers("b-inv", 0, 0.25), "Retry-After": "1", "X-RateLimit-Scope": "user"}
    verdict = limiter.record_rate_limited(INVITE, headers, {"retry_after": 0.25, "global": False})
    # Then the wait is the precise 0.25 s, on that bucket only
    assert verdict.retry_after == pytest.approx(0.25)
    assert not verdict.is_global
    assert verdict.scope == "user"
    assert limiter.delay(INVITE) == (pytest.approx(0.25), "bucket")
    assert limiter.delay(ROLES_A) == (0.0, "")


def test_429_without_body_falls_back_to_the_retry_after_header(limiter: RateLimiter):
    verdict = limiter.record_rate_limited(INVITE, {"Retry-After": "2", "X-RateLimit-Scope": "shared"}, None)
    assert verdict.retry_after == 2.0
    assert verdict.scope == "shared"
    assert limiter.delay(INVITE) == (pytest.approx(2.0), "bucket")


def test_global_429_blocks_every_route_and_resource(limiter: RateLimiter, clock: FakeClock):
    # Given a global 429 on the invite route
    headers = {"X-RateLimit-Global": "true", "X-RateLimit-Scope": "global", "Retry-After": "1"}
    verdict = limiter.record_rate_limited(INVITE, headers, {"retry_after": 0.75, "global": True})
    # When unrelated routes and guilds are acquired
    assert verdict.is_global
    limiter.acquire(ROLES_B, deadline=clock.now + 5)
    # Then they waited for the global limit to pass
    assert clock.sleeps == [0.75]
    assert limiter.delay(ROLES_A) == (0.0, "")


def test_global_flag_in_the_body_alone_is_global(limiter: RateLimiter):
    # Given a 429 whose headers do not say global but whose body does
    headers = {"Retry-After": "1", "X-RateLimit-Scope": "global"}
    verdict = limiter.record_rate_limited(INVITE, headers, {"retry_after": 0.5, "global": True})
    assert verdict.is_global
    assert limiter.delay(ROLES_A)[1] == "global"


def test_429_without_rate_limit_headers_is_an_edge_ban(limiter: RateLimiter):
    # Given a 429 with neither X-RateLimit-* nor Retry-After (the platform's edge blocking the IP)
    # Then the limiter refuses to turn it into a wait
    with pytest.raises(RateLimitBlocked):
        limiter.record_rate_limited(INVITE, {"Content-Type": "text/html"}, None)


def test_wait_past_the_deadline_raises_without_sleeping(limiter: RateLimiter, clock: FakeClock):
    # Given a bucket that resets in 40 s
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=40))
    # When the call may wait only 20 s
    with pytest.raises(RateLimitWaitTooLong) as caught:
        limiter.acquire(ROLES_A, deadline=clock.now + 20)
    # Then it fails at once, saying how long and why
    assert caught.value.wait == pytest.approx(40)
    assert caught.value.reason == "bucket"
    assert clock.sleeps == []


def test_proactive_global_limit_spreads_requests_over_a_second(clock: FakeClock):
    # Given a limiter allowing 3 requests per second overall
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, global_per_second=3)
    # When 4 requests are acquired at the same instant
    for _ in range(4):
        limiter.acquire(INVITE, deadline=clock.now + 5)
    # Then the fourth waited for the first to leave the one-second window
    assert clock.sleeps == [1.0]


# -- what a long reset leaves behind --------------------------------------------------------------


def test_a_quota_429_is_observed_as_its_bucket_said_and_forgetting_a_guild_opens_only_its_buckets(
    limiter: RateLimiter, clock: FakeClock
):
    quota = {**bucket_headers("roles", 0, 86_400.0, limit=250), "Retry-After": "86400"}
    limiter.record_rate_limited(ROLES_A, quota, {"retry_after": 86_400.0, "global": False})
    limiter.record_rate_limited(ROLES_B, quota, {"retry_after": 86_400.0, "global": False})
    clock.now += 400

    observed = limiter.observed(ROLES_A)
    limiter.forget(GUILD_A)

    assert observed is not None
    assert (observed.limit, observed.remaining, observed.reset_after) == (250, 0, pytest.approx(86_000.0))
    assert limiter.observed(ROLES_A) is None
    assert limiter.delay(ROLES_A) == (0.0, "")
    assert limiter.delay(ROLES_B) == (pytest.approx(86_000.0), "bucket")
    with pytest.raises(RateLimitWaitTooLong):
        limiter.acquire(ROLES_B, deadline=clock.now + 10)


@pytest.mark.parametrize(
    ("headers", "body", "verdict"),
    [
        # the wait: the body's, else Retry-After, else the bucket's reset, else one second
        ({"X-RateLimit-Reset-After": "2.5", "X-RateLimit-Bucket": "b"}, None, (2.5, False, "user")),
        ({"X-RateLimit-Bucket": "b"}, {"retry_after": "soon"}, (1.0, False, "user")),
        ({"X-RateLimit-Bucket": "b", "Retry-After": "-1"}, {"retry_after": 0}, (0.0, False, "user")),
        # a negative wait is not believed: the next source is
        ({"Retry-After": "-1", "X-RateLimit-Reset-After": "2"}, {"retry_after": -0.5}, (2.0, False, "user")),
        # global: the header in any case, or the body; the scope the header's, else what the 429 implies
        ({"X-RateLimit-Global": "True", "Retry-After": "1"}, None, (1.0, True, "global")),
        ({"X-RateLimit-Global": "false", "Retry-After": "3"}, {"global": False}, (3.0, False, "user")),
    ],
)
def test_a_429s_wait_globality_and_scope_come_from_its_body_and_headers_in_that_order(
    limiter: RateLimiter, headers: dict[str, str], body: dict[str, object] | None, verdict: tuple[float, bool, str]
):
    given = limiter.record_rate_limited(INVITE, headers, body)

    assert (given.retry_after, given.is_global, given.scope) == verdict
    assert limiter.delay(ROLES_A) == ((pytest.approx(verdict[0]), "global") if verdict[1] else (0.0, ""))


def test_an_edge_ban_and_a_wait_past_the_deadline_say_what_they_are(limiter: RateLimiter, clock: FakeClock):
    with pytest.raises(RateLimitBlocked, match=r"^429 without rate-limit headers$"):
        limiter.record_rate_limited(INVITE, {}, None)
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=40))
    with pytest.raises(
        RateLimitWaitTooLong, match=r"^a bucket rate limit needs a wait of 40\.000s, past the deadline$"
    ):
        limiter.acquire(ROLES_A, deadline=clock.now + 20)


# -- at the boundaries: what the limiter asks for at the instant a limit ends ----------------------


def test_a_limiter_whose_clock_starts_at_zero_sends_its_first_request_at_once():
    # Given a monotonic clock near zero (its reference point is undefined: a fresh VM's uptime, say)
    clock = FakeClock(start=0.0)
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, global_per_second=None)
    # Then nothing holds the first request back
    assert limiter.delay(INVITE) == (0.0, "")
    assert limiter.acquire(INVITE, deadline=0.5) == 0.0


def test_a_response_s_headers_are_its_bucket_s_state_on_the_limiter_s_clock(limiter: RateLimiter, clock: FakeClock):
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=2, reset_after=1.5, limit=5))

    assert limiter.state_of(ROLES_A) == BucketState(limit=5, remaining=2, reset_at=clock.now + 1.5)
    assert limiter.observed(ROLES_A) == BucketView(limit=5, remaining=2, reset_after=1.5)


def test_an_exhausted_bucket_holds_nothing_back_from_the_instant_it_resets(limiter: RateLimiter, clock: FakeClock):
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=2.0))
    clock.now += 1.5
    assert limiter.delay(ROLES_A) == (0.5, "bucket")

    clock.now += 0.5

    assert limiter.delay(ROLES_A) == (0.0, "")
    assert limiter.observed(ROLES_A) == BucketView(limit=5, remaining=0, reset_after=0.0)


def test_after_a_reset_the_fresh_window_s_requests_go_out_at_once(limiter: RateLimiter, clock: FakeClock):
    # Given a 3-request bucket spent until 1 s from now
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=1.0, limit=3))
    # When three requests are acquired without an answer in between
    waits = [limiter.acquire(ROLES_A, deadline=clock.now + 5) for _ in range(3)]
    # Then the first waited for the reset and the next two went at once, from the new window
    assert (waits, clock.sleeps) == ([1.0, 0.0, 0.0], [1.0])


@pytest.mark.parametrize(
    "headers",
    [
        {"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Bucket": "b"},  # no reset at all
        {"X-RateLimit-Remaining": "0", "X-RateLimit-Bucket": "b", "X-RateLimit-Reset": "1699999990.5"},  # past
        {"X-RateLimit-Remaining": "0", "X-RateLimit-Bucket": "b", "X-RateLimit-Reset": "1700000000"},  # this instant
    ],
)
def test_a_spent_bucket_whose_reset_is_not_given_or_already_past_holds_nothing_back(
    limiter: RateLimiter, clock: FakeClock, headers: dict[str, str]
):
    limiter.record_response(INVITE, headers)

    assert limiter.delay(INVITE) == (0.0, "")
    assert limiter.acquire(INVITE, deadline=clock.now + 1) == 0.0


def test_the_global_window_is_one_second_from_the_oldest_send(clock: FakeClock):
    # Given 3 requests a second overall, sent 0.25 s apart
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, global_per_second=3)
    start = clock.now
    for offset in (0.0, 0.25, 0.5):
        clock.now = start + offset
        limiter.acquire(INVITE, deadline=clock.now + 5)
    # Then a fourth waits until the oldest send is a second old, and from that instant goes at once
    clock.now = start + 0.75
    assert limiter.delay(ROLES_A) == (0.25, "global")
    clock.now = start + 1.0
    assert limiter.delay(ROLES_A) == (0.0, "")


def test_the_proactive_global_limit_names_itself_when_its_wait_is_past_the_deadline(clock: FakeClock):
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, global_per_second=1)
    limiter.acquire(INVITE, deadline=clock.now + 5)

    with pytest.raises(RateLimitWaitTooLong, match=r"^a global rate limit needs a wait of 1\.000s, past the deadline$"):
        limiter.acquire(ROLES_A, deadline=clock.now + 0.5)
    assert clock.sleeps == []


def test_a_wait_that_ends_exactly_at_the_deadline_is_waited(limiter: RateLimiter, clock: FakeClock):
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=20.0))

    assert limiter.acquire(ROLES_A, deadline=clock.now + 20.0) == 20.0
    assert clock.sleeps == [20.0]


def test_the_time_waited_adds_a_global_wait_and_the_bucket_s_after_it(limiter: RateLimiter, clock: FakeClock):
    # Given guild A's roles bucket spent for 2 s, then a global 429 of 0.5 s
    limiter.record_response(ROLES_A, bucket_headers("b-roles", remaining=0, reset_after=2.0))
    global_429 = {"X-RateLimit-Global": "true", "Retry-After": "1"}
    limiter.record_rate_limited(INVITE, global_429, {"retry_after": 0.5, "global": True})
    # When a roles request is acquired
    waited = limiter.acquire(ROLES_A, deadline=clock.now + 10)
    # Then it waited out the global limit, then the rest of the bucket's, and says it waited both
    assert clock.sleeps == [0.5, 1.5]
    assert waited == 2.0


# -- requests side by side on one bucket ------------------------------------------------------

GRANT_A = RouteKey("PUT", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", GUILD_A, "bot")
REMOVAL_A = RouteKey("DELETE", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", GUILD_A, "bot")
WINDOW_END = 1_700_000_001.0  # the X-RateLimit-Reset of the window the answers below describe (wall clock)


def window_headers(remaining: int, reset: float = WINDOW_END, limit: int = 10) -> dict[str, str]:
    """An answer of the shared member-role bucket, naming its window by X-RateLimit-Reset (1 s from the wall clock)."""
    return {
        **bucket_headers("b-members", remaining, reset_after=round(reset - 1_700_000_000.0, 3), limit=limit),
        "X-RateLimit-Reset": str(reset),
    }


def test_two_routes_of_one_bucket_claim_from_one_state(limiter: RateLimiter, clock: FakeClock):
    # Given a grant and a removal answered in one bucket with 2 requests left for 1 s
    limiter.record_response(GRANT_A, window_headers(remaining=3))
    limiter.record_response(REMOVAL_A, window_headers(remaining=2))
    # When a grant, a removal and a grant are acquired without an answer in between
    waits = [limiter.acquire(route, deadline=clock.now + 5) for route in (GRANT_A, REMOVAL_A, GRANT_A)]
    # Then the third waited for the shared window's reset: the removal's claim counted against the grant's bucket
    assert waits == [0.0, 0.0, 1.0]
    assert limiter.state_of(GRANT_A) == limiter.state_of(REMOVAL_A)


def test_claims_sent_before_the_bucket_was_known_count_in_it_once_an_answer_names_it(
    limiter: RateLimiter, clock: FakeClock
):
    # Given the grant's bucket known with 5 left, and two removals sent before any removal was answered
    limiter.record_response(GRANT_A, window_headers(remaining=5))
    limiter.acquire(REMOVAL_A, deadline=clock.now + 1)
    limiter.acquire(REMOVAL_A, deadline=clock.now + 1)
    # When the first removal's answer names the grant's bucket with 4 left
    limiter.record_response(REMOVAL_A, window_headers(remaining=4))
    # Then the other removal, still unanswered, is counted too: 3 left for both routes
    state = limiter.state_of(GRANT_A)
    assert state is not None
    assert (state.remaining, limiter.bucket_of(REMOVAL_A)) == (3, "b-members")
    # And once it is answered (with 3 left) the count stays 3: it is not counted twice
    limiter.record_response(REMOVAL_A, window_headers(remaining=3))
    assert limiter.observed(REMOVAL_A) == BucketView(limit=10, remaining=3, reset_after=1.0)


def test_an_answer_s_remaining_is_less_the_claims_still_unanswered(limiter: RateLimiter, clock: FakeClock):
    limiter.record_response(GRANT_A, window_headers(remaining=9))
    for _ in range(3):
        limiter.acquire(GRANT_A, deadline=clock.now + 1)
    # When the first of three answers says 8 (the platform had counted it, maybe not the two others yet)
    limiter.record_response(GRANT_A, window_headers(remaining=8))
    # Then 6 are left
    assert limiter.observed(GRANT_A) == BucketView(limit=10, remaining=6, reset_after=1.0)


def test_answers_of_one_window_out_of_order_keep_the_lower_count_and_a_late_one_changes_nothing(
    limiter: RateLimiter, clock: FakeClock
):
    # Given an answer of the window ending at WINDOW_END with 4 left
    limiter.record_response(GRANT_A, window_headers(remaining=4))
    # When an earlier request's answer of that window (its reset 40 ms off by rounding) comes after it with 6 left
    limiter.record_response(REMOVAL_A, window_headers(remaining=6, reset=WINDOW_END + 0.04))
    # Then 4 are left, until the later of the two ends, in the window the first named
    assert limiter.observed(GRANT_A) == BucketView(limit=10, remaining=4, reset_after=pytest.approx(1.04))
    state = limiter.state_of(GRANT_A)
    assert state is not None
    assert state.window == WINDOW_END
    # When an answer names the next window (a second later) with 9 left
    limiter.record_response(GRANT_A, window_headers(remaining=9, reset=WINDOW_END + 1.0))
    # Then that window's count holds, and an answer of the window before, come late, changes nothing
    assert limiter.observed(GRANT_A) == BucketView(limit=10, remaining=9, reset_after=2.0)
    limiter.record_response(REMOVAL_A, window_headers(remaining=1, reset=WINDOW_END - 0.06))
    assert limiter.observed(GRANT_A) == BucketView(limit=10, remaining=9, reset_after=2.0)


def test_a_fresh_window_s_whole_limit_unanswered_waits_for_its_answers(limiter: RateLimiter, clock: FakeClock):
    # Given a 3-request bucket spent for 1 s, then its fresh window's three requests sent and not answered
    limiter.record_response(GRANT_A, window_headers(remaining=0, limit=3))
    for _ in range(3):
        limiter.acquire(GRANT_A, deadline=clock.now + 5)
    # Then a fourth waits for an answer, a look at a time, rather than going past the limit
    assert limiter.delay(GRANT_A) == (0.01, "bucket")
    with pytest.raises(RateLimitWaitTooLong):
        limiter.acquire(GRANT_A, deadline=clock.now + 0.005)
    # And claims unanswered for 15 s are taken as lost: they hold nothing back after that
    clock.now += 14.99
    assert limiter.delay(GRANT_A) == (0.01, "bucket")
    clock.now += 0.01
    assert limiter.delay(GRANT_A) == (0.0, "")


def test_a_global_429_settles_its_request_s_claim(limiter: RateLimiter, clock: FakeClock):
    # Given a 1-request bucket whose window has passed, and its one request refused by a global 429
    limiter.record_response(GRANT_A, window_headers(remaining=0, limit=1))
    clock.now += 1.0
    limiter.acquire(GRANT_A, deadline=clock.now + 1)
    limiter.record_rate_limited(GRANT_A, {"X-RateLimit-Global": "true"}, {"retry_after": 0.5, "global": True})
    clock.now += 0.5
    # Then its retry goes at once: the refused request is no longer on its way
    assert limiter.delay(GRANT_A) == (0.0, "")


@pytest.mark.parametrize(("offset", "remaining"), [(-0.05, 2), (0.05, 4), (-0.06, 4), (0.06, 6)])
def test_answers_within_50_ms_of_a_window_s_reset_are_of_that_window(
    limiter: RateLimiter, offset: float, remaining: int
):
    # Given an answer of the window ending at WINDOW_END with 4 left
    limiter.record_response(GRANT_A, window_headers(remaining=4))
    # When another names a reset `offset` seconds off: 2 left 50 ms before, 6 left after
    limiter.record_response(GRANT_A, window_headers(remaining=6 if offset > 0 else 2, reset=WINDOW_END + offset))
    # Then within 50 ms it is that window (the lower count), further before it is late (ignored), after it the next
    state = limiter.state_of(GRANT_A)
    assert state is not None
    assert state.remaining == remaining


def test_an_answer_without_a_bucket_settles_its_claim(limiter: RateLimiter, clock: FakeClock):
    # Given a request answered without rate-limit headers, then another answered in a bucket with 4 left
    limiter.acquire(INVITE, deadline=clock.now + 1)
    limiter.record_response(INVITE, {"Content-Type": "application/json"})
    limiter.acquire(INVITE, deadline=clock.now + 1)
    limiter.record_response(INVITE, bucket_headers("b-invites", remaining=4, reset_after=1.0))
    # Then 4 are left: the first request is not counted as still on its way
    assert limiter.observed(INVITE) == BucketView(limit=5, remaining=4, reset_after=1.0)


def test_a_claim_released_without_an_answer_holds_nothing_back(limiter: RateLimiter, clock: FakeClock):
    # Given a 3-request bucket spent for 1 s, then its fresh window's three requests sent, one failing to connect
    limiter.record_response(GRANT_A, window_headers(remaining=0, limit=3))
    for _ in range(3):
        limiter.acquire(GRANT_A, deadline=clock.now + 5)
    assert limiter.delay(GRANT_A) == (0.01, "bucket")
    limiter.release(GRANT_A)
    # Then the fourth goes at once: only two are on their way
    assert limiter.delay(GRANT_A) == (0.0, "")
