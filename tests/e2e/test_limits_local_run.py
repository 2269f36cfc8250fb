"""Limits per user through `make run` with the limits set low in its environment: the request past a limit is 429
with `Retry-After`, another user is answered at once, and after the wait the first user is answered again, for
svcAiChat turns, platform reads (import, export, dry run, invite validation) and the day's AI tokens."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from local.settings import LOCAL_JWT_SECRET
from local.tokens import issue_token
from tests.helpers.e2e_deployer import Deployer
from tests.helpers.local_service import LocalService, post_once_warm, running

pytestmark = pytest.mark.e2e

TURNS_PER_MINUTE = 2
READS_PER_MINUTE = 4
# A turn of the local model reserves about 32,000 of the day's tokens before its call (its estimate, max_tokens and a
# repair round: contract v4 §4 svcAiChat, issue 31 finding 5) and spends about 11,000 to 15,000: the day holds one
# turn's reservation, not a second's beside the first's spend (which "check first, spend after" would let through).
TOKENS_PER_DAY = 38_000
DEMO = "1191000000000001001"


@contextmanager
def runner_with(directory: Path, **limits: int) -> Iterator[LocalService]:
    """`make run` with the local model answering at once and these limits in its environment; the functions' clock
    is the chat sandbox's, which the tests move instead of waiting for a minute to pass."""
    environ = {"SVC_AI_PROVIDER": "local", "SVC_LOCAL_MODEL_TOKENS_PER_SECOND": "0", "SVC_LOCAL_SHARED_CLOCK": "1"}
    environ |= {name: str(value) for name, value in limits.items()}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ANTHROPIC_API_KEY", raising=False)
        patch.delenv("ANTHROPIC_BASE_URL", raising=False)
        with running(directory, environ=environ) as (state, _started, log_path):
            yield LocalService(state=state, first_answer_seconds=0.0, log_path=log_path)


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    limits = {"SVC_AI_TURNS_PER_MINUTE": TURNS_PER_MINUTE, "SVC_PLATFORM_READS_PER_MINUTE": READS_PER_MINUTE}
    with runner_with(tmp_path_factory.mktemp("limited"), **limits) as service:
        yield service


@pytest.fixture(scope="module")
def few_tokens(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    with runner_with(tmp_path_factory.mktemp("few-tokens"), SVC_AI_TOKENS_PER_DAY=TOKENS_PER_DAY) as service:
        yield service


def token(sub: str) -> str:
    return issue_token(LOCAL_JWT_SECRET, sub)


def call(service: LocalService, operation: str, body: dict[str, Any], bearer: str) -> requests.Response:
    return post_once_warm(service.url(operation), body, {"Authorization": f"Bearer {bearer}"})


def turn(service: LocalService, bearer: str, text: str = "A server for my chess club") -> requests.Response:
    return call(service, "svcAiChat", {"messages": [{"role": "user", "content": text}]}, bearer)


def move_clock(service: LocalService, seconds: float) -> None:
    """Moves the runner's clock (the chat sandbox's, which the functions follow) `seconds` ahead."""
    moved = requests.post(f"{service.sandbox_url}/_sandbox/clock", json={"advance_seconds": seconds}, timeout=30)
    assert moved.status_code == 200, moved.text


def fresh_minute(service: LocalService) -> None:
    """Moves the clock to the start of its next minute: the counters' windows are the clock's minutes, and a
    test's requests must fall in one."""
    now = requests.get(f"{service.sandbox_url}/_sandbox/clock", timeout=30).json()["now"]
    move_clock(service, 60 - now % 60 + 0.2)


def assert_refused(response: requests.Response, limit: str) -> int:
    assert response.status_code == 429, response.text
    body = response.json()
    retry_after = int(response.headers["Retry-After"])
    assert body["limit"] == limit
    assert body["retry_after"] == retry_after
    assert limit in body["message"]
    assert body["frees_at"] in body["message"]
    return retry_after


def test_turns_and_platform_reads_past_their_minute_are_429_until_it_ends(limited: LocalService, record_property):
    ana, ben = token("e2e-ana"), limited.state["user_token"]
    deployer = Deployer(limited)
    deployer.link()  # the dev user (ben) manages the demo guild: export and dry run
    turn(limited, token("e2e-warm-up"))  # the AI function's first sandbox is up
    fresh_minute(limited)
    # Turns: ana's first two are answered, the third is 429
    assert [turn(limited, ana).status_code for _ in range(TURNS_PER_MINUTE)] == [200] * TURNS_PER_MINUTE
    turn_wait = assert_refused(turn(limited, ana), "SVC_AI_TURNS_PER_MINUTE")
    assert turn(limited, token("e2e-cat")).status_code == 200  # another user at once
    # Platform reads: ben's import, export, dry run and invite validation, then the fifth is 429
    exported = call(limited, "deployToChat", {"action": "export", "guild_id": DEMO}, ben)
    assert exported.status_code == 200, exported.text
    dry_run = {
        "action": "deploy",
        "dry_run": True,
        "guild_id": DEMO,
        "config": exported.json()["config"],
        "project_id": "limits",
        "project_name": "Limits",
    }
    reads = [
        call(limited, "deployToChat", {"action": "import", "template": "svcStudyHall"}, ben),
        call(limited, "deployToChat", dry_run, ben),
        call(limited, "validateChatInvite", {"invite": "svcDemo"}, ben),
    ]
    assert [read.status_code for read in reads] == [200, 200, 200], [read.text for read in reads]
    read_wait = assert_refused(
        call(limited, "deployToChat", {"action": "import", "template": "svcGameNight"}, ben),
        "SVC_PLATFORM_READS_PER_MINUTE",
    )
    assert call(limited, "validateChatInvite", {"invite": "svcDemo"}, ana).status_code == 200  # another user
    record_property("figures", f"limits through make run: turn 429 Retry-After {turn_wait} s, read 429 {read_wait} s")

    move_clock(limited, max(turn_wait, read_wait) + 0.5)  # the minute passes

    assert turn(limited, ana).status_code == 200
    assert call(limited, "deployToChat", {"action": "import", "template": "svcGameNight"}, ben).status_code == 200


def test_past_the_days_tokens_a_user_is_429_until_midnight_and_others_are_answered(few_tokens: LocalService):
    dee = token("e2e-dee")
    first = turn(few_tokens, dee)
    assert first.status_code == 200, first.text  # its reservation fits the day; what it spent stays counted

    refused = turn(few_tokens, dee, "Add a voice channel")

    retry_after = assert_refused(refused, "SVC_AI_TOKENS_PER_DAY")
    seconds_to_midnight = 86_400 - int(time.time()) % 86_400
    assert abs(retry_after - seconds_to_midnight) <= 5
    assert refused.json()["frees_at"].endswith("T00:00:00Z")
    assert turn(few_tokens, token("e2e-eve")).status_code == 200


def test_parallel_turns_of_one_user_across_the_functions_sandboxes_stop_at_the_limit(limited: LocalService):
    """The runner's sandboxes are separate processes (Lambda instances): the counter in moto is shared by all."""
    fay = token("e2e-fay")
    turn(limited, token("e2e-warm-up"))  # a sandbox is up; the rest start on demand
    fresh_minute(limited)
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda _: turn(limited, fay), range(6)))
    answered = [answer for answer in answers if answer.status_code == 200]
    refused = [answer for answer in answers if answer.status_code == 429 and answer.json().get("limit")]
    assert (len(answered), len(refused)) == (TURNS_PER_MINUTE, 6 - TURNS_PER_MINUTE)
