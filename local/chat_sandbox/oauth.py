"""Who is calling (Bot, Bearer, or the OAuth client in HTTP Basic), the OAuth2 token endpoint and its codes.

The token endpoint answers in RFC 6749's shape (`{"error": "invalid_grant", ...}`), not the platform's
`{code, message}`, and takes only form-encoded bodies (docs/04-chat-platform.md).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol
from urllib.parse import parse_qs, unquote_plus, urlencode

from local.chat_sandbox.protocol import Call, Caller, PlatformError, missing_access, unauthorized

DEFAULT_SCOPE = "identify email guilds"
# PKCE (RFC 7636), as the platform is observed to take it (chat-platform facts, "OAuth2 PKCE"): S256 only, a
# verifier of 43-128 unreserved characters; a challenge is the verifier's SHA-256 in unpadded base64url (43).
PKCE_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
PKCE_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


@dataclass(frozen=True)
class Redirect:
    """A route's answer that sends the browser on (302 with `Location`)."""

    location: str


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


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


def _grant(
    user_id: str, redirect_uri: str, scope: str, expires_at: float, code_challenge: str | None = None
) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "expires_at": expires_at,
        "used": False,
        "code_challenge": code_challenge,
    }


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


def mint_code(
    state: OAuthState,
    user_id: str,
    redirect_uri: str | None,
    scope: str | None,
    code_challenge: str | None = None,
) -> str:
    """A code as the user's approval issues it; with `code_challenge` (S256) its exchange needs the verifier."""
    if user_id not in state.users:
        raise KeyError(f"unknown user {user_id}")
    application = state.application
    code = "sbx-" + secrets.token_urlsafe(18)
    state.codes[code] = _grant(
        user_id,
        redirect_uri or application["redirect_uris"][0],
        scope or application.get("default_scope", DEFAULT_SCOPE),
        state.now() + float(application.get("code_ttl_seconds", 600)),
        code_challenge,
    )
    return code


def authorize(state: OAuthState, call: Call) -> tuple[int, Any]:
    """`GET /oauth2/authorize`: the user (signed in to the platform: here, their own Bearer token stands for the
    browser's session) approves the application, and the browser is sent to `redirect_uri` with a code and the
    `state` unchanged. `code_challenge` (S256 only) binds the code to its verifier."""
    if call.caller.kind != "user" or call.caller.user_id is None:
        raise unauthorized()
    query = call.query
    application = state.application
    if query.get("client_id") != str(application["client_id"]):
        raise _oauth_error(400, "invalid_client", "Unknown client_id.")
    redirect_uri = query.get("redirect_uri") or application["redirect_uris"][0]
    if redirect_uri not in application["redirect_uris"]:
        raise _oauth_error(400, "invalid_request", "Invalid OAuth2 redirect_uri")
    if query.get("response_type") != "code":
        raise _oauth_error(400, "unsupported_response_type", "Only response_type=code is supported.")
    challenge = query.get("code_challenge")
    if challenge is not None and (
        query.get("code_challenge_method") != "S256" or not PKCE_CHALLENGE.fullmatch(challenge)
    ):
        raise _oauth_error(400, "invalid_request", "code_challenge must be S256 of a verifier (43 characters).")
    code = mint_code(state, call.caller.user_id, redirect_uri, query.get("scope"), challenge)
    answer = {"code": code, **({"state": query["state"]} if "state" in query else {})}
    separator = "&" if "?" in redirect_uri else "?"
    return 302, Redirect(f"{redirect_uri}{separator}{urlencode(answer)}")


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


def _check_verifier(challenge: str | None, verifier: str | None) -> None:
    """PKCE: a code issued with a challenge is exchanged only with its verifier (RFC 7636 §4.6)."""
    if challenge is None:
        return  # issued without PKCE: a verifier sent anyway is ignored
    if verifier is None or not PKCE_VERIFIER.fullmatch(verifier):
        raise _oauth_error(400, "invalid_request", 'Invalid "code_verifier" in request.')
    if not secrets.compare_digest(s256(verifier), challenge):
        raise _oauth_error(400, "invalid_grant", 'Invalid "code_verifier" in request.')


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
        _check_verifier(grant.get("code_challenge"), form.get("code_verifier"))
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
