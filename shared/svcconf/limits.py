"""Limits per user: what one caller (`sub`) may cost, counted across every instance (docs/07-operations.md, Limits).

- svcAiChat turns per minute (`SVC_AI_TURNS_PER_MINUTE`) and AI tokens per UTC day (`SVC_AI_TOKENS_PER_DAY`,
  the provider's reported usage of the user's turns, cache reads at a tenth): they bound the AI bill. v4: a turn
  reserves its tokens before it calls the provider (its estimate, `max_tokens` and a repair round) and settles
  them from the reported usage after, so parallel turns cannot pass the day's limit together;
- requests that make the bot read the platform for the user, per minute (`SVC_PLATFORM_READS_PER_MINUTE`): they
  bound what one user takes of the bot's rate;
- and, for everyone's requests together, the bot's share: what users' requests make the bot send stays within
  `CHAT_USER_REQUESTS_PER_SECOND` (half the platform's global rate), so a deploy keeps its pace and a flood of
  users' requests is answered 503 here before the platform answers the bot 429.

Counters are fixed windows in the usage table (svcconf.store.usage), one conditional update each. Past a limit:
`LimitReached` (429), whose `Retry-After` is the whole seconds until the window ends.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from svcconf.api.auth import BearerUser
from svcconf.clock import utc_now
from svcconf.errors import LimitReached, ServiceUnavailable
from svcconf.observability import logger, metrics
from svcconf.settings import get_settings
from svcconf.store.usage import UsageCounters

MINUTE = 60
DAY = 86_400
# An item outlives its window by this much before the TTL may delete it (the TTL can lag; nothing relies on it).
KEEP_AFTER_WINDOW_SECONDS = 3_600
BOT_SHARE_COUNTER = "bot-share"
# A user's request waits at most this long for the next second of the bot's share before it is answered 503.
MAX_SHARE_WAIT_SECONDS = 2.0
MAX_OWNER_LENGTH = 200


@dataclass(frozen=True)
class Limit:
    setting: str  # the environment variable, which names the limit in a 429
    field: str  # its name in the settings
    what: str  # what it counts, for the 429's message
    window_seconds: int
    counter: str  # the counter's name in the usage table

    def allowed(self) -> int:
        return int(getattr(get_settings(), self.field))


AI_TURNS = Limit("SVC_AI_TURNS_PER_MINUTE", "ai_turns_per_minute", "svcAiChat turns a minute", MINUTE, "ai-turns")
AI_TOKENS = Limit("SVC_AI_TOKENS_PER_DAY", "ai_tokens_per_day", "AI tokens a day (UTC)", DAY, "ai-tokens")
PLATFORM_READS = Limit(
    "SVC_PLATFORM_READS_PER_MINUTE",
    "platform_reads_per_minute",
    "requests a minute that read the chat platform",
    MINUTE,
    "platform-reads",
)


@cache
def _counters(table_name: str) -> UsageCounters:
    return UsageCounters(table_name)


def counters() -> UsageCounters:
    return _counters(get_settings().usage_table)


@dataclass(frozen=True)
class Window:
    key: str
    ends_at: int  # epoch seconds
    now: float

    @property
    def expires_at(self) -> int:
        return self.ends_at + KEEP_AFTER_WINDOW_SECONDS

    @property
    def seconds_left(self) -> int:
        return max(1, math.ceil(self.ends_at - self.now))


def window_of(limit: Limit, owner: str) -> Window:
    now = utc_now().timestamp()
    start = int(now // limit.window_seconds) * limit.window_seconds
    return Window(f"{limit.counter}#{_owner_key(owner)}#{start}", start + limit.window_seconds, now)


def _owner_key(sub: str) -> str:
    """The user as the key holds it: the `sub` itself, or its digest when it is long (a key has at most 2 KB)."""
    return sub if len(sub) <= MAX_OWNER_LENGTH else "sha256:" + hashlib.sha256(sub.encode()).hexdigest()


def _reached(limit: Limit, window: Window) -> LimitReached:
    frees_at = datetime.fromtimestamp(window.ends_at, UTC)
    metrics.add_metric(name="LimitReached", unit="Count", value=1)
    logger.info("limit reached", extra={"limit": limit.setting, "retry_after": window.seconds_left})
    return LimitReached(
        f"The limit of {limit.allowed():,} {limit.what} ({limit.setting}) is reached; it frees at "
        f"{frees_at:%Y-%m-%dT%H:%M:%SZ}, in {window.seconds_left} s.",
        retry_after=window.seconds_left,
        limit=limit.setting,
        frees_at=frees_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


# Windows this instance saw refused, by key: a count only grows within its window, so until the window ends a
# refusal stands, and a flood's further requests are refused without a write to the table. Not the day's tokens:
# a turn's reservation is settled after it (given back in part), so their count may fall again.
_refused_until: dict[str, int] = {}


def take(limit: Limit, user: BearerUser, amount: int = 1) -> Window:
    """Counts `amount` against the user's limit, or raises `LimitReached` (counting nothing): the window counted in."""
    window = window_of(limit, user.sub)
    remembered = limit is not AI_TOKENS
    if remembered and _refused_until.get(window.key, 0) > window.now:
        raise _reached(limit, window)
    if counters().take(window.key, amount, limit.allowed(), window.expires_at) is None:
        if remembered:
            for key in [key for key, until in _refused_until.items() if until <= window.now]:
                del _refused_until[key]
            _refused_until[window.key] = window.ends_at
        raise _reached(limit, window)
    return window


