"""Time budgets: a platform that answers slowly gets the contract's 502 well before the function's timeout.

The handlers run in-process with a Lambda context whose clock runs for real, against a sandbox of their own
that answers every request after 30 s (longer than any function lives), so nothing but the budget ends a call.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from local.chat_sandbox import DEFAULT_FIXTURE, SandboxServer, start_sandbox
from svcconf.api import budget
from svcconf.chat import ChatRateLimited, ChatTimeout, get_chat_client
from svcconf.clock import utc_now
from svcconf.settings import get_settings
from svcconf.store.chat_links import ChatLink, ChatLinkRepository
from tests.helpers.chat_sandbox import DEMO_GUILD, chat_settings_for, new_chat_client
from tests.helpers.deploy_worker import deploy_body
from tests.helpers.handlers import BOT_TOKEN, REDIRECT_URI, bearer, point_functions_at

PLATFORM_LATENCY_SECONDS = 30.0
ALICE = "1191000000000000101"
FUNCTION_TIMEOUT_SECONDS = 15  # template.yaml's Globals


class RunningContext:
    """A Lambda context whose remaining time runs down with the wall clock, as Lambda's does."""

    function_name = "budget-test"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:budget-test"
    aws_request_id = "budget-test"

    def __init__(self, seconds: float):
        self._deadline = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


@pytest.fixture(scope="module")
def slow_server() -> Iterator[SandboxServer]:
    """A sandbox of this module's own: its requests sleep past the test, and must not reach another's log."""
    fixture = json.loads(Path(DEFAULT_FIXTURE).read_text())
    fixture["bot"]["token"] = BOT_TOKEN
    server, _ = start_sandbox(fixture=fixture)
    yield server
    server.shutdown()


@pytest.fixture
def slow_platform(aws, slow_server: SandboxServer, monkeypatch: pytest.MonkeyPatch):
    """The functions pointed at the sandbox, alice linked to web-user-1; then every answer takes 30 s."""
    point_functions_at(slow_server, monkeypatch)
    settings = get_settings()
    ChatLinkRepository(settings.chat_links_table, settings.kms_key_id).save(
        ChatLink(
            user_id="web-user-1",
            chat_user_id=ALICE,
            chat_username="alice",
            access_token=SecretStr("dev-access-alice"),
            refresh_token=SecretStr("dev-refresh-alice"),
            expires_at=utc_now() + timedelta(days=3),
            linked_at=utc_now(),
        )
    )
    slow_server.state.configure(latency_seconds=PLATFORM_LATENCY_SECONDS)
    yield slow_server.state
    get_chat_client.cache_clear()


def timed(operation: str, call):
    importlib.import_module(f"functions.{operation}.app")  # a cold import is not part of the invocation
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


def assert_contract_502(response) -> None:
    assert response.status == 502
    assert response.body["error"] == "Error"
    assert response.body["code"] == 502
    message = response.body["message"]
    assert message.startswith(("The chat platform timed out on ", "No time was left in this invocation for ")), message
    assert response.body["requestId"] == response.headers["x-request-id"]


def test_slow_platform_is_a_502_well_before_a_15_s_function_times_out(invoke, slow_platform, monkeypatch):
    # Given the template's defaults (no CHAT_* timeouts set) and an invocation with 15 s left
    monkeypatch.delenv("CHAT_MAX_WAIT_SECONDS", raising=False)
    monkeypatch.delenv("CHAT_TIMEOUT_SECONDS", raising=False)
    get_settings.cache_clear()
    context = RunningContext(FUNCTION_TIMEOUT_SECONDS)
    # When getChatGuilds asks a platform that answers after 30 s
    response, elapsed = timed("getChatGuilds", lambda: invoke("getChatGuilds", {}, headers=bearer(), context=context))
    # Then the contract's 502 came back with time to spare, from one call's limit (CHAT_MAX_WAIT_SECONDS)
    print(f"\ngetChatGuilds, platform answering after 30 s, 15 s function, defaults: 502 after {elapsed:.2f} s")
    assert_contract_502(response)
    max_wait = get_settings().chat_max_wait_seconds
    assert max_wait - 0.5 < elapsed < FUNCTION_TIMEOUT_SECONDS - budget.ANSWER_MARGIN_SECONDS


BODIES = {
    "validateChatInvite": {"invite": "svcDemo"},
    "chatAuth": {"code": "dev-code-alice", "redirect_uri": REDIRECT_URI},
    "getChatGuilds": {},
    "deployToChat": deploy_body(DEMO_GUILD, {"name": "Budget", "roles": [{"name": "Helper"}]}),
}


@pytest.mark.parametrize("operation", sorted(BODIES))
def test_every_chat_operation_answers_within_the_invocation_s_time_left(invoke, slow_platform, operation, monkeypatch):
    # Given waits that alone would outlast the function (20 s per call, 10 s per request: the old defaults)
    monkeypatch.setenv("CHAT_MAX_WAIT_SECONDS", "20")
    monkeypatch.setenv("CHAT_TIMEOUT_SECONDS", "10")
    get_settings.cache_clear()
    left = 4.0
    # When the operation runs in an invocation with 4 s left
    response, elapsed = timed(
        operation,
        lambda: invoke(
            operation,
            BODIES[operation],
            # chatAuth's code exchange without a sign-in's state is the anonymous one (a bearer would need a state)
            headers=None if operation == "chatAuth" else bearer(),
            drop_headers=("Authorization",) if operation == "chatAuth" else (),
            context=RunningContext(left),
        ),
    )
    # Then it answered the contract's 502 once the time left, less the margin to answer, was spent
    print(f"\n{operation}, platform answering after 30 s, 4 s left, 20 s wait allowed: 502 after {elapsed:.2f} s")
    assert_contract_502(response)
    assert left - budget.ANSWER_MARGIN_SECONDS - 0.5 < elapsed < left


# -- the client alone, on the calling thread's budget --------------------------------------------------------


def test_a_rate_limit_wait_past_the_time_left_gives_up_at_once(slow_server: SandboxServer):
    # Given a guild route allowing 1 request per 30 s, a call allowed to wait 60 s, and 5 s left
    slow_server.state.reset(config=True)
    slow_server.state.configure(route_limits={"GET /guilds/{guild_id}": [1, 30]})
    client = new_chat_client(chat_settings_for(slow_server.base_url, CHAT_MAX_WAIT_SECONDS=60, SVC_BOT_TOKEN=BOT_TOKEN))
    client.get_guild(DEMO_GUILD)
    budget.start(RunningContext(5.0))
    # When the guild is read again, Then the client gave up at once instead of sleeping 30 s
    started = time.monotonic()
    with pytest.raises(ChatRateLimited) as caught:
        client.get_guild(DEMO_GUILD)
    assert time.monotonic() - started < 0.5
    assert caught.value.retry_after > 25
    assert len(slow_server.state.request_log) == 1


def test_a_call_with_no_time_left_sends_nothing(slow_server: SandboxServer):
    # Given an invocation with less time left than the margin it needs to answer
    slow_server.state.reset(config=True)
    client = new_chat_client(chat_settings_for(slow_server.base_url, SVC_BOT_TOKEN=BOT_TOKEN))
    budget.start(RunningContext(budget.ANSWER_MARGIN_SECONDS - 0.2))
    # When a call is made, Then it is a ChatTimeout (502) and the platform saw no request
    with pytest.raises(ChatTimeout) as caught:
        client.get_guild(DEMO_GUILD)
    assert caught.value.status == 502
    assert slow_server.state.request_log == []
