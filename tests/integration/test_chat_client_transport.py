"""The chat-platform client against the loopback sandbox, over real HTTP: headers, rate limits, failures, secrets."""

from __future__ import annotations

import logging
import re
import socket
import time

import pytest

from local.chat_sandbox import SandboxState
from svcconf.chat import (
    USER_AGENT,
    ChatBlocked,
    ChatClient,
    ChatError,
    ChatRateLimited,
    ChatTimeout,
    ChatUnavailable,
    InvalidUserToken,
)
from tests.helpers.chat_sandbox import (
    ALICE_CODE,
    ALICE_REFRESH,
    ALICE_TOKEN,
    BOB_EXPIRED_TOKEN,
    BOB_GUILD,
    DEMO_GUILD,
    LOCKED_GUILD,
    REDIRECT_URI,
    SECRETS,
    chat_settings_for,
    new_chat_client,
    platform_requests,
)

# -- headers ------------------------------------------------------------------------------------


def test_every_request_carries_the_user_agent_and_the_right_auth_scheme(
    chat_client: ChatClient, chat_state: SandboxState
):
    # When calls of each kind are made
    chat_client.get_invite("svcDemo")
    chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    chat_client.get_current_user_guilds(ALICE_TOKEN)
    chat_client.list_channels(DEMO_GUILD)
    # Then the platform saw its required User-Agent form on all of them
    assert re.fullmatch(r"DiscordBot \(\S+, \d+(\.\d+)*\)", USER_AGENT)
    assert {entry["user_agent"] for entry in chat_state.request_log} == {USER_AGENT}
    # And Bot for bot calls, Basic for the token endpoint, Bearer for the user's calls
    assert [(entry["route"], entry["auth"]) for entry in chat_state.request_log] == [
        ("/invites/{code}", "Bot"),
        ("/oauth2/token", "Basic"),
        ("/users/@me/guilds", "Bearer"),
        ("/guilds/{guild_id}/channels", "Bot"),
    ]


# -- rate limits and failures --------------------------------------------------------------------


def test_calls_succeed_when_thirty_percent_of_requests_are_rate_limited(
    chat_client: ChatClient, chat_state: SandboxState, capsys: pytest.CaptureFixture[str]
):
    # Given the platform answers 429 (retry_after 0.05-0.2 s) to 30% of requests, seeded
    chat_state.configure(seed=20260718, rate_limit_probability=0.3)
    # When 50 guild reads and 20 guild lists are made (an invite's answer is kept a while: one request)
    guilds = [chat_client.get_guild(DEMO_GUILD) for _ in range(50)]
    guild_lists = [chat_client.get_current_user_guilds(ALICE_TOKEN) for _ in range(20)]
    # Then every call succeeded
    assert all(guild.id == DEMO_GUILD for guild in guilds)
    assert all(len(guilds) == 6 for guilds in guild_lists)  # alice's six servers
    # And the platform saw a bounded number of requests per success
    stats = chat_state.stats()
    limited = stats["by_status"].get("429", 0)
    per_success = stats["requests"] / 70
    with capsys.disabled():
        print(f"\n[chat] 70 calls: {stats['requests']} requests, {limited} answered 429, {per_success:.2f} per success")
    assert stats["by_status"]["200"] == 70
    assert limited == stats["faults"]["rate_limit"] > 0
    assert per_success <= 2.0


def test_client_waits_for_an_exhausted_bucket_instead_of_hitting_429(chat_client: ChatClient, chat_state: SandboxState):
    # Given the guild route allows 3 requests per 0.4 s window
    chat_state.configure(route_limits={"GET /guilds/{guild_id}": [3, 0.4]})
    # When 7 guild reads are made back to back
    started = time.monotonic()
    for _ in range(7):
        chat_client.get_guild(DEMO_GUILD)
    elapsed = time.monotonic() - started
    # Then the client waited for two resets and the platform never had to answer 429
    assert [entry["status"] for entry in chat_state.request_log] == [200] * 7
    assert elapsed >= 0.75


