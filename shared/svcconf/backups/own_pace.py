"""The pace of what the bot does on its own (a scheduled backup's reads of the platform).

Inside `bots_own_work(guild_id)` each request the chat client sends first takes a place in the guild's own share
(CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND a second, all instances together, in the usage counters), then one in the
users' share of the bot's rate (`limits.claim_bot_share`, CHAT_USER_REQUESTS_PER_SECOND): the bot's own work never
takes the deploys' half of the rate, and one guild's schedule never takes the whole users' share. A place not
found in time is `ServiceUnavailable`, which fails the run's message for the queue to retry.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from svcconf.chat.transport import user_share
from svcconf.clock import utc_now
from svcconf.errors import ServiceUnavailable
from svcconf.limits import KEEP_AFTER_WINDOW_SECONDS, MAX_SHARE_WAIT_SECONDS, claim_bot_share, counters
from svcconf.observability import metrics
from svcconf.settings import get_settings

OWN_SHARE_COUNTER = "bot-own"


def claim_guild_share(guild_id: str, seconds_left: float) -> None:
    """One request of the guild's own share in this second, waiting for the next second when it is full."""
    allowed = get_settings().chat_bot_own_guild_requests_per_second
    if not allowed:
        return
    give_up_at = time.monotonic() + min(seconds_left, MAX_SHARE_WAIT_SECONDS)
    while True:
        now = utc_now().timestamp()
        second = int(now)
        key = f"{OWN_SHARE_COUNTER}#{guild_id}#{second}"
        if counters().take(key, 1, allowed, second + 1 + KEEP_AFTER_WINDOW_SECONDS) is not None:
            return
        wait = second + 1 - now
        if time.monotonic() + wait > give_up_at:
            metrics.add_metric(name="BotOwnShareFull", unit="Count", value=1)
            raise ServiceUnavailable(
                "The guild's share of the bot's own requests is taken (CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND)",
                retry_after_seconds=1,
            )
        time.sleep(wait)


@contextmanager
def bots_own_work(guild_id: str) -> Iterator[None]:
    """Inside the block, the chat client's requests take the guild's own share, then the users' share."""

    def claim(seconds_left: float) -> None:
        claim_guild_share(guild_id, seconds_left)
        claim_bot_share(seconds_left)

    token = user_share.set(claim)
    try:
        yield
    finally:
        user_share.reset(token)
