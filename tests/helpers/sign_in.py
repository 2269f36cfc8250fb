"""Linking a chat account the way a web app does it (chatAuth v4): a sign-in started for the bearer user (its
`state` and PKCE challenge in the authorize URL), a code the platform issues for that challenge, and the code
exchanged with the state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.helpers.handlers import REDIRECT_URI

# (operation, body) -> (status, body)
JsonCall = Callable[[str, dict[str, Any]], tuple[int, Any]]
# (chat user id, redirect uri, code challenge) -> a code the platform issued, as if the user had approved the app
MintCode = Callable[[str, str, str], str]


def authorize_query(authorize_url: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlsplit(authorize_url).query).items()}


def start(call: JsonCall, *, redirect_uri: str = REDIRECT_URI, replace: bool = True) -> tuple[str, str]:
    """A sign-in started for the caller's bearer: its state and the code challenge the authorize URL carries."""
    status, body = call("chatAuth", {"redirect_uri": redirect_uri, "replace": replace})
    assert status == 200, body
    query = authorize_query(body["authorize_url"])
    assert (query["state"], query["code_challenge_method"]) == (body["state"], "S256")
    return body["state"], query["code_challenge"]


def link_account(
    call: JsonCall, mint_code: MintCode, chat_user: str, *, redirect_uri: str = REDIRECT_URI, replace: bool = True
) -> dict[str, Any]:
    """The chat user's account linked to the caller's bearer user: the identity chatAuth answers."""
    state, challenge = start(call, redirect_uri=redirect_uri, replace=replace)
    code = mint_code(chat_user, redirect_uri, challenge)
    status, body = call("chatAuth", {"code": code, "redirect_uri": redirect_uri, "state": state})
    assert status == 200, body
    assert body["linked"] is True
    return body


def http_link(
    chat_auth_url: str,
    headers: dict[str, str],
    sandbox_root: str,
    chat_user: str,
    *,
    redirect_uri: str = REDIRECT_URI,
    timeout: float = 60,
) -> dict[str, Any]:
    """`link_account` against a running service over HTTP, the sandbox's control API issuing the code."""
    import requests

    def call(operation: str, body: dict[str, Any]) -> tuple[int, Any]:
        answer = requests.post(chat_auth_url, json=body, headers=headers, timeout=timeout)
        return answer.status_code, answer.json()

    def mint(chat_user_id: str, uri: str, challenge: str) -> str:
        body = {"user_id": chat_user_id, "redirect_uri": uri, "code_challenge": challenge}
        minted = requests.post(f"{sandbox_root}/_sandbox/oauth/codes", json=body, timeout=timeout)
        return str(minted.json()["code"])

    return link_account(call, mint, chat_user, redirect_uri=redirect_uri)