def test_global_429s_are_waited_out(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(seed=3, global_429_probability=0.4)
    for _ in range(10):
        assert chat_client.get_guild(DEMO_GUILD).id == DEMO_GUILD
    assert chat_state.stats()["faults"]["global_429"] > 0
    assert chat_state.stats()["by_status"]["200"] == 10


def test_a_wait_past_the_cap_raises_chat_rate_limited(chat_sandbox, chat_state: SandboxState):
    # Given the guild route allows 1 request per 30 s and a call may wait at most 1 s
    chat_state.configure(route_limits={"GET /guilds/{guild_id}": [1, 30]})
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_MAX_WAIT_SECONDS=1))
    client.get_guild(DEMO_GUILD)
    # When the guild is read again
    started = time.monotonic()
    with pytest.raises(ChatRateLimited) as caught:
        client.get_guild(DEMO_GUILD)
    # Then the client gave up at once (it knew the bucket) instead of sleeping or sending
    assert time.monotonic() - started < 0.5
    assert caught.value.status == 502
    assert caught.value.retry_after is not None
    assert caught.value.retry_after > 25
    assert len(chat_state.request_log) == 1
    # And another guild's bucket is not affected
    assert client.get_guild(BOB_GUILD).id == BOB_GUILD


def test_an_edge_ban_is_not_retried(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(blocked=True)
    with pytest.raises(ChatBlocked) as caught:
        chat_client.get_invite("svcDemo")
    assert caught.value.status == 502
    assert platform_requests(chat_state) == [("GET", "/invites/{code}", 429)]


def test_5xx_is_retried_then_succeeds(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(fail_next=2, fail_next_status=503)
    assert chat_client.get_guild(DEMO_GUILD).name == "Svc Demo Guild"
    assert [entry["status"] for entry in chat_state.request_log] == [503, 503, 200]


def test_persistent_5xx_is_chat_unavailable_after_bounded_attempts(chat_client: ChatClient, chat_state: SandboxState):
    chat_state.configure(seed=5, error_5xx_probability=1.0)
    with pytest.raises(ChatUnavailable) as caught:
        chat_client.get_guild(DEMO_GUILD)
    assert caught.value.status == 502
    assert caught.value.platform_status in (500, 502, 503)
    assert len(chat_state.request_log) == chat_client.max_retries + 1 == 4


def test_a_post_is_retried_after_503_but_not_after_500(chat_client: ChatClient, chat_state: SandboxState):
    # Given one 503 (not applied): the role is created on the retry
    chat_state.configure(fail_next=1, fail_next_status=503)
    assert chat_client.create_role(DEMO_GUILD, {"name": "After 503"}).name == "After 503"
    # Given one 500 (maybe applied): no retry, so no duplicate
    chat_state.configure(fail_next=1, fail_next_status=500)
    with pytest.raises(ChatUnavailable):
        chat_client.create_role(DEMO_GUILD, {"name": "After 500"})
    assert [entry["status"] for entry in chat_state.requests("POST", "/guilds/{guild_id}/roles")] == [503, 200, 500]


class Sleeps(list[float]):
    """The client's sleep: sleeps for real (the sandbox keeps real time) and records each wait."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)
        time.sleep(seconds)


def test_a_429_from_a_bucket_the_client_did_not_know_is_waited_out_once_then_retried(
    chat_sandbox, chat_state: SandboxState
):
    # Given the guild route allows 1 request per 0.5 s and another client has just used it
    chat_state.configure(route_limits={"GET /guilds/{guild_id}": [1, 0.5]})
    new_chat_client(chat_settings_for(chat_sandbox.base_url)).get_guild(DEMO_GUILD)
    sleeps = Sleeps()
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url), sleep=sleeps)
    # When this client, which has not seen the bucket, reads the guild
    guild = client.get_guild(DEMO_GUILD)
    # Then the platform answered its first request 429, it waited the retry_after once, and the retry succeeded
    assert guild.name == "Svc Demo Guild"
    assert platform_requests(chat_state) == [
        ("GET", "/guilds/{guild_id}", 200),
        ("GET", "/guilds/{guild_id}", 429),
        ("GET", "/guilds/{guild_id}", 200),
    ]
    [waited] = sleeps
    assert 0 < waited <= 0.5


def test_a_401_is_never_retried(chat_client: ChatClient, chat_state: SandboxState):
    with pytest.raises(InvalidUserToken) as caught:
        chat_client.get_current_user(BOB_EXPIRED_TOKEN)
    assert str(caught.value) == "The chat-platform sign-in has expired; sign in with the chat platform again."
    assert platform_requests(chat_state) == [("GET", "/users/@me", 401)]


def test_5xx_backoffs_grow_with_equal_jitter_until_the_client_gives_up(chat_sandbox, chat_state: SandboxState):
    # Given the platform answers 502 to every request
    chat_state.configure(error_5xx_probability=1.0, error_5xx_statuses=[502])
    sleeps = Sleeps()
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url), sleep=sleeps, backoff_base=0.02)
    # When a guild is read, Then ChatUnavailable after 1 + 3 attempts
    with pytest.raises(ChatUnavailable) as caught:
        client.get_guild(DEMO_GUILD)
    assert caught.value.platform_status == 502
    assert platform_requests(chat_state) == [("GET", "/guilds/{guild_id}", 502)] * 4
    # And the waits between them grew: each in [ceiling / 2, ceiling], ceilings 0.02, 0.04, 0.08
    assert len(sleeps) == 3
    for waited, ceiling in zip(sleeps, (0.02, 0.04, 0.08), strict=True):
        assert ceiling / 2 <= waited <= ceiling


def test_a_post_that_timed_out_is_not_sent_again(chat_sandbox, chat_state: SandboxState):
    # Given the platform takes 0.6 s and the client waits 0.2 s: the role may well have been created
    chat_state.configure(latency_seconds=0.6)
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_TIMEOUT_SECONDS=0.2))
    # When a role is created, Then ChatTimeout after one request: a retry could create it twice
    with pytest.raises(ChatTimeout):
        client.create_role(DEMO_GUILD, {"name": "Timed Out"})
    time.sleep(0.6)  # the sandbox finishes the request it was given
    assert [entry["method"] for entry in chat_state.requests("POST", "/guilds/{guild_id}/roles")] == ["POST"]


def test_slow_platform_is_chat_timeout(chat_sandbox, chat_state: SandboxState):
    # Given the platform takes 0.6 s and the client waits 0.2 s
    chat_state.configure(latency_seconds=0.6)
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url, CHAT_TIMEOUT_SECONDS=0.2), max_retries=1)
    # When a guild is read, Then ChatTimeout (a 502 for the service, as the contract says)
    with pytest.raises(ChatTimeout) as caught:
        client.get_guild(DEMO_GUILD)
    assert caught.value.status == 502
    assert isinstance(caught.value, ChatUnavailable)


def test_unreachable_platform_is_chat_unavailable():
    # Given nothing listens on a freshly released loopback port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = new_chat_client(chat_settings_for(f"http://127.0.0.1:{port}/api/v10"))
    with pytest.raises(ChatUnavailable) as caught:
        client.get_guild(DEMO_GUILD)
    assert not isinstance(caught.value, ChatTimeout)
    assert "after 4 attempt(s)" in caught.value.message


# -- secrets stay out of logs and errors ----------------------------------------------------------


def test_no_token_or_secret_reaches_logs_or_error_messages(
    chat_client: ChatClient, chat_state: SandboxState, caplog: pytest.LogCaptureFixture
):
    # Given every logger captured at DEBUG and a platform that rate-limits and fails now and then
    caplog.set_level(logging.DEBUG)
    chat_state.configure(seed=11, rate_limit_probability=0.3, fail_next=1)
    errors: list[ChatError] = []
    # When the client signs a user in, refreshes, reads guilds and hits errors
    grant = chat_client.exchange_code(ALICE_CODE, REDIRECT_URI)
    refreshed = chat_client.refresh_token(ALICE_REFRESH)
    chat_client.get_current_user(grant.access_token.get_secret_value())
    chat_client.get_current_user_guilds(refreshed.access_token.get_secret_value())
    chat_client.get_bot_guilds()
    for failing in (
        lambda: chat_client.exchange_code(ALICE_CODE, REDIRECT_URI),
        lambda: chat_client.get_current_user(BOB_EXPIRED_TOKEN),
        lambda: chat_client.create_role(LOCKED_GUILD, {"name": "x"}),
    ):
        with pytest.raises(ChatError) as caught:
            failing()
        errors.append(caught.value)
    # Then something was logged (waits, retries), but no secret appears in it or in the errors
    assert any(record.name.startswith("svcconf.chat") for record in caplog.records)
    secrets = {
        *SECRETS,
        ALICE_CODE,
        grant.access_token.get_secret_value(),
        grant.refresh_token.get_secret_value() if grant.refresh_token else "",
        refreshed.access_token.get_secret_value(),
    } - {""}
    logged = caplog.text + "".join(str(record.args) for record in caplog.records)
    shown = " ".join(f"{error!s} {error!r} {error.message}" for error in errors) + repr(grant) + str(refreshed)
    for secret in secrets:
        assert secret not in logged
        assert secret not in shown
