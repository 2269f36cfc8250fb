"""The pace of what the bot does on its own (a scheduled backup's reads of the platform).

Inside `bots_own_work(guild_id)` each request the chat client sends first takes a place in the guild's own share
(CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND a second, all instances together, in the usage counters), then one in the
users' share of the bot's rate (`limits.claim_bot_share`, CHAT_USER_REQUESTS_PER_SECOND): the bot's own work never
takes the deploys' half of the rate, and one guild's schedule never takes the whole users' share. A place not
found in time is `ServiceUnavailable`, which fails the run's message for the queue to retry.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from svcconf.chat.transport import user_share
from svcconf.limits import claim_bot_share, claim_share_of_second
from svcconf.settings import get_settings

OWN_SHARE_COUNTER = "bot-own"


def claim_guild_share(guild_id: str, seconds_left: float) -> None:
    """One request of the guild's own share in this second, waiting for the next second when it is full."""
    claim_share_of_second(
        f"{OWN_SHARE_COUNTER}#{guild_id}",
        get_settings().chat_bot_own_guild_requests_per_second,
        seconds_left,
        full_metric="BotOwnShareFull",
        full_message="The guild's share of the bot's own requests is taken (CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND)",
    )


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
