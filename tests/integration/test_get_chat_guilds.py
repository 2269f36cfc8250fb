"""getChatGuilds against the sandbox: the linked user's servers and refreshed tokens (test_log_hygiene.py: what is
never logged)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import SecretStr

from svcconf.clock import utc_now
from svcconf.settings import get_settings
from svcconf.store.chat_links import ChatLink, ChatLinkRepository
from tests.helpers.deploy_worker import link
from tests.helpers.handlers import CDN, bearer

ALICE = "1191000000000000101"
BOB = "1191000000000000102"
DEMO, WORKSHOP, QUIET, LOCKED, BUILD, RIGHTS_LAB = (f"119100000000000100{n}" for n in range(1, 7))


def link_alice(invoke, platform, user: str = "web-user-1") -> dict:
    return link(invoke, platform, user, ALICE)


def guilds(invoke, user: str = "web-user-1"):
    return invoke("getChatGuilds", {}, headers=bearer(user))


def store_link(user: str, access_token: str, refresh_token: str | None, expires_in: timedelta) -> None:
    settings = get_settings()
    ChatLinkRepository(settings.chat_links_table, settings.kms_key_id).save(
        ChatLink(
            user_id=user,
            chat_user_id=BOB,
            chat_username="bob",
            access_token=SecretStr(access_token),
            refresh_token=SecretStr(refresh_token) if refresh_token else None,
            expires_at=utc_now() + expires_in,
            linked_at=utc_now(),
        )
    )


def stored_link(user: str) -> ChatLink:
    settings = get_settings()
    return ChatLinkRepository(settings.chat_links_table, settings.kms_key_id).get(user)


def test_linked_user_sees_their_servers_with_manage_rights_and_bot_presence(invoke, platform):
    link_alice(invoke, platform)
    response = guilds(invoke)
    assert response.status == 200
    by_id = {guild["id"]: guild for guild in response.body["guilds"]}
    assert set(by_id) == {DEMO, WORKSHOP, QUIET, LOCKED, BUILD, RIGHTS_LAB}
    assert by_id[DEMO] == {
        "id": DEMO,
        "name": "Svc Demo Guild",
        "icon": f"{CDN}/icons/{DEMO}/1f0b4a3c9d2e8f7a6b5c4d3e2f1a0b9c.png",
        "owner": True,
        "permissions": by_id[DEMO]["permissions"],
        "can_manage": True,
        "bot_present": True,
    }
    assert by_id[DEMO]["permissions"].isdigit()
    assert (by_id[WORKSHOP]["owner"], by_id[WORKSHOP]["can_manage"], by_id[WORKSHOP]["bot_present"]) == (
        False,
        False,
        True,
    )
    assert (by_id[WORKSHOP]["icon"], by_id[QUIET]["bot_present"], by_id[QUIET]["can_manage"]) == (None, False, True)
    assert (by_id[LOCKED]["can_manage"], by_id[LOCKED]["bot_present"]) == (True, True)
    # The user's list came with the user's token, the bot's presence with the bot's
    calls = platform.requests("GET", "/users/@me/guilds")
    assert sorted(call["auth"] for call in calls) == ["Bearer", "Bot"]


def test_user_without_a_linked_chat_account_is_told_to_sign_in_again(invoke, platform):
    response = guilds(invoke, "never-linked")
    assert response.status == 400
    assert response.body["message"].startswith("Sign in with the chat platform again")
    assert platform.requests() == []


def test_expired_access_token_is_refreshed_and_the_new_tokens_stored(invoke, platform):
    # Given bob's link whose access token expired yesterday
    store_link("web-user-2", "dev-access-bob-expired", "dev-refresh-bob", timedelta(days=-1))
    # When he lists his servers
    response = guilds(invoke, "web-user-2")
    # Then the token was refreshed first, the call succeeded, and the new tokens were stored encrypted
    assert response.status == 200
    assert {guild["id"] for guild in response.body["guilds"]} >= {WORKSHOP}
    refresh = platform.requests("POST", "/oauth2/token")
    assert len(refresh) == 1
    link = stored_link("web-user-2")
    assert link.access_token.get_secret_value() != "dev-access-bob-expired"
    assert link.expires_at > utc_now() + timedelta(days=6)


def test_token_the_platform_refuses_is_refreshed_once_and_retried(invoke, platform):
    # Given a link that looks valid to us but whose access token the platform no longer knows
    store_link("web-user-2", "revoked-access-token", "dev-refresh-bob", timedelta(days=3))
    response = guilds(invoke, "web-user-2")
    assert response.status == 200
    assert len(platform.requests("POST", "/oauth2/token")) == 1


def test_refused_token_with_a_refused_refresh_means_signing_in_again(invoke, platform):
    store_link("web-user-2", "revoked-access-token", "revoked-refresh-token", timedelta(days=3))
    response = guilds(invoke, "web-user-2")
    assert response.status == 400
    assert response.body["message"].startswith("Sign in with the chat platform again")


def test_a_link_whose_refresh_the_platform_refused_is_not_used_again_until_a_new_sign_in(invoke, platform):
    # Given bob's link whose tokens the platform revoked (issue 31, finding 8: each call cost a 401 and a refresh)
    store_link("web-user-2", "revoked-access-token", "revoked-refresh-token", timedelta(days=3))
    # When he lists his servers three times
    answers = [guilds(invoke, "web-user-2") for _ in range(3)]
    # Then each is a 400 telling him to sign in again, and only the first reached the platform
    assert [answer.status for answer in answers] == [400, 400, 400]
    assert all(answer.body["message"].startswith("Sign in with the chat platform again") for answer in answers)
    assert len(platform.requests("GET", "/users/@me/guilds")) == 1
    assert len(platform.requests("POST", "/oauth2/token")) == 1
    assert stored_link("web-user-2").refused_at is not None
    # And a new sign-in links him anew: the mark is gone and his servers are listed
    platform.clear_log()
    link_alice(invoke, platform, "web-user-2")
    assert stored_link("web-user-2").refused_at is None
    assert guilds(invoke, "web-user-2").status == 200


def test_a_link_replaced_while_its_refresh_was_refused_is_not_marked(invoke, platform):
    store_link("web-user-2", "revoked-access-token", "revoked-refresh-token", timedelta(days=3))
    settings = get_settings()
    repository = ChatLinkRepository(settings.chat_links_table, settings.kms_key_id)
    read = repository.get("web-user-2")
    store_link("web-user-2", "dev-access-carol", None, timedelta(days=3))  # a sign-in meanwhile
    assert repository.mark_refused(read, utc_now()) is False
    assert stored_link("web-user-2").refused_at is None
    assert guilds(invoke, "web-user-2").status == 200


def test_get_chat_guilds_counts_as_a_platform_read(invoke, platform, monkeypatch):
    # Given a limit of 2 platform reads a minute (issue 31, finding 8: getChatGuilds had none)
    from svcconf import limits

    monkeypatch.setattr(limits, "_refused_until", {})
    monkeypatch.setenv("SVC_PLATFORM_READS_PER_MINUTE", "2")
    get_settings.cache_clear()
    link_alice(invoke, platform)
    platform.clear_log()
    answers = [guilds(invoke) for _ in range(4)]
    assert [answer.status for answer in answers] == [200, 200, 429, 429]
    assert answers[2].body["limit"] == "SVC_PLATFORM_READS_PER_MINUTE"
    assert 1 <= int(answers[2].headers["retry-after"]) <= 60
    # Only the two counted requests reached the platform (the user's list, and the bot's guild set once)
    assert len(platform.requests("GET", "/users/@me/guilds")) == 3


@pytest.mark.parametrize("authorization", [None, "Bearer nope", "Basic abc"])
def test_missing_or_invalid_bearer_token_is_401(invoke, platform, authorization):
    headers = {"Authorization": authorization} if authorization else None
    response = invoke("getChatGuilds", {}, headers=headers, drop_headers=() if headers else ("Authorization",))
    assert response.status == 401
    assert response.body["error"] == "Unauthorized"


def test_platform_failure_is_502(invoke, platform):
    link_alice(invoke, platform)
    platform.configure(error_5xx_probability=1.0)
    response = guilds(invoke)
    assert response.status == 502
    assert response.body["error"] == "Error"


def test_platform_rate_limiting_30_percent_of_requests_still_answers(invoke, platform):
    link_alice(invoke, platform)
    platform.configure(rate_limit_probability=0.3, seed=5, fault_retry_after=[0.01, 0.05])
    answers = [guilds(invoke) for _ in range(10)]
    assert all(answer.status == 200 and len(answer.body["guilds"]) == 6 for answer in answers)
