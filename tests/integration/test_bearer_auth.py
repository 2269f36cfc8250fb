"""Bearer JWTs (PyJWT): an HS256 secret, or RS256/ES256 keys from a JWKS URL over HTTP; the bot's x-bot-token.

The secrets are plain settings here, so a case takes milliseconds (the mutation gate runs this file for each mutant
of auth.py); the same secrets read from Secrets Manager: tests/integration/test_auth_matrix.py."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Annotated

import jwt
import pytest
from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import BaseModel

from local.tokens import issue_token
from svcconf.api import auth
from svcconf.api.auth import BearerUser, BotCaller, admin_user, bearer_user, bot_caller, optional_bearer_user
from svcconf.api.resolver import create_app
from svcconf.settings import get_settings
from tests.helpers.handlers import BOT_TOKEN, JWT_SECRET
from tests.helpers.jwks_server import JwksServer

OTHER_SECRET = "another-secret-" + "0123456789" * 6

probe = create_app("whoAmI")


@probe.post("/functions/whoAmI")
def who_am_i(user: Annotated[BearerUser, Depends(bearer_user)]) -> dict:
    return {"sub": user.sub, "admin": user.is_admin}


@probe.post("/functions/adminOnly")
def admin_only(user: Annotated[BearerUser, Depends(admin_user)]) -> dict:
    return {"sub": user.sub}


@probe.post("/functions/maybeSignedIn")
def maybe_signed_in(user: Annotated[BearerUser | None, Depends(optional_bearer_user)]) -> dict:
    return {"sub": user.sub if user else None}


@probe.post("/functions/botOnly")
def bot_only(_bot: Annotated[BotCaller, Depends(bot_caller)]) -> dict:
    return {"bot": True}


class Named(BaseModel):
    name: str


@probe.post("/functions/greet")
def greet(request: Annotated[Named, Body()], user: Annotated[BearerUser, Depends(admin_user)]) -> dict:
    return {"hello": request.name, "by": user.sub}


def broken_dependency() -> None:
    raise RuntimeError("boom: secret-detail")


@probe.post("/functions/broken")
def broken(request: Annotated[Named, Body()], _nothing: Annotated[None, Depends(broken_dependency)]) -> dict:
    return {"hello": request.name}


@pytest.fixture(autouse=True)
def secrets_in_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "SVC_JWT_SECRET_ID",
        "SVC_JWT_JWKS_URL",
        "SVC_JWT_ISSUER",
        "SVC_JWT_AUDIENCE",
        "SVC_BOT_TOKEN_SECRET_ID",
        "SVC_BOT_API_KEY",
        "SVC_BOT_API_KEY_SECRET_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SVC_JWT_SECRET", JWT_SECRET)
    monkeypatch.setenv("SVC_BOT_TOKEN", BOT_TOKEN)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def call(
    token: str | None, path: str = "/functions/whoAmI", body: str = "{}", headers: dict[str, str] | None = None
) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        headers["Authorization"] = token if token.startswith(("Bearer", "Basic", "bearer")) else f"Bearer {token}"
    event = {
        "path": path,
        "resource": path,
        "httpMethod": "POST",
        "headers": headers,
        "body": body,
        "requestContext": {"requestId": "req-auth", "stage": "dev", "path": path},
    }
    raw = probe.resolve(event, None)
    return raw["statusCode"], json.loads(raw["body"])


def claims(**overrides) -> dict:
    return {"sub": "user-1", "exp": int(time.time()) + 600, **overrides}


def test_valid_token_authenticates_its_subject():
    status, body = call(issue_token(JWT_SECRET, "user-1"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


def test_lowercase_scheme_is_accepted():
    status, body = call("bearer " + issue_token(JWT_SECRET, "user-1"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "Send Authorization: Bearer <token>."),
        ("Basic dXNlcjpwYXNz", "Send Authorization: Bearer <token>."),
        ("Bearer ", "Send Authorization: Bearer <token>."),
        ("not.a.jwt", "The bearer token is invalid."),
        ("two.segments", "The bearer token is invalid."),
        (jwt.encode(claims(sub="  "), JWT_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode(claims(exp=int(time.time()) - 120), JWT_SECRET, "HS256"), "The bearer token has expired."),
        (jwt.encode(claims(), OTHER_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode(claims(), None, "none"), "The bearer token is invalid."),
        (jwt.encode({"exp": int(time.time()) + 600}, JWT_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode({"sub": "user-1"}, JWT_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode(claims(), JWT_SECRET, "HS512"), "The bearer token is invalid."),
    ],
    ids=[
        "missing",
        "basic",
        "empty",
        "garbage",
        "two-segments",
        "blank-sub",
        "expired",
        "bad-signature",
        "alg-none",
        "no-sub",
        "no-exp",
        "hs512",
    ],
)
def test_unusable_tokens_are_401_in_the_contract_body(token, message):
    status, body = call(token)
    assert status == 401
    assert body == {"error": "Unauthorized", "message": message, "code": 401, "requestId": "req-auth"}


def test_issuer_and_audience_are_checked_when_configured(monkeypatch):
    monkeypatch.setenv("SVC_JWT_ISSUER", "https://auth.example")
    monkeypatch.setenv("SVC_JWT_AUDIENCE", "svc-api")
    get_settings.cache_clear()
    good = issue_token(JWT_SECRET, "user-1", issuer="https://auth.example", audience="svc-api")
    assert call(good)[0] == 200
    assert call(issue_token(JWT_SECRET, "user-1", issuer="https://evil.example", audience="svc-api"))[0] == 401
    assert call(issue_token(JWT_SECRET, "user-1", issuer="https://auth.example", audience="other"))[0] == 401
    assert call(issue_token(JWT_SECRET, "user-1"))[0] == 401


def test_admin_route_needs_role_admin():
    assert call(issue_token(JWT_SECRET, "boss", role="admin"), "/functions/adminOnly") == (200, {"sub": "boss"})
    status, body = call(issue_token(JWT_SECRET, "user-1", role="member"), "/functions/adminOnly")
    assert (status, body["error"], body["message"]) == (403, "Forbidden", "Only administrators may do this.")
    assert call(None, "/functions/adminOnly")[0] == 401


@pytest.fixture
def jwks(monkeypatch):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    server = JwksServer({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]})
    monkeypatch.setenv("SVC_JWT_JWKS_URL", server.url)
    get_settings.cache_clear()
    auth._jwks_client.cache_clear()
    yield key, server
    server.shutdown()
    auth._jwks_client.cache_clear()


def test_rs256_token_is_verified_with_keys_fetched_once_from_the_jwks_url(jwks):
    key, server = jwks
    token = jwt.encode(claims(), key, "RS256", headers={"kid": "k1"})
    assert call(token) == (200, {"sub": "user-1", "admin": False})
    assert call(token)[0] == 200
    assert server.fetches == 1


def test_with_jwks_an_hs256_token_signed_with_the_old_secret_is_refused(jwks):
    status, body = call(jwt.encode(claims(), JWT_SECRET, "HS256", headers={"kid": "k1"}))
    assert status == 401
    assert body["message"] == "The bearer token is invalid."


def test_token_with_an_unknown_key_id_is_refused(jwks):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    status, body = call(jwt.encode(claims(), other, "RS256", headers={"kid": "k2"}))
    assert status == 401
    assert body["message"] == "The bearer token is signed with an unknown key."


@pytest.mark.parametrize("body", ['{"name": "Ada"}', "{}", '{"name": NaN}'], ids=["valid", "invalid", "undecodable"])
def test_nested_auth_dependencies_run_before_the_body_whether_it_validates_or_not(body):
    # admin_user depends on bearer_user, which reads the Request: both run before any 400 about the body
    assert call(None, "/functions/greet", body)[0] == 401
    status, answer = call(issue_token(JWT_SECRET, "user-1", role="member"), "/functions/greet", body)
    assert (status, answer["message"]) == (403, "Only administrators may do this.")
    status, answer = call(issue_token(JWT_SECRET, "boss", role="admin"), "/functions/greet", body)
    assert status == (200 if body == '{"name": "Ada"}' else 400)


def test_dependency_overrides_apply_before_the_body_too():
    probe.dependency_overrides[bearer_user] = lambda: BearerUser(sub="stand-in", role="admin")
    try:
        assert call(None, "/functions/greet", '{"name": "Ada"}') == (200, {"hello": "Ada", "by": "stand-in"})
        status, answer = call(None, "/functions/greet", "{}")
        assert (status, answer["details"]) == (400, [{"field": "name", "message": "is required"}])
    finally:
        probe.dependency_overrides.clear()


@pytest.mark.parametrize("body", ['{"name": "Ada"}', "{}"], ids=["valid", "invalid"])
def test_a_dependency_that_fails_unexpectedly_is_the_contracts_500(body):
    status, answer = call(None, "/functions/broken", body)
    assert (status, answer) == (
        500,
        {
            "error": "Internal Server Error",
            "message": "The service failed unexpectedly.",
            "code": 500,
            "requestId": "req-auth",
        },
    )


# -- what the decoder is told: leeway, audience, role --------------------------------------------


def test_a_token_expired_within_the_leeway_authenticates_its_subject():
    # SVC_JWT_LEEWAY_SECONDS is 30 by default: a clock 10 s ahead of the issuer's still accepts the token
    status, body = call(jwt.encode(claims(exp=int(time.time()) - 10), JWT_SECRET, "HS256"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


def test_without_an_audience_configured_a_token_s_audience_is_not_checked():
    status, body = call(jwt.encode(claims(aud="some-other-api"), JWT_SECRET, "HS256"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


@pytest.mark.parametrize("role", [["admin"], 1, None], ids=["list", "number", "null"])
def test_a_role_claim_that_is_not_a_string_authenticates_the_subject_as_no_administrator(role):
    status, body = call(jwt.encode(claims(role=role), JWT_SECRET, "HS256"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


def test_spaces_between_the_scheme_and_the_token_are_tolerated():
    status, body = call("Bearer   " + issue_token(JWT_SECRET, "user-1"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


# -- optional sign-in ----------------------------------------------------------------------------


def test_an_optional_bearer_is_anonymous_without_the_header_the_user_with_a_good_one_and_401_with_a_bad_one():
    assert call(None, "/functions/maybeSignedIn") == (200, {"sub": None})
    assert call(issue_token(JWT_SECRET, "user-1"), "/functions/maybeSignedIn") == (200, {"sub": "user-1"})
    status, body = call("not.a.jwt", "/functions/maybeSignedIn")
    assert (status, body["message"]) == (401, "The bearer token is invalid.")


# -- our side cannot verify: 503, and the log says what to set ------------------------------------


def test_without_a_jwt_secret_or_jwks_url_a_bearer_call_is_503_and_the_log_names_both(monkeypatch, caplog):
    monkeypatch.delenv("SVC_JWT_SECRET")
    get_settings.cache_clear()

    status, body = call(issue_token(JWT_SECRET, "user-1"))

    assert (status, body["message"]) == (503, "Bearer authentication is not configured.")
    assert "bearer authentication is not configured (SVC_JWT_SECRET or SVC_JWT_JWKS_URL)" in caplog.messages


def test_an_unreachable_jwks_url_is_503_not_a_refused_token(monkeypatch):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("SVC_JWT_JWKS_URL", f"http://127.0.0.1:{port}/jwks.json")
    get_settings.cache_clear()
    auth._jwks_client.cache_clear()
    try:
        status, body = call(jwt.encode(claims(), JWT_SECRET, "HS256", headers={"kid": "k1"}))
    finally:
        auth._jwks_client.cache_clear()

    assert (status, body["message"]) == (503, "The bearer-token keys cannot be fetched right now.")


def test_with_jwks_a_token_whose_header_does_not_parse_is_401(jwks):
    status, body = call("bm90LWpzb24.e30.e30")  # compact, but its header is 'not-json'
    assert (status, body["message"]) == (401, "The bearer token is invalid.")


# -- the bot's x-bot-token -----------------------------------------------------------------------

REFUSED_BOT = {
    "error": "Forbidden",
    "message": "The x-bot-token header is missing or wrong.",
    "code": 403,
    "requestId": "req-auth",
}


def test_the_bot_s_own_token_gets_past_auth():
    assert call(None, "/functions/botOnly", headers={"x-bot-token": BOT_TOKEN}) == (200, {"bot": True})


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-bot-token": ""},
        {"x-bot-token": BOT_TOKEN[:-1]},
        {"x-bot-token": BOT_TOKEN.upper()},
        {"x-bot-token": "\udcff"},
    ],
    ids=["missing", "empty", "one-short", "other-case", "lone-surrogate"],
)
def test_a_missing_or_wrong_bot_token_is_403_in_the_contract_body(headers):
    assert call(None, "/functions/botOnly", headers=headers) == (403, REFUSED_BOT)


def test_the_bearer_user_carries_the_token_s_issuer_when_it_names_one():
    # chatAuth binds a sign-in's state to sub and iss (v4)
    named = auth.verify_bearer_token(issue_token(JWT_SECRET, "user-1", issuer="https://auth.example"))
    assert (named.sub, named.iss, named.role) == ("user-1", "https://auth.example", None)
    assert auth.verify_bearer_token(issue_token(JWT_SECRET, "user-1")).iss is None
    # A signed token whose `iss` is not a string (PyJWT checks its type only against a configured issuer)
    claims = {"sub": "user-1", "exp": int(time.time()) + 60, "iss": 7}
    numeric = jwt.api_jws.encode(json.dumps(claims).encode(), JWT_SECRET, algorithm="HS256")
    assert auth.verify_bearer_token(numeric).iss is None


def test_with_a_bot_api_key_set_only_that_key_gets_past_auth(monkeypatch):
    # v4: the bot's own key to the service, apart from the platform's bot token (SVC_BOT_API_KEY)
    monkeypatch.setenv("SVC_BOT_API_KEY", "the-bot-s-own-api-key-0123456789")
    get_settings.cache_clear()
    assert call(None, "/functions/botOnly", headers={"x-bot-token": "the-bot-s-own-api-key-0123456789"}) == (
        200,
        {"bot": True},
    )
    assert call(None, "/functions/botOnly", headers={"x-bot-token": BOT_TOKEN}) == (403, REFUSED_BOT)
    assert call(None, "/functions/botOnly", headers={"x-bot-token": "the-bot-s-own-api-key-012345678"}) == (
        403,
        REFUSED_BOT,
    )


def test_without_a_bot_token_configured_a_bot_call_is_503_and_the_log_names_what_to_set(monkeypatch, caplog):
    monkeypatch.delenv("SVC_BOT_TOKEN")
    get_settings.cache_clear()

    status, body = call(None, "/functions/botOnly", headers={"x-bot-token": BOT_TOKEN})

    assert (status, body["message"]) == (503, "Bot authentication is not configured.")
    assert "the bot token is not configured (SVC_BOT_TOKEN or SVC_BOT_TOKEN_SECRET_ID)" in caplog.messages
