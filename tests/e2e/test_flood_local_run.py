"""A flood beside a deploy through `make run` (bench/fair_use.py times it): 300 parallel imports by the deploy's
user, then by 300 users, while the 40-role deploy runs. The service answers 429 (the user's limit) or 503 (the
users' share of the bot's rate) itself; the sandbox answers the bot no 429 at all, and the deploy succeeds."""

from __future__ import annotations

import pytest

from bench.fair_use import FLOOD_CALLS, deploy_beside_flood
from local.samples import large_community

pytestmark = pytest.mark.e2e

CONFIG = large_community(roles=40, categories=8, channels=120)


def test_one_users_flood_is_answered_by_its_limit_and_earns_the_bot_no_platform_429(record_property):
    run = deploy_beside_flood("one user", CONFIG)

    assert run["status"] == "succeeded"
    # Each call is answered: by the platform (the codes are made up: 404), by the user's limit, or, while every
    # sandbox of the function is busy, by the runner's own throttle (API Gateway's and Lambda's, in AWS)
    assert set(run["outcomes"]) <= {"404", "429 SVC_PLATFORM_READS_PER_MINUTE", "429 runner throttle"}
    assert sum(run["outcomes"].values()) == FLOOD_CALLS
    assert run["outcomes"]["429 SVC_PLATFORM_READS_PER_MINUTE"] > 0
    # The user's limit a clock minute, the deploy's own read counted in it; a slow machine's flood crosses a minute.
    assert run["flood_requests"] <= 30 * run["flood_minutes"]
    assert (run["flood_429"], run["all_429_during"], run["worker_429"]) == (0, 0, 0)
    record_property("figures", f"flood by one user: {dict(run['outcomes'])}, deploy {run['wall']:.1f} s")


def test_a_flood_of_many_users_stays_within_the_users_share_and_earns_the_bot_no_platform_429(record_property):
    run = deploy_beside_flood("many users", CONFIG)

    assert run["status"] == "succeeded"
    # CHAT_USER_REQUESTS_PER_SECOND (25) is counted on the service's clock when a request is claimed, the sandbox
    # logs it when it arrives: a request claimed at the end of a second may arrive in the next.
    assert run["flood_peak_per_second"] <= 25 + 5
    assert (run["flood_429"], run["all_429_during"], run["worker_429"]) == (0, 0, 0)
    assert set(run["outcomes"]) <= {"404", "503", "429 runner throttle"}
    assert sum(run["outcomes"].values()) == FLOOD_CALLS
    record_property("figures", f"flood by {FLOOD_CALLS} users: {dict(run['outcomes'])}, deploy {run['wall']:.1f} s")
