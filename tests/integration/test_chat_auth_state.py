"""chatAuth v4: sign-in bound to who started it (issue 31, finding 7). A state minted by the service for a bearer
user, single use, 10 minutes, with PKCE (the verifier stays in the service); the sandbox's authorize route issues
the code as the platform does, and its token endpoint needs the verifier. Every answer: `Cache-Control: no-store`."""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
import requests

from svcconf.accounts import sign_in
from svcconf.clock import utc_now
from svcconf.settings import get_settings
from tests.helpers.chat_sandbox import ALICE_TOKEN, CAROL_TOKEN
from tests.helpers.deploy_worker import link
from tests.helpers.handlers import REDIRECT_URI, bearer
from tests.helpers.sign_in import authorize_query

ALICE = "1191000000000000101"
CAROL = "1191000000000000103"
VICTIM, ATTACKER = "web-victim", "web-attacker"


def links() -> dict[str, dict]:
    table = boto3.resource("dynamodb").Table(get_settings().chat_links_table)
    return {item["user_id"]: item for item in table.scan()["Items"]}


def start(invoke, user: str, **extra) -> dict:
    response = invoke("chatAuth", {"redirect_uri": REDIRECT_URI, **extra}, headers=bearer(user))
    assert response.status == 200, response.body
    assert response.headers["cache-control"] == "no-store"
    return response.body


def authorize(platform_server, authorize_url: str, chat_token: str) -> dict[str, str]:
    """The browser at the platform's authorize page, signed in as the owner of `chat_token`: where it is sent."""
    sandbox_url = authorize_url.replace(authorize_url.split("/oauth2/", 1)[0], platform_server.base_url)
    answer = requests.get(
        sandbox_url, headers={"Authorization": f"Bearer {chat_token}"}, allow_redirects=False, timeout=10
    )
    assert answer.status_code == 302, answer.text
    location = answer.headers["Location"]
    assert location.startswith(REDIRECT_URI + "?")
    return {key: values[-1] for key, values in parse_qs(urlsplit(location).query).items()}


def finish(invoke, user: str | None, code: str, state: str | None, **extra):
    body = {"code": code, "redirect_uri": REDIRECT_URI, **({"state": state} if state else {}), **extra}
    if user is None:
        return invoke("chatAuth", body, drop_headers=("Authorization",))
    return invoke("chatAuth", body, headers=bearer(user))


def test_a_sign_in_started_for_a_user_answers_the_authorize_url_with_its_state_and_a_pkce_challenge(invoke, platform):
    started = start(invoke, VICTIM)
    query = authorize_query(started["authorize_url"])
    assert started["authorize_url"].startswith(get_settings().chat_authorize_url + "?")
    assert query == {
        "client_id": platform.application["client_id"],
        "response_type": "code",
        "redirect_uri": REDIRECT_URI,
        "scope": "identify email guilds",
        "state": started["state"],
        "code_challenge": query["code_challenge"],
        "code_challenge_method": "S256",
    }
    assert len(started["state"]) >= 43
    assert len(query["code_challenge"]) == 43
    # The verifier never leaves the service: stored with the state, under the state's digest, not the state
    [item] = boto3.resource("dynamodb").Table(get_settings().sign_in_states_table).scan()["Items"]
    assert item["state_key"] == "sha256:" + hashlib.sha256(started["state"].encode()).hexdigest()
    assert started["state"] not in repr(item)
    verifier = item["code_verifier"]
    assert 43 <= len(verifier) <= 128
    assert verifier not in repr(started)
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert digest == query["code_challenge"]
    assert (item["sub"], item["replace"]) == (VICTIM, False)
    assert links() == {}
    assert platform.requests("POST", "/oauth2/token") == []


def test_the_web_app_s_sign_in_links_the_user_who_started_it(invoke, platform, platform_server):
    # Given a sign-in started by the victim's web session, approved by alice at the platform
    started = start(invoke, VICTIM)
    redirect = authorize(platform_server, started["authorize_url"], ALICE_TOKEN)
    assert redirect["state"] == started["state"]
    # When the app sends the code back with the state and the same bearer
    response = finish(invoke, VICTIM, redirect["code"], redirect["state"])
    # Then alice is linked to the victim, and the code was exchanged with the PKCE verifier
    assert response.status == 200, response.body
    assert response.headers["cache-control"] == "no-store"
    assert (response.body["chatUserId"], response.body["linked"]) == (ALICE, True)
    assert links()[VICTIM]["chat_user_id"] == ALICE
    [exchange] = platform.requests("POST", "/oauth2/token")
    assert "code_verifier" in exchange["form_keys"]


