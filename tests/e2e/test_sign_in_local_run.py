"""A sign-in through `make run` the way a web app does it (chatAuth v4, issue 31 finding 7): the app asks the
service for a sign-in (its `state`), the browser goes to the authorize URL (the sandbox's, as the runner sets
it), the platform sends it back to the callback with a code and the state, and the app sends both with the same
bearer: linked. The same code sent with another bearer, or without the state, links nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import requests

from local.settings import LOCAL_JWT_SECRET
from local.tokens import issue_token
from tests.helpers.local_service import REQUEST_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"  # the runner's first CHAT_REDIRECT_URIS
ALICE_SESSION, CAROL_SESSION = "dev-access-alice", "dev-access-carol"  # the sandbox's signed-in browsers


def _bearer(service: LocalService, sub: str) -> dict[str, str]:
    env = service.state["env"]
    token = issue_token(
        LOCAL_JWT_SECRET, sub, issuer=env.get("SVC_JWT_ISSUER") or None, audience=env.get("SVC_JWT_AUDIENCE") or None
    )
    return {"Authorization": f"Bearer {token}"}


def _post(service: LocalService, operation: str, body: dict[str, Any], headers: dict[str, str]) -> requests.Response:
    return requests.post(service.url(operation), json=body, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)


def _browser_approves(authorize_url: str, session_token: str) -> dict[str, str]:
    """The browser at the platform's authorize page, its user approving the app: where the platform sends it."""
    answer = requests.get(
        authorize_url,
        headers={"Authorization": f"Bearer {session_token}"},
        allow_redirects=False,
        timeout=REQUEST_TIMEOUT_SECONDS,
    )
    assert answer.status_code == 302, answer.text
    callback = answer.headers["Location"]
    assert callback.startswith(REDIRECT_URI + "?"), callback
    return {key: values[-1] for key, values in parse_qs(urlsplit(callback).query).items()}


def test_a_web_app_s_sign_in_links_who_started_it_and_a_code_with_another_bearer_or_no_state_links_nothing(
    local_service: LocalService,
) -> None:
    victim, attacker = _bearer(local_service, "e2e-sign-in-victim"), _bearer(local_service, "e2e-sign-in-attacker")
    sandbox_root = local_service.state["chat_api_base_url"].removesuffix("/api/v10")

    # The app starts the victim's sign-in: a state, and the sandbox's authorize URL carrying it and a PKCE challenge
    started = _post(local_service, "chatAuth", {"redirect_uri": REDIRECT_URI}, victim)
    assert started.status_code == 200, started.text
    assert started.headers["Cache-Control"] == "no-store"
    state, authorize_url = started.json()["state"], started.json()["authorize_url"]
    assert authorize_url.startswith(f"{sandbox_root}/oauth2/authorize?")
    query = parse_qs(urlsplit(authorize_url).query)
    assert (query["state"], query["code_challenge_method"]) == ([state], ["S256"])
    # alice approves at the platform; the browser comes back to the callback with a code and the state
    callback = _browser_approves(authorize_url, ALICE_SESSION)
    assert callback["state"] == state

    # The same code and state with another bearer: refused on `state`, nothing linked to either
    hijack = _post(
        local_service, "chatAuth", {"code": callback["code"], "redirect_uri": REDIRECT_URI, "state": state}, attacker
    )
    assert hijack.status_code == 400, hijack.text
    assert [detail["field"] for detail in hijack.json()["details"]] == ["state"]
    assert hijack.headers["Cache-Control"] == "no-store"
    # The same code with the victim's bearer and no state: refused on `state`
    stateless = _post(local_service, "chatAuth", {"code": callback["code"], "redirect_uri": REDIRECT_URI}, victim)
    assert stateless.status_code == 400, stateless.text
    assert [detail["field"] for detail in stateless.json()["details"]] == ["state"]
    for bearer in (victim, attacker):
        unlinked = _post(local_service, "getChatGuilds", {}, bearer)
        assert unlinked.status_code == 400, unlinked.text
        assert unlinked.json()["message"].startswith("Sign in with the chat platform again")

    # The app completes the sign-in as it started it: linked, and the victim lists alice's servers
    linked = _post(
        local_service, "chatAuth", {"code": callback["code"], "redirect_uri": REDIRECT_URI, "state": state}, victim
    )
    assert linked.status_code == 200, linked.text
    assert (linked.json()["chatUsername"], linked.json()["linked"]) == ("alice", True)
    assert linked.headers["Cache-Control"] == "no-store"
    guilds = _post(local_service, "getChatGuilds", {}, victim)
    assert guilds.status_code == 200, guilds.text
    assert "Svc Demo Guild" in {guild["name"] for guild in guilds.json()["guilds"]}
    # The state was used up: the attacker's replay of it (with a code of carol's) links nothing
    carol_callback = _browser_approves(authorize_url, CAROL_SESSION)
    replay = _post(
        local_service,
        "chatAuth",
        {"code": carol_callback["code"], "redirect_uri": REDIRECT_URI, "state": state},
        victim,
    )
    assert (replay.status_code, replay.json()["details"][0]["field"]) == (400, "state")
    assert _post(local_service, "getChatGuilds", {}, attacker).status_code == 400
    print(
        f"\nsign-in through make run: started 200, authorize 302, another bearer {hijack.status_code}, no state "
        f"{stateless.status_code}, completed {linked.status_code} (linked alice), replay {replay.status_code}"
    )
