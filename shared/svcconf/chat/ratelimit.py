"""The chat platform's rate limits as a state machine: per-route buckets and the global limit.

No I/O here: the client tells the limiter what it is about to send (`acquire`) and what came back
(`record_response`, `record_rate_limited`); the clock and the sleep are injected so tests drive it
with a fake clock.

How the platform limits (its rate-limits docs; docs/04-chat-platform.md):
- every route belongs to a bucket named by `X-RateLimit-Bucket`; the name leaves out the top-level
  resource, so a bucket's state is kept per `bucket + major parameter` (guild_id, channel_id or
  webhook_id) and per caller (the bot, or one user's token);
- `X-RateLimit-Remaining: 0` means: wait `X-RateLimit-Reset-After` seconds before that bucket's
  next request;
- a 429 carries `retry_after` (body, float seconds) and `Retry-After`; with `global: true` /
  `X-RateLimit-Global: true` every request waits;
- a 429 without any rate-limit header is a Cloudflare ban: retrying makes it longer.

Requests sent side by side (a deploy's steps, a restore's grants) share a bucket's state: each claims one request
of it before it is sent, and an answer's `Remaining` is read less the claims still unanswered (the platform may
not have counted them yet). Answers naming the same `X-RateLimit-Reset` describe one window and may come out of
order, so the lower count holds; an answer from a window already over changes nothing.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAJOR_PARAMETERS = ("guild_id", "channel_id", "webhook_id")
GLOBAL_REQUESTS_PER_SECOND = 50  # the platform's documented global limit per bot
DEFAULT_RETRY_AFTER = 1.0  # when a 429 names no wait at all
IN_FLIGHT_HORIZON = 15.0  # seconds: a claim unanswered this long is taken as lost (its request failed unanswered)
ANSWER_POLL = 0.01  # seconds between looks while a fresh window's whole limit awaits its answers
SAME_WINDOW = 0.05  # seconds: X-RateLimit-Reset values this close name one window


@dataclass(frozen=True)
class RouteKey:
    """One request's place in the rate limits: its route, its top-level resource and its caller."""

    method: str
    template: str  # the path with placeholders, e.g. "/guilds/{guild_id}/roles"
    major: str = ""  # the top-level resource's id, "" when the route has none
    identity: str = ""  # "bot", a digest of a user token, or "" for anonymous calls

    @property
    def route(self) -> str:
        return f"{self.method} {self.template}"


@dataclass
class BucketState:
    limit: int | None
    remaining: int
    reset_at: float  # on the limiter's (monotonic) clock
    window: float | None = None  # the X-RateLimit-Reset (epoch seconds) that names the window described


@dataclass(frozen=True)
class BucketView:
    """A bucket as its headers described it: `X-RateLimit-Limit`, `-Remaining`, and the seconds until its reset."""

    limit: int | None
    remaining: int
    reset_after: float


@dataclass(frozen=True)
class RateLimitVerdict:
    """What a 429 said: how long to wait and whether every request must wait."""

    retry_after: float
    is_global: bool
    scope: str  # "user", "global" or "shared" (X-RateLimit-Scope)


class RateLimitWaitTooLong(Exception):
    """Waiting for the limit to pass would go past the call's deadline."""

    def __init__(self, wait: float, reason: str):
        self.wait = wait
        self.reason = reason
        super().__init__(f"a {reason} rate limit needs a wait of {wait:.3f}s, past the deadline")


class RateLimitBlocked(Exception):
    """A 429 without rate-limit headers: the platform's edge has blocked this address."""


def _lower(headers: Mapping[str, Any]) -> dict[str, str]:
    return {str(key).lower(): str(value) for key, value in headers.items()}


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _int(value: Any) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


