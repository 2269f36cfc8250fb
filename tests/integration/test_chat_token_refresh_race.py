"""Two requests of one user that refresh the chat token at once: the platform rotates refresh tokens, so one
refresh is refused, and that request must use the winner's tokens instead of signing the user out.

Real threads against the sandbox over HTTP; the sandbox answers after 0.3 s so that both refreshes are in
flight together, as they are when two Lambda instances serve one user.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from svcconf.accounts.chat_account import accessible_guilds
from svcconf.api.auth import BearerUser
from svcconf.clock import utc_now
from svcconf.settings import get_settings
from svcconf.store.chat_links import ChatLinkRepository
from tests.helpers.deploy_worker import link as link_account
from tests.helpers.handlers import bearer

ALICE = "1191000000000000101"
USER = "web-user-race"


def repository() -> ChatLinkRepository:
    settings = get_settings()
    return ChatLinkRepository(settings.chat_links_table, settings.kms_key_id)


def link_alice_with_an_expired_access_token(invoke, platform) -> None:
    link_account(invoke, platform, USER, ALICE)
    link = repository().get(USER)
    repository().save(link.model_copy(update={"expires_at": utc_now() - timedelta(minutes=5)}))


def both_at_once(call, count: int = 2) -> list:
    """`call()` in `count` threads released together; what each returned or raised."""
    start = threading.Barrier(count)

    def run():
        start.wait()
        try:
            return call()
        except Exception as error:  # the test reads it
            return error

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: run(), range(count)))


def test_two_requests_that_refresh_at_once_both_answer_and_the_user_stays_signed_in(invoke, platform):
    # Given alice's link whose access token has expired, and a platform that takes 0.3 s per answer
    link_alice_with_an_expired_access_token(invoke, platform)
    before = repository().get(USER)
    platform.clear_log()
    platform.configure(latency_seconds=0.3)
    # When two of her requests list her servers at the same moment
    answers = both_at_once(lambda: accessible_guilds(BearerUser(sub=USER)))
    # Then both refreshed with the same refresh token, and the platform granted one and refused the other
    refreshes = platform.requests("POST", "/oauth2/token")
    assert sorted(entry["status"] for entry in refreshes) == [200, 400]
    # And both answered her six servers: the refused one used the tokens the other stored
    assert [len(answer) if isinstance(answer, list) else answer for answer in answers] == [6, 6]
    # And the stored link holds the granted tokens, which keep working: she is still signed in
    stored = repository().get(USER)
    assert stored.revision != before.revision
    assert stored.refresh_token.get_secret_value() in platform.refresh_tokens
    assert stored.access_token.get_secret_value() in platform.access_tokens
    platform.configure(latency_seconds=0)
    repository().save(stored.model_copy(update={"expires_at": utc_now() - timedelta(minutes=5)}))
    assert invoke("getChatGuilds", {}, headers=bearer(USER)).status == 200


def test_a_refresh_token_refused_without_a_concurrent_refresh_still_means_signing_in_again(invoke, platform):
    # Given alice's expired link whose refresh token the platform no longer knows (the app was deauthorised)
    link_alice_with_an_expired_access_token(invoke, platform)
    platform.refresh_tokens.clear()
    # When she lists her servers, Then she is told to sign in again, after the short wait for a concurrent refresh
    response = invoke("getChatGuilds", {}, headers=bearer(USER))
    assert response.status == 400
    assert response.body["message"].startswith("Sign in with the chat platform again")
