"""Signing in with the chat platform, bound to who started it (chatAuth v4, docs/03-api.md, chatAuth).

A web app that wants to link a user's chat account asks the service for a sign-in first: the service mints a
single-use `state` (10 minutes) bound to the bearer's `sub` and `iss`, with the `redirect_uri` and `replace` it
fixes and a PKCE verifier that never leaves the service, and answers the platform's authorize URL carrying the
state and the verifier's S256 challenge. The platform sends the browser back to the redirect URI with a code and
the state; the app sends both, with the same bearer, and the service exchanges the code with the verifier and
links the identity to the `sub` the state was minted for. A code sent with another bearer, with a state that is
used, expired or someone else's, or without a state, links nothing: linking whatever code to whichever bearer
sends it was a login-CSRF hole (a victim's bearer and an attacker's code linked the attacker's servers).

Without a bearer and without a state, the seed's exchange answers the identity and links nothing.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlencode

from pydantic import BaseModel, Field

from svcconf.accounts.chat_account import ChatIdentity, chat_links, new_link
from svcconf.api.auth import BearerUser
from svcconf.chat import ChatUser, InvalidGrant, get_chat_client
from svcconf.clock import utc_now
from svcconf.errors import BadRequest, Conflict
from svcconf.observability import logger
from svcconf.settings import get_settings
from svcconf.store.sign_in_states import SignInState, SignInStateRepository

STATE_LIFETIME = timedelta(minutes=10)
# What the service reads of the user: who they are, their email, their servers.
SIGN_IN_SCOPE = "identify email guilds"
STATE_BYTES = 32  # 43 characters of base64url
VERIFIER_BYTES = 64  # 86 characters: PKCE takes 43-128 (RFC 7636)
STATE_REFUSED = (
    "is not a sign-in this service started for this bearer token, or it was used or has expired (10 minutes)"
)


class SignInStarted(BaseModel):
    state: str = Field(description="Single use, for 10 minutes, bound to the bearer user who asked for it.")
    authorize_url: str = Field(description="The chat platform's authorize URL for the browser: it carries `state`.")
    expires_at: datetime


def _states() -> SignInStateRepository:
    return SignInStateRepository(get_settings().sign_in_states_table)


def _check_redirect_uri(redirect_uri: str) -> None:
    if redirect_uri not in get_settings().chat_redirect_uris:
        raise BadRequest.for_field("redirect_uri", "is not one of this service's registered redirect URIs")


def s256_challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def start_sign_in(user: BearerUser, redirect_uri: str, *, replace: bool) -> SignInStarted:
    """A state for the user's sign-in, and the authorize URL that carries it (409 when the user is linked to a chat
    account already and `replace` was not asked for: before anyone signs in)."""
    _check_redirect_uri(redirect_uri)
    if not replace:
        linked = chat_links().identity(user.sub)
        if linked is not None and linked.refused_at is None:
            raise Conflict(
                f"This user is linked to the chat account {linked.chat_username} already: start the sign-in with "
                "`replace: true` to link another one in its place."
            )
    state, verifier = secrets.token_urlsafe(STATE_BYTES), secrets.token_urlsafe(VERIFIER_BYTES)
    expires_at = utc_now() + STATE_LIFETIME
    minted = SignInState(
        sub=user.sub,
        iss=user.iss,
        redirect_uri=redirect_uri,
        replace=replace,
        code_verifier=verifier,
        expires_at=expires_at,
    )
    _states().put(state, minted)
    settings = get_settings()
    query = {
        "client_id": settings.chat_client_id or "",
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "scope": SIGN_IN_SCOPE,
        "state": state,
        "code_challenge": s256_challenge(verifier),
        "code_challenge_method": "S256",
    }
    return SignInStarted(
        state=state, authorize_url=f"{settings.chat_authorize_url}?{urlencode(query)}", expires_at=expires_at
    )


def _minted_for(state: str, user: BearerUser | None, redirect_uri: str) -> SignInState:
    """The state's record when it is valid for this bearer and redirect URI; a 400 on `state` otherwise."""
    minted = _states().get(state)
    if user is None or minted is None or minted.expires_at <= utc_now():
        raise BadRequest.for_field("state", STATE_REFUSED)
    if not (secrets.compare_digest(minted.sub, user.sub) and minted.iss == user.iss):
        logger.warning("a sign-in's state was sent with another bearer user's token")
        raise BadRequest.for_field("state", STATE_REFUSED)
    if minted.redirect_uri != redirect_uri:
        raise BadRequest.for_field("redirect_uri", "is not the one this sign-in was started with")
    return minted


def _refused_code(refused: InvalidGrant) -> BadRequest:
    return BadRequest.for_field(
        "code", "was refused by the chat platform (expired, already used, or issued for another redirect_uri)"
    )


def finish_sign_in(code: str, redirect_uri: str, state: str | None, user: BearerUser | None) -> ChatIdentity:
    """Exchanges the code; with the state the service minted for this bearer, links the identity to it."""
    _check_redirect_uri(redirect_uri)
    if state is None:
        if user is not None:
            raise BadRequest.for_field(
                "state", "is required to link a chat account: start the sign-in with chatAuth without `code` first"
            )
        return _anonymous(code, redirect_uri)
    minted = _minted_for(state, user, redirect_uri)
    assert user is not None  # _minted_for refuses a state without the bearer it was minted for
    client = get_chat_client()
    try:
        grant = client.exchange_code(code, redirect_uri, minted.code_verifier.get_secret_value())
    except InvalidGrant as refused:
        raise _refused_code(refused) from refused  # the state stays: only a completed exchange uses it up
    access_token = grant.access_token.get_secret_value()
    chat_user = client.get_current_user(access_token)
    linked = chat_links().identity(user.sub)
    if linked is not None and linked.chat_user_id != chat_user.id and not minted.replace:
        raise Conflict(
            f"This user is linked to the chat account {linked.chat_username} already: start the sign-in with "
            "`replace: true` to link another one in its place."
        )
    if not _states().use(state):
        raise BadRequest.for_field("state", STATE_REFUSED)  # another request completed this sign-in first
    chat_links().save(new_link(user, grant, chat_user.id, chat_user.username))
    if linked is not None and linked.chat_user_id != chat_user.id:
        logger.info("a chat link was replaced, as the sign-in asked (replace: true)")
    return _identity(chat_user, access_token, linked=True)


def _anonymous(code: str, redirect_uri: str) -> ChatIdentity:
    """The seed's exchange: the identity and its access token, linked to nobody."""
    client = get_chat_client()
    try:
        grant = client.exchange_code(code, redirect_uri)
    except InvalidGrant as refused:
        raise _refused_code(refused) from refused
    access_token = grant.access_token.get_secret_value()
    return _identity(client.get_current_user(access_token), access_token, linked=False)


def _identity(chat_user: ChatUser, access_token: str, *, linked: bool) -> ChatIdentity:
    return ChatIdentity(
        email=chat_user.email,
        chatUserId=chat_user.id,
        chatUsername=chat_user.username,
        chatAvatar=chat_user.avatar_url(),
        chatAccessToken=access_token,
        linked=linked,
    )
