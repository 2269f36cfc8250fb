"""Who is calling (Bot, Bearer, or the OAuth client in HTTP Basic), the OAuth2 token endpoint and its codes.

The token endpoint answers in RFC 6749's shape (`{"error": "invalid_grant", ...}`), not the platform's
`{code, message}`, and takes only form-encoded bodies (docs/04-chat-platform.md).
"""

from __future__ import annotations

import base64
import secrets
from typing import Any, NamedTuple, Protocol
from urllib.parse import parse_qs, unquote_plus

from local.chat_sandbox.protocol import Call, Caller, PlatformError, missing_access, unauthorized

DEFAULT_SCOPE = "identify email guilds"


class Grants(NamedTuple):
    """The OAuth codes and tokens the platform has issued, by code or token."""

    codes: dict[str, dict[str, Any]]
    access_tokens: dict[str, dict[str, Any]]
    refresh_tokens: dict[str, dict[str, Any]]


class OAuthState(Protocol):
    """What this module reads and changes of the sandbox's state (state.py's SandboxState, which imports this)."""

    application: dict[str, Any]
    person_tokens: dict[str, str]  # a second actor's token -> their user id (actors.py)
    bot: dict[str, Any]
    users: dict[str, dict[str, Any]]
    codes: dict[str, dict[str, Any]]
    access_tokens: dict[str, dict[str, Any]]
    refresh_tokens: dict[str, dict[str, Any]]

    def now(self) -> float: ...


def _oauth_error(status: int, error: str, description: str | None = None) -> PlatformError:
    body = {"error": error}
    if description:
        body["error_description"] = description
    return PlatformError(status, body)


def _grant(user_id: str, redirect_uri: str, scope: str, expires_at: float) -> dict[str, Any]:
    return {"user_id": user_id, "redirect_uri": redirect_uri, "scope": scope, "expires_at": expires_at, "used": False}


def load_grants(application: dict[str, Any], oauth: dict[str, Any], now: float) -> Grants:
    """The fixture's pre-issued codes and tokens (times relative to `now`)."""
    scope = application.get("default_scope", DEFAULT_SCOPE)
    code_ttl = float(application.get("code_ttl_seconds", 600))
    codes = {
        entry["code"]: _grant(
            entry["user_id"],
            entry.get("redirect_uri", application["redirect_uris"][0]),
            entry.get("scope", scope),
            now + float(entry.get("expires_in_seconds", code_ttl)),
        )
        for entry in oauth.get("codes", [])
    }
    grants = Grants(codes, access_tokens={}, refresh_tokens={})
    for entry in oauth.get("tokens", []):
        token_scope = entry.get("scope", scope)
        grants.access_tokens[entry["access_token"]] = {
            "user_id": entry["user_id"],
            "scope": token_scope,
            "expires_at": now + float(entry.get("expires_in_seconds", 604800)),
        }
        if entry.get("refresh_token"):
            grants.refresh_tokens[entry["refresh_token"]] = {"user_id": entry["user_id"], "scope": token_scope}
    return grants


def mint_code(state: OAuthState, user_id: str, redirect_uri: str | None, scope: str | None) -> str:
    if user_id not in state.users:
        raise KeyError(f"unknown user {user_id}")
    application = state.application
    code = "sbx-" + secrets.token_urlsafe(18)
    state.codes[code] = _grant(
        user_id,
        redirect_uri or application["redirect_uris"][0],
        scope or application.get("default_scope", DEFAULT_SCOPE),
        state.now() + float(application.get("code_ttl_seconds", 600)),
    )
    return code


def authenticate(state: OAuthState, call: Call, who: str) -> Caller:
    """The caller of a route that accepts `who`: "optional" | "any" | "bot" | "client"."""
    header = call.headers.get("authorization", "")
    scheme, _, credential = header.partition(" ")
    if who == "client":
        return _authenticate_client(state, call, scheme, credential)
    if not header:
        if who == "optional":
            return Caller("anonymous")
        raise unauthorized()
    if scheme == "Bot":
        if not secrets.compare_digest(credential.encode(), str(state.bot["token"]).encode()):
            raise unauthorized()
        return Caller("bot", "Bot", state.bot["id"])
    if scheme == "Bearer":
        grant = state.access_tokens.get(credential)
        if grant is None or grant["expires_at"] <= state.now():
            raise unauthorized()
        if who == "bot":
            raise missing_access()  # a user token cannot read guild structure
        return Caller("user", "Bearer", grant["user_id"], tuple(grant["scope"].split()))
    person = state.person_tokens.get(header) if not credential else None  # a person's token has no scheme
    if person is not None:
        return Caller("person", None, person)
    raise unauthorized()


def _authenticate_client(state: OAuthState, call: Call, scheme: str, credential: str) -> Caller:
    content_type = call.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        # Observed: a JSON body leaves the form empty, so the grant type reads as missing.
        raise _oauth_error(400, "unsupported_grant_type", "Grant type None is not supported")
    form = {key: values[-1] for key, values in parse_qs(call.body.decode("utf-8", "replace")).items()}
    client_id, client_secret = form.get("client_id"), form.get("client_secret")
    if scheme == "Basic":
        try:
            decoded = base64.b64decode(credential, validate=True).decode()
        except ValueError:
            raise _oauth_error(401, "invalid_client") from None
        raw_id, _, raw_secret = decoded.partition(":")
        client_id, client_secret = unquote_plus(raw_id), unquote_plus(raw_secret)
    expected_id = str(state.application["client_id"])
    expected_secret = str(state.application["client_secret"])
    if not (
        client_id
        and client_secret
        and secrets.compare_digest(client_id.encode(), expected_id.encode())
        and secrets.compare_digest(client_secret.encode(), expected_secret.encode())
    ):
        raise _oauth_error(401, "invalid_client")
    call.query = {**call.query, **form}  # the token route reads the form from here
    return Caller("client", scheme or None)


def token(state: OAuthState, call: Call) -> tuple[int, Any]:
    """`POST /oauth2/token`: exchange a code (single use) or a refresh token (rotated) for new tokens."""
    form = call.query
    grant_type = form.get("grant_type")
    now = state.now()
    if grant_type == "authorization_code":
        if not form.get("code"):
            raise _oauth_error(400, "invalid_request", 'Missing "code" in request.')
        grant = state.codes.get(form["code"])
        if grant is None or grant["used"] or grant["expires_at"] <= now:
            raise _oauth_error(400, "invalid_grant", 'Invalid "code" in request.')
        if form.get("redirect_uri") != grant["redirect_uri"]:
            raise _oauth_error(400, "invalid_grant", 'Invalid "redirect_uri" in request.')
        grant["used"] = True
        user_id, scope = grant["user_id"], grant["scope"]
    elif grant_type == "refresh_token":
        old = state.refresh_tokens.pop(form.get("refresh_token") or "", None)
        if old is None:
            raise _oauth_error(400, "invalid_grant", 'Invalid "refresh_token" in request.')
        user_id, scope = old["user_id"], old["scope"]
    else:
        raise _oauth_error(400, "unsupported_grant_type", f"Grant type {grant_type} is not supported")
    ttl = int(state.application.get("access_token_ttl_seconds", 604800))
    access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    state.access_tokens[access] = {"user_id": user_id, "scope": scope, "expires_at": now + ttl}
    state.refresh_tokens[refresh] = {"user_id": user_id, "scope": scope}
    return 200, {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ttl,
        "refresh_token": refresh,
        "scope": scope,
    }