def spend(limit: Limit, user: BearerUser, amount: int) -> int:
    """Counts what was spent, past the limit too (the next request is refused): the window's new total."""
    window = window_of(limit, user.sub)
    return counters().add(window.key, amount, window.expires_at)


class TurnTokens:
    """A turn's day tokens: reserved before its provider calls, settled from their reported usage after."""

    def __init__(self, user: BearerUser):
        self.user = user
        self.reserved = 0
        self.window: Window | None = None  # the day the reservation was counted in

    def reserve(self, tokens: int) -> None:
        """Reserve `tokens` of the user's day (the turn's estimate, `max_tokens` and a repair round), or
        `LimitReached` (429) when they would pass SVC_AI_TOKENS_PER_DAY: parallel turns cannot pass it together."""
        self.window = take(AI_TOKENS, self.user, tokens)
        self.reserved += tokens

    def settle(self, spent: int) -> int | None:
        """Replace the reservation by what was spent (in the day it was reserved in): the day's new total."""
        if self.window is None:
            return spend(AI_TOKENS, self.user, spent) if spent else None
        difference = spent - self.reserved
        return counters().add(self.window.key, difference, self.window.expires_at) if difference else None


# ---------------------------------------------------------------- what a request may cost


@contextmanager
def platform_reads(user: BearerUser) -> Iterator[None]:
    """One of the user's requests that make the bot read the platform: counted, and, inside the block, each request
    the bot sends takes a place in the users' share of the bot's rate."""
    take(PLATFORM_READS, user)
    # Imported here: svcAiChat loads the chat client for turns on a live guild only.
    from svcconf.chat.transport import user_share

    token = user_share.set(claim_bot_share)
    try:
        yield
    finally:
        user_share.reset(token)


@contextmanager
def ai_turn(user: BearerUser) -> Iterator[TurnTokens]:
    """One svcAiChat turn: refused while the day's tokens are spent or the minute's turns are taken. The turn reserves
    what it may spend before it calls the provider (`TurnTokens.reserve`); when it ends, however it ends, the
    reservation is replaced by the provider's reported usage of its calls (a repair round's too). A turn refused at
    its reservation gives its minute's turn back."""
    from svcconf.ai.usage import collected

    take(AI_TOKENS, user, 0)  # still below the day's budget: the turn's reservation is known once its prompt is
    turns = take(AI_TURNS, user)
    tokens = TurnTokens(user)
    with collected() as calls:
        try:
            yield tokens
        except LimitReached as refused:
            if refused.extra.get("limit") == AI_TOKENS.setting and not calls:
                counters().add(turns.key, -1, turns.expires_at)
            raise
        finally:
            spent = sum(usage.counted_tokens for usage in calls)
            total = tokens.settle(spent)
            if total is not None:
                logger.info(
                    "ai tokens counted",
                    extra={"ai_tokens_counted": spent, "ai_tokens_reserved": tokens.reserved, "ai_tokens_today": total},
                )


def claim_bot_share(seconds_left: float) -> None:
    """Takes one request of the users' share of the bot's rate in this second (all instances together), waiting
    for the next second when this one is full; `ServiceUnavailable` (503, `Retry-After: 1`) when that wait would be
    longer than `seconds_left` or `MAX_SHARE_WAIT_SECONDS`."""
    claim_share_of_second(
        BOT_SHARE_COUNTER,
        get_settings().chat_user_requests_per_second,
        seconds_left,
        full_metric="BotShareFull",
        full_message="The chat platform's rate for users' requests is taken this second "
        "(CHAT_USER_REQUESTS_PER_SECOND); try again in a second.",
    )


def claim_share_of_second(
    counter: str, allowed: int, seconds_left: float, *, full_metric: str, full_message: str
) -> None:
    """Takes one of `allowed` places of this second under `counter` (all instances together, in the usage
    counters), waiting for the next second when this one is full; `ServiceUnavailable` (counted as `full_metric`)
    when that wait would pass `seconds_left` or `MAX_SHARE_WAIT_SECONDS`. `allowed` 0 means no share is kept."""
    if not allowed:
        return
    give_up_at = time.monotonic() + min(seconds_left, MAX_SHARE_WAIT_SECONDS)
    while True:
        now = utc_now().timestamp()
        second = int(now)
        if counters().take(f"{counter}#{second}", 1, allowed, second + 1 + KEEP_AFTER_WINDOW_SECONDS) is not None:
            return
        wait = second + 1 - now
        if time.monotonic() + wait > give_up_at:
            metrics.add_metric(name=full_metric, unit="Count", value=1)
            raise ServiceUnavailable(full_message, retry_after_seconds=1)
        time.sleep(wait)