class RateLimiter:
    """Bucket and global rate-limit state shared by every call of one client (thread-safe)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        global_per_second: int | None = GLOBAL_REQUESTS_PER_SECOND,
    ):
        self._clock = clock
        self._wall_clock = wall_clock
        self._sleep = sleep
        self._global_per_second = global_per_second
        self._lock = threading.Lock()
        self._route_buckets: dict[str, str] = {}  # "GET /guilds/{guild_id}" -> bucket hash
        self._buckets: dict[tuple[str, str, str], BucketState] = {}
        self._sent: dict[tuple[str, str, str], deque[float]] = {}  # claims not answered yet, oldest first
        self._global_until = 0.0
        self._recent_sends: deque[float] = deque()

    # -- what the client asks -------------------------------------------------------------

    def bucket_of(self, route: RouteKey) -> str | None:
        """The bucket hash learned for this route, if a response has named it yet."""
        with self._lock:
            return self._route_buckets.get(route.route)

    def state_of(self, route: RouteKey) -> BucketState | None:
        with self._lock:
            state = self._buckets.get(self._key(route))
            return None if state is None else BucketState(state.limit, state.remaining, state.reset_at, state.window)

    def observed(self, route: RouteKey) -> BucketView | None:
        """The route's bucket as its last response described it, with the seconds left until it resets."""
        with self._lock:
            state = self._buckets.get(self._key(route))
            if state is None:
                return None
            return BucketView(state.limit, state.remaining, max(0.0, state.reset_at - self._clock()))

    def forget(self, major: str) -> None:
        """Drops what responses said about one resource's buckets: its caller waited out a reset elsewhere."""
        with self._lock:
            for key in [key for key in self._buckets if key[1] == major]:
                del self._buckets[key]

    def delay(self, route: RouteKey) -> tuple[float, str]:
        """Seconds to wait before this route may be sent now, and which limit says so."""
        with self._lock:
            return self._delay(route, self._clock())

    def acquire(self, route: RouteKey, deadline: float) -> float:
        """Wait until `route` may be sent and claim one request of its bucket; return the time waited.

        Raises `RateLimitWaitTooLong` instead of waiting past `deadline` (on the limiter's clock).
        """
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                wait, reason = self._delay(route, now)
                if wait <= 0:
                    self._claim(route, now)
                    return waited
            if now + wait > deadline:
                raise RateLimitWaitTooLong(wait, reason)
            self._sleep(wait)
            waited += wait

    def release(self, route: RouteKey) -> None:
        """The claimed request got no answer (it failed to connect, timed out, or was never sent): it no longer
        counts as on its way."""
        with self._lock:
            self._answered(self._key(route))

    # -- what the platform answered -------------------------------------------------------

    def record_response(self, route: RouteKey, headers: Mapping[str, Any]) -> None:
        """Learn the route's bucket and its state from a response's `X-RateLimit-*` headers."""
        values = _lower(headers)
        with self._lock:
            self._update_bucket(route, values, self._clock())

    def record_rate_limited(
        self, route: RouteKey, headers: Mapping[str, Any], body: Mapping[str, Any] | None
    ) -> RateLimitVerdict:
        """Take a 429 into account and say how long to wait.

        Raises `RateLimitBlocked` for a 429 without rate-limit headers (an edge ban): such a 429
        must not be retried.
        """
        values = _lower(headers)
        if not any(name.startswith("x-ratelimit-") for name in values):
            raise RateLimitBlocked("429 without rate-limit headers")
        body = body if isinstance(body, Mapping) else {}
        retry_after = _float(body.get("retry_after"))
        if retry_after is None:
            retry_after = _float(values.get("retry-after"))
        if retry_after is None:
            retry_after = _float(values.get("x-ratelimit-reset-after"))
        if retry_after is None:
            retry_after = DEFAULT_RETRY_AFTER
        is_global = values.get("x-ratelimit-global", "").lower() == "true" or body.get("global") is True
        scope = values.get("x-ratelimit-scope") or ("global" if is_global else "user")
        with self._lock:
            now = self._clock()
            if is_global:
                self._global_until = max(self._global_until, now + retry_after)
                self._answered(self._key(route))
            else:
                self._update_bucket(route, values, now)
                key = self._key(route)
                state = self._buckets.get(key)
                reset_at = now + retry_after
                if state is None:
                    self._buckets[key] = BucketState(limit=None, remaining=0, reset_at=reset_at)
                else:
                    state.remaining = 0
                    state.reset_at = max(state.reset_at, reset_at)
        return RateLimitVerdict(retry_after=retry_after, is_global=is_global, scope=scope)

    # -- internals (called with the lock held) --------------------------------------------

    def _key(self, route: RouteKey) -> tuple[str, str, str]:
        # Until a response names the bucket, the route itself stands for it.
        bucket = self._route_buckets.get(route.route) or f"route:{route.route}"
        return bucket, route.major, route.identity

    def _delay(self, route: RouteKey, now: float) -> tuple[float, str]:
        if self._global_until > now:
            return self._global_until - now, "global"
        key = self._key(route)
        state = self._buckets.get(key)
        if state is not None and state.remaining <= 0:
            if state.reset_at > now:
                return state.reset_at - now, "bucket"
            if state.limit is not None and self._in_flight(key, now) >= state.limit:
                return ANSWER_POLL, "bucket"  # a fresh window's whole limit is on its way: its answers say more
        if self._global_per_second and len(self._recent_sends) >= self._global_per_second:
            oldest = self._recent_sends[0]
            if oldest + 1.0 > now:
                return oldest + 1.0 - now, "global"
        return 0.0, ""

    def _claim(self, route: RouteKey, now: float) -> None:
        key = self._key(route)
        state = self._buckets.get(key)
        if state is not None:
            if state.reset_at <= now and state.limit is not None:
                # The window has passed: a fresh one, less the claims on their way (the platform may count them in it).
                state.remaining = state.limit - self._in_flight(key, now)
                state.reset_at = now
            # Claimed before the answer comes, so concurrent callers do not overrun the bucket.
            state.remaining = max(0, state.remaining - 1)
        self._sent.setdefault(key, deque()).append(now)
        if self._global_per_second:
            self._recent_sends.append(now)
            while len(self._recent_sends) > self._global_per_second:
                self._recent_sends.popleft()

    def _in_flight(self, key: tuple[str, str, str], now: float) -> int:
        sent = self._sent.get(key)
        if sent is None:
            return 0
        while sent and sent[0] <= now - IN_FLIGHT_HORIZON:
            sent.popleft()
        return len(sent)

    def _answered(self, key: tuple[str, str, str]) -> None:
        sent = self._sent.get(key)
        if sent:
            sent.popleft()

    def _update_bucket(self, route: RouteKey, values: dict[str, str], now: float) -> None:
        """Called once per answer: it settles one claim of the route's bucket, then reads the headers."""
        bucket = values.get("x-ratelimit-bucket")
        if not bucket:
            self._answered(self._key(route))
            return
        placeholder = ("route:" + route.route, route.major, route.identity)
        key = (bucket, route.major, route.identity)
        self._route_buckets[route.route] = bucket
        self._buckets.pop(placeholder, None)
        if placeholder in self._sent:  # claims sent before the bucket was known are on their way to it
            self._sent.setdefault(key, deque()).extend(self._sent.pop(placeholder))
            self._sent[key] = deque(sorted(self._sent[key]))
        self._answered(key)
        remaining = _int(values.get("x-ratelimit-remaining"))
        if remaining is None:
            return
        reset = _float(values.get("x-ratelimit-reset"))
        reset_after = _float(values.get("x-ratelimit-reset-after"))
        if reset_after is None:
            reset_after = max(0.0, reset - self._wall_clock()) if reset is not None else 0.0
        state = BucketState(
            limit=_int(values.get("x-ratelimit-limit")),
            remaining=max(0, remaining - self._in_flight(key, now)),
            reset_at=now + reset_after,
            window=reset,
        )
        known = self._buckets.get(key)
        if known is not None and known.window is not None and reset is not None:
            if reset < known.window - SAME_WINDOW:
                return  # an answer from a window already over, come late
            if reset <= known.window + SAME_WINDOW:  # the same window: answers may come out of order
                state.remaining = min(state.remaining, known.remaining)
                state.reset_at = max(state.reset_at, known.reset_at)
                state.window = known.window
        self._buckets[key] = state
