"""Bearer JWTs (PyJWT): HS256 secret from Secrets Manager, or RS256/ES256 keys from a JWKS URL over HTTP."""

from __future__ import annotations

import json
import time
from typing import Annotated

import jwt
import pytest
from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import BaseModel

from local.tokens import issue_token
from svcconf import auth
from svcconf.api import create_app
from svcconf.auth import BearerUser, admin_user, bearer_user
from svcconf.settings import get_settings
from tests.helpers.handlers import JWT_SECRET  # the value the aws fixture puts in Secrets Manager
from tests.helpers.jwks_server import JwksServer

OTHER_SECRET = "another-secret-" + "0123456789" * 6

probe = create_app("whoAmI")


@probe.post("/functions/whoAmI")
def who_am_i(user: Annotated[BearerUser, Depends(bearer_user)]) -> dict:
    return {"sub": user.sub, "admin": user.is_admin}


@probe.post("/functions/adminOnly")
def admin_only(user: Annotated[BearerUser, Depends(admin_user)]) -> dict:
    return {"sub": user.sub}


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


def call(token: str | None, path: str = "/functions/whoAmI", body: str = "{}") -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
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


def test_valid_token_authenticates_its_subject(aws):
    status, body = call(issue_token(JWT_SECRET, "user-1"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


def test_lowercase_scheme_is_accepted(aws):
    status, body = call("bearer " + issue_token(JWT_SECRET, "user-1"))
    assert (status, body) == (200, {"sub": "user-1", "admin": False})


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "Send Authorization: Bearer <token>."),
        ("Basic dXNlcjpwYXNz", "Send Authorization: Bearer <token>."),
        ("Bearer ", "Send Authorization: Bearer <token>."),
        ("not.a.jwt", "The bearer token is invalid."),
        (jwt.encode(claims(exp=int(time.time()) - 120), JWT_SECRET, "HS256"), "The bearer token has expired."),
        (jwt.encode(claims(), OTHER_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode(claims(), None, "none"), "The bearer token is invalid."),
        (jwt.encode({"exp": int(time.time()) + 600}, JWT_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode({"sub": "user-1"}, JWT_SECRET, "HS256"), "The bearer token is invalid."),
        (jwt.encode(claims(), JWT_SECRET, "HS512"), "The bearer token is invalid."),
    ],
    ids=["missing", "basic", "empty", "garbage", "expired", "bad-signature", "alg-none", "no-sub", "no-exp", "hs512"],
)
def test_unusable_tokens_are_401_in_the_contract_body(aws, token, message):
    status, body = call(token)
    assert status == 401
    assert body == {"error": "Unauthorized", "message": message, "code": 401, "requestId": "req-auth"}


def test_issuer_and_audience_are_checked_when_configured(aws, monkeypatch):
    monkeypatch.setenv("SVC_JWT_ISSUER", "https://auth.example")
    monkeypatch.setenv("SVC_JWT_AUDIENCE", "svc-api")
    get_settings.cache_clear()
    good = issue_token(JWT_SECRET, "user-1", issuer="https://auth.example", audience="svc-api")
    assert call(good)[0] == 200
    assert call(issue_token(JWT_SECRET, "user-1", issuer="https://evil.example", audience="svc-api"))[0] == 401
    assert call(issue_token(JWT_SECRET, "user-1", issuer="https://auth.example", audience="other"))[0] == 401
    assert call(issue_token(JWT_SECRET, "user-1"))[0] == 401


def test_admin_route_needs_role_admin(aws):
    assert call(issue_token(JWT_SECRET, "boss", role="admin"), "/functions/adminOnly") == (200, {"sub": "boss"})
    status, body = call(issue_token(JWT_SECRET, "user-1", role="member"), "/functions/adminOnly")
    assert (status, body["error"], body["message"]) == (403, "Forbidden", "Only administrators may do this.")
    assert call(None, "/functions/adminOnly")[0] == 401


@pytest.fixture
def jwks(aws, monkeypatch):
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
def test_nested_auth_dependencies_run_before_the_body_whether_it_validates_or_not(aws, body):
    # admin_user depends on bearer_user, which reads the Request: both run before any 400 about the body
    assert call(None, "/functions/greet", body)[0] == 401
    status, answer = call(issue_token(JWT_SECRET, "user-1", role="member"), "/functions/greet", body)
    assert (status, answer["message"]) == (403, "Only administrators may do this.")
    status, answer = call(issue_token(JWT_SECRET, "boss", role="admin"), "/functions/greet", body)
    assert status == (200 if body == '{"name": "Ada"}' else 400)


def test_dependency_overrides_apply_before_the_body_too(aws):
    probe.dependency_overrides[bearer_user] = lambda: BearerUser(sub="stand-in", role="admin")
    try:
        assert call(None, "/functions/greet", '{"name": "Ada"}') == (200, {"hello": "Ada", "by": "stand-in"})
        status, answer = call(None, "/functions/greet", "{}")
        assert (status, answer["details"]) == (400, [{"field": "name", "message": "is required"}])
    finally:
        probe.dependency_overrides.clear()


@pytest.mark.parametrize("body", ['{"name": "Ada"}', "{}"], ids=["valid", "invalid"])
def test_a_dependency_that_fails_unexpectedly_is_the_contracts_500(aws, body):
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
