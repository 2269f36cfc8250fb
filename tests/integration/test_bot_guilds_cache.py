"""getChatGuilds for a bot in many guilds: the bot's guild set is shared through DynamoDB for a minute.

A sandbox of this module's own holds the fixture plus 450 guilds of the bot (three pages of 200), alice a plain
member of the first 3; the handlers run under moto with the template's tables.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local.chat_sandbox import DEFAULT_FIXTURE, SandboxServer, start_sandbox
from local.chat_sandbox.many_guilds import FIRST_GUILD_ID, with_bot_in_guilds
from svcconf.settings import get_settings
from svcconf.store.chat_cache import ChatCacheRepository, pack_ids, unpack_ids
from tests.helpers.deploy_worker import link
from tests.helpers.handlers import BOT_TOKEN, bearer, point_functions_at

ALICE = "1191000000000000101"
BOT_GUILDS = 450 + 5  # the crowd and the fixture's five guilds with the bot
PAGES = BOT_GUILDS // 200 + 1
CROWD_0, CROWD_1 = str(FIRST_GUILD_ID), str(FIRST_GUILD_ID + 1)
QUIET = "1191000000000001003"  # the bot is not there


@pytest.fixture(scope="module")
def crowd_server() -> Iterator[SandboxServer]:
    fixture = json.loads(Path(DEFAULT_FIXTURE).read_text())
    fixture["bot"]["token"] = BOT_TOKEN
    server, _ = start_sandbox(fixture=with_bot_in_guilds(fixture, 450, members={ALICE: 3}))
    yield server
    server.shutdown()


@pytest.fixture
def crowd(invoke, aws, crowd_server: SandboxServer, monkeypatch: pytest.MonkeyPatch):
    """The functions pointed at the crowded sandbox, alice linked to web-user-1, the log empty."""
    point_functions_at(crowd_server, monkeypatch)
    state = crowd_server.state
    link(invoke, state, "web-user-1", ALICE)
    state.clear_log()
    return state


def guilds(invoke) -> dict[str, dict]:
    response = invoke("getChatGuilds", {}, headers=bearer())
    assert response.status == 200, response.body
    return {guild["id"]: guild for guild in response.body["guilds"]}


def platform_requests(state) -> list[str]:
    requests = [entry["auth"] for entry in state.requests("GET", "/users/@me/guilds")]
    state.clear_log()
    return requests


def cache() -> ChatCacheRepository:
    return ChatCacheRepository(get_settings().chat_cache_table)


def age_the_shared_set(seconds: float) -> None:
    stored = cache().bot_guilds()
    cache().put_bot_guilds(stored.guild_ids, stored.fetched_at - seconds)


def test_the_first_call_fetches_the_bot_s_guilds_and_the_next_ones_reuse_them(invoke, crowd):
    # When alice lists her servers three times
    first = guilds(invoke)
    first_requests = platform_requests(crowd)
    later = [guilds(invoke) for _ in range(2)]
    later_requests = platform_requests(crowd)
    # Then the first call paged through the bot's guilds, the others asked only for hers
    assert first_requests == ["Bearer"] + ["Bot"] * PAGES
    assert later_requests == ["Bearer", "Bearer"]
    # And all three say the same: the bot in the crowd guilds and her own, not in Carol's Quiet Place
    assert all(answer == first for answer in later)
    assert (first[CROWD_0]["bot_present"], first[CROWD_1]["bot_present"], first[QUIET]["bot_present"]) == (
        True,
        True,
        False,
    )
    assert len(cache().bot_guilds().guild_ids) == BOT_GUILDS


def test_without_the_cache_every_call_pages_through_the_bot_s_guilds(invoke, crowd, monkeypatch):
    monkeypatch.setenv("CHAT_BOT_GUILDS_CACHE_SECONDS", "0")
    get_settings.cache_clear()
    for _ in range(2):
        guilds(invoke)
    assert platform_requests(crowd) == (["Bearer"] + ["Bot"] * PAGES) * 2


def test_a_set_older_than_its_lifetime_is_fetched_again(invoke, crowd):
    # Given the shared set, then the bot joins Carol's Quiet Place
    guilds(invoke)
    with crowd.lock:
        crowd.guilds[QUIET]["members"][crowd.bot["id"]] = {"roles": [], "joined_at": time.time(), "nick": None}
    platform_requests(crowd)
    # Then within the set's lifetime the answer is the shared one (at most 60 s old)
    assert guilds(invoke)[QUIET]["bot_present"] is False
    # And once it is older, the next call fetches it again and sees the bot
    age_the_shared_set(get_settings().chat_bot_guilds_cache_seconds + 1)
    platform_requests(crowd)
    assert guilds(invoke)[QUIET]["bot_present"] is True
    assert platform_requests(crowd) == ["Bearer"] + ["Bot"] * PAGES


def test_while_one_instance_refreshes_a_stale_set_the_others_answer_from_it(invoke, crowd):
    # Given a stale shared set, and another instance that has just taken the right to refresh it
    guilds(invoke)
    age_the_shared_set(get_settings().chat_bot_guilds_cache_seconds + 1)
    assert cache().claim_refresh(time.time(), 15) is True
    assert cache().claim_refresh(time.time(), 15) is False  # held: nobody else may take it
    platform_requests(crowd)
    # When alice lists her servers, Then the answer came from the stale set without paging
    assert guilds(invoke)[CROWD_0]["bot_present"] is True
    assert platform_requests(crowd) == ["Bearer"]


def test_a_set_too_large_for_one_item_is_not_shared(aws):
    # 60,000 guild ids (snowflakes spread over years, as real ones are) do not fit DynamoDB's 400 KB item
    rng = random.Random(5)
    huge = {str(rng.randrange(10**17, 2 * 10**18)) for _ in range(60_000)}
    assert cache().put_bot_guilds(huge, time.time()) is False
    assert cache().bot_guilds() is None


def test_guild_ids_round_trip_through_their_packed_form():
    ids = {"1191000000000001001", "18446744073709551615", "0", str(FIRST_GUILD_ID)}
    assert unpack_ids(pack_ids(ids)) == ids