def test_a_code_sent_with_another_user_s_bearer_links_nothing(invoke, platform, platform_server):
    # Given the attacker's own sign-in, approved by carol (the attacker's chat account)
    started = start(invoke, ATTACKER)
    redirect = authorize(platform_server, started["authorize_url"], CAROL_TOKEN)
    # When the code and the state are sent with the victim's bearer (issue 31, finding 7)
    hijack = finish(invoke, VICTIM, redirect["code"], redirect["state"])
    # Then it is refused on `state`, nothing is linked, and the platform was never asked to exchange the code
    assert hijack.status == 400
    assert [detail["field"] for detail in hijack.body["details"]] == ["state"]
    assert hijack.headers["cache-control"] == "no-store"
    assert links() == {}
    assert platform.requests("POST", "/oauth2/token") == []
    # And the attacker's own request still completes (only a completed exchange uses the state up)
    assert finish(invoke, ATTACKER, redirect["code"], redirect["state"]).status == 200
    assert set(links()) == {ATTACKER}


def test_a_code_with_a_bearer_and_no_state_links_nothing(invoke, platform):
    # Today's main linked any code to any bearer: a victim's bearer plus dave's code listed dave's servers
    response = finish(invoke, VICTIM, platform.mint_code(CAROL), None)
    assert response.status == 400
    assert response.body["details"][0]["field"] == "state"
    assert response.headers["cache-control"] == "no-store"
    assert links() == {}
    assert platform.requests("POST", "/oauth2/token") == []


def test_a_state_is_used_once(invoke, platform, platform_server):
    started = start(invoke, VICTIM)
    redirect = authorize(platform_server, started["authorize_url"], ALICE_TOKEN)
    assert finish(invoke, VICTIM, redirect["code"], redirect["state"]).status == 200
    again = authorize(platform_server, started["authorize_url"], CAROL_TOKEN)  # a second code for the same state
    replay = finish(invoke, VICTIM, again["code"], again["state"])
    assert (replay.status, replay.body["details"][0]["field"]) == (400, "state")
    assert links()[VICTIM]["chat_user_id"] == ALICE


def test_a_state_expires_after_10_minutes(invoke, platform, platform_server, monkeypatch):
    started = start(invoke, VICTIM)
    redirect = authorize(platform_server, started["authorize_url"], ALICE_TOKEN)
    later = utc_now() + timedelta(minutes=10, seconds=1)
    monkeypatch.setattr(sign_in, "utc_now", lambda: later)
    response = finish(invoke, VICTIM, redirect["code"], redirect["state"])
    assert (response.status, response.body["details"][0]["field"]) == (400, "state")
    assert links() == {}


def test_a_state_without_a_bearer_or_with_another_issuer_links_nothing(invoke, platform, platform_server):
    started = start(invoke, VICTIM)
    redirect = authorize(platform_server, started["authorize_url"], ALICE_TOKEN)
    anonymous = finish(invoke, None, redirect["code"], redirect["state"])
    assert (anonymous.status, anonymous.body["details"][0]["field"]) == (400, "state")
    body = {"code": redirect["code"], "redirect_uri": REDIRECT_URI, "state": redirect["state"]}
    other_issuer = invoke("chatAuth", body, headers=bearer(VICTIM, issuer="https://elsewhere.example"))
    assert (other_issuer.status, other_issuer.body["details"][0]["field"]) == (400, "state")
    assert links() == {}


def test_an_existing_link_is_replaced_only_when_the_sign_in_asks_for_it(invoke, platform, platform_server):
    link(invoke, platform, VICTIM, ALICE)
    # Without replace: the mint is a 409 naming the linked account, before anyone signs in
    refused = invoke("chatAuth", {"redirect_uri": REDIRECT_URI}, headers=bearer(VICTIM))
    assert refused.status == 409
    assert "alice" in refused.body["message"]
    assert "replace" in refused.body["message"]
    assert refused.headers["cache-control"] == "no-store"
    # With replace: carol replaces alice
    started = start(invoke, VICTIM, replace=True)
    redirect = authorize(platform_server, started["authorize_url"], CAROL_TOKEN)
    assert finish(invoke, VICTIM, redirect["code"], redirect["state"]).status == 200
    assert links()[VICTIM]["chat_user_id"] == CAROL


def test_the_redirect_uri_is_the_one_the_sign_in_was_started_with(invoke, platform, platform_server, monkeypatch):
    monkeypatch.setenv("CHAT_REDIRECT_URIS", f"{REDIRECT_URI},https://app.example/callback")
    get_settings.cache_clear()
    started = start(invoke, VICTIM)
    redirect = authorize(platform_server, started["authorize_url"], ALICE_TOKEN)
    body = {"code": redirect["code"], "redirect_uri": "https://app.example/callback", "state": redirect["state"]}
    response = invoke("chatAuth", body, headers=bearer(VICTIM))
    assert (response.status, response.body["details"][0]["field"]) == (400, "redirect_uri")
    assert links() == {}


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        ({"code": "x", "redirect_uri": REDIRECT_URI}, {"Authorization": "Bearer not-a-jwt"}),  # 401
        ({"redirect_uri": "https://evil.example/cb"}, None),  # 400
    ],
)
def test_every_answer_is_no_store(invoke, platform, body, headers):
    response = invoke("chatAuth", body, headers=headers)
    assert response.status in (400, 401)
    assert response.headers["cache-control"] == "no-store"
