"""The auth matrix on every operation, as openapi.json's security says: bearer operations answer 401 to every
token that is not valid (HS256 secret and JWKS setups), bot operations 403 to every token that is not the bot's.

Each case is sent with three bodies: `{}` (fails validation on most operations, so auth runs in the validation
error handler), the operation's events/ body (passes validation, so auth runs as a `Depends`), and a body the
strict decoder refuses (`NaN`): the answer is the auth refusal every time, never a 400 or a 500.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from svcconf.api import auth
from svcconf.settings import get_settings
from tests.helpers.api_operations import REQUEST_ID, Operation, api_operations, bearer_operations, bot_operations, call
from tests.helpers.handlers import BOT_TOKEN, JWT_SECRET
from tests.helpers.jwks_server import JwksServer

ISSUER = "https://auth.example"
AUDIENCE = "svc-api"
LEEWAY = 30  # SVC_JWT_LEEWAY_SECONDS' default, as docs/03-api.md documents it
# Operations without a security requirement that take an optional bearer token (401 when it is present and bad)
OPTIONAL_BEARER = {"chatAuth"}
REFUSED_BODY = '{"probe": NaN}'


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segments(header: dict[str, Any], claims: dict[str, Any]) -> str:
    return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"


@dataclass
class BearerSetup:
    """How the service verifies bearer tokens, and how to sign for it (`sign`) or against it (`forge`)."""

    name: str
    sign: Callable[..., str]  # (claims, headers=None) -> a token the service accepts, claims permitting
    forge: Callable[..., str]  # the same claims signed with a key the service does not trust
    public_pem: bytes  # an RSA public key: of the JWKS for "jwks", of nobody for "hs256"
    extra_cases: dict[str, str]  # refusals that only make sense in this setup


def _claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"sub": "user-1", "iat": now, "exp": now + 600, "iss": ISSUER, "aud": AUDIENCE, **overrides}
    return {key: value for key, value in claims.items() if value is not None}


def _with_issuer_and_audience(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_JWT_ISSUER", ISSUER)
    monkeypatch.setenv("SVC_JWT_AUDIENCE", AUDIENCE)
    get_settings.cache_clear()


def _public_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


@pytest.fixture
def hs256(aws, monkeypatch) -> BearerSetup:
    """The template's setup: an HS256 secret from Secrets Manager."""
    _with_issuer_and_audience(monkeypatch)
    other_secret = "not-the-service-secret-" + "0123456789" * 5
    return BearerSetup(
        name="hs256",
        sign=lambda claims, headers=None: jwt.encode(claims, JWT_SECRET, "HS256", headers=headers),
        forge=lambda claims, headers=None: jwt.encode(claims, other_secret, "HS256", headers=headers),
        public_pem=_public_pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        extra_cases={
            "HS512 with the service's secret": jwt.encode(_claims(), JWT_SECRET, "HS512"),
            "HS384 with the service's secret": jwt.encode(_claims(), JWT_SECRET, "HS384"),
        },
    )


@pytest.fixture
def jwks(aws, monkeypatch) -> Iterator[BearerSetup]:
    """SVC_JWT_JWKS_URL: RS256 keys fetched over HTTP from a loopback server."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    server = JwksServer({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]})
    monkeypatch.setenv("SVC_JWT_JWKS_URL", server.url)
    _with_issuer_and_audience(monkeypatch)
    auth._jwks_client.cache_clear()

    def signed(private_key: Any, algorithm: str = "RS256") -> Callable[..., str]:
        return lambda claims, headers=None: jwt.encode(
            claims, private_key, algorithm, headers={"kid": "k1", **(headers or {})}
        )

    yield BearerSetup(
        name="jwks",
        sign=signed(key),
        forge=signed(stranger),
        public_pem=_public_pem(key),
        extra_cases={
            "unknown kid": jwt.encode(_claims(), stranger, "RS256", headers={"kid": "k2"}),
            "no kid": jwt.encode(_claims(), key, "RS256"),
            "ES256 signature under the RSA key's kid": signed(ec_key, "ES256")(_claims()),
            "RS512 with the right key": signed(key, "RS512")(_claims()),
            "HS256 with the JWT secret of the HS256 setup": jwt.encode(_claims(), JWT_SECRET, "HS256", {"kid": "k1"}),
        },
    )
    server.shutdown()
    auth._jwks_client.cache_clear()


def refused_bearer_tokens(setup: BearerSetup) -> dict[str, str | None]:
    """Authorization header values (None: no header) that must be a 401 on every bearer operation."""
    now = int(time.time())
    valid = setup.sign(_claims())
    header, _payload, signature = valid.split(".")
    admin_payload = _b64(json.dumps(_claims(sub="admin-1", role="admin")).encode())
    hs256_with_public_key = _segments({"alg": "HS256", "typ": "JWT", "kid": "k1"}, _claims(role="admin"))
    hs256_with_public_key += "." + _b64(
        hmac.new(setup.public_pem, hs256_with_public_key.encode(), hashlib.sha256).digest()
    )
    tokens = {
        "garbage": "garbage",
        "three garbage segments": "aaa.bbb.ccc",
        "not base64url": "a!b.c$d.e%f",
        "header not a JSON object": f"{_b64(b'[1]')}.{valid.split('.')[1]}.{signature}",
        "alg: none": jwt.encode(_claims(role="admin"), None, "none"),
        "alg: none with the key's kid": jwt.encode(_claims(role="admin"), None, "none", headers={"kid": "k1"}),
        "HS256 signed with the RS256 public key": hs256_with_public_key,
        "signature stripped": f"{header}.{valid.split('.')[1]}.",
        "tampered payload (role: admin)": f"{header}.{admin_payload}.{signature}",
        "forged role: admin, bad signature": setup.forge(_claims(role="admin")),
        f"expired (beyond the {LEEWAY} s leeway)": setup.sign(_claims(exp=now - LEEWAY - 60)),
        f"not yet valid (nbf beyond the {LEEWAY} s leeway)": setup.sign(_claims(nbf=now + LEEWAY + 60)),
        f"issued in the future (iat beyond the {LEEWAY} s leeway)": setup.sign(_claims(iat=now + LEEWAY + 60)),
        "exp not a number": setup.sign(_claims(exp="tomorrow")),
        "wrong issuer": setup.sign(_claims(iss="https://evil.example")),
        "no issuer": setup.sign(_claims(iss=None)),
        "wrong audience": setup.sign(_claims(aud="another-api")),
        "no audience": setup.sign(_claims(aud=None)),
        "missing sub": setup.sign(_claims(sub=None)),
        "empty sub": setup.sign(_claims(sub="")),
        "blank sub": setup.sign(_claims(sub="   ")),
        "numeric sub": setup.sign(_claims(sub=123)),
        "missing exp": setup.sign(_claims(exp=None)),
        **setup.extra_cases,
    }
    headers: dict[str, str | None] = {
        "no Authorization header": None,
        "Basic scheme": "Basic dXNlcjpwYXNz",
        "Bearer without a token": "Bearer ",
        "token without the Bearer scheme": valid,
        "two tokens": f"Bearer {valid} {valid}",
    }
    return headers | {name: f"Bearer {token}" for name, token in tokens.items()}


def accepted_bearer_tokens(setup: BearerSetup) -> dict[str, str]:
    now = int(time.time())
    return {
        "valid": setup.sign(_claims()),
        "valid, role: admin": setup.sign(_claims(role="admin")),
        f"expired 10 s ago (within the {LEEWAY} s leeway)": setup.sign(_claims(exp=now - 10)),
        f"nbf 10 s ahead (within the {LEEWAY} s leeway)": setup.sign(_claims(nbf=now + 10)),
    }


def _bodies(operation: Operation) -> list[str]:
    return ["{}", *([operation.sample_body] if operation.sample_body else []), REFUSED_BODY]


def _answer(operation: Operation, body: str, authorization: str | None) -> tuple[int, dict]:
    response = call(operation, body, {} if authorization is None else {"Authorization": authorization})
    return response.status, response.body


def bearer_matrix(setup: BearerSetup, operation: Operation) -> dict[tuple[str, str], int]:
    """(case, body) -> status, for every refused token."""
    matrix = {}
    for case, authorization in refused_bearer_tokens(setup).items():
        for body in _bodies(operation):
            status, answer = _answer(operation, body, authorization)
            matrix[case, body[:20]] = status
            if status == 401:
                assert set(answer) == {"error", "message", "code", "requestId"}, (case, answer)
                assert (answer["error"], answer["code"], answer["requestId"]) == ("Unauthorized", 401, REQUEST_ID)
    return matrix


@pytest.mark.parametrize("setup_name", ["hs256", "jwks"])
@pytest.mark.parametrize("operation", bearer_operations(), ids=str)
def test_every_bad_bearer_token_is_401_on_every_bearer_operation(request, setup_name, operation):
    setup = request.getfixturevalue(setup_name)
    matrix = bearer_matrix(setup, operation)
    assert matrix == dict.fromkeys(matrix, 401)


@pytest.mark.parametrize("setup_name", ["hs256", "jwks"])
@pytest.mark.parametrize("operation", bearer_operations(), ids=str)
def test_valid_bearer_tokens_get_past_auth_within_the_leeway(request, setup_name, operation):
    setup = request.getfixturevalue(setup_name)
    answers = {
        case: _answer(operation, "{}", f"Bearer {token}") for case, token in accepted_bearer_tokens(setup).items()
    }
    user, admin = answers.pop("valid"), answers.pop("valid, role: admin")
    # Past auth, an empty body gets the operation's own answer: a user's, and an administrator's
    assert operation.name in PAST_AUTH, f"add {operation.name}'s answers to an empty body past auth to PAST_AUTH"
    assert [(status, answer["error"]) for status, answer in (user, admin)] == PAST_AUTH[operation.name]
    # And the tokens within the leeway get exactly the answer a fresh one gets
    assert answers == dict.fromkeys(answers, user)


# An operation's answers to `{}` with a valid user's token and with an administrator's: past auth, never a 401.
PAST_AUTH = {
    "deployToChat": [(400, "Bad Request"), (400, "Bad Request")],  # `action` is required
    "getChatGuilds": [(400, "Bad Request"), (400, "Bad Request")],  # no chat account is linked to the user
    "seedTemplates": [(403, "Forbidden"), (503, "Service Unavailable")],  # administrators only; no AI configured
    "svcAiChat": [(400, "Bad Request"), (400, "Bad Request")],  # `messages` needs a user message
    "validateChatInvite": [(400, "Bad Request"), (400, "Bad Request")],  # `invite` is required
}


@pytest.mark.parametrize("setup_name", ["hs256", "jwks"])
@pytest.mark.parametrize("operation", sorted(OPTIONAL_BEARER), ids=str)
def test_a_bad_optional_bearer_token_is_401_not_an_anonymous_call(request, setup_name, operation):
    chosen = {op.name: op for op in api_operations()}[operation]
    assert not chosen.security, f"{operation} declares security now: move it to the bearer matrix"
    setup = request.getfixturevalue(setup_name)
    refused = refused_bearer_tokens(setup)
    refused.pop("no Authorization header")  # anonymous: the operation runs
    matrix = {case: _answer(chosen, "{}", header)[0] for case, header in refused.items()}
    assert matrix == dict.fromkeys(matrix, 401)


def refused_bot_headers(setup: BearerSetup | None = None) -> dict[str, dict[str, str]]:
    changed = BOT_TOKEN[:-1] + chr(ord(BOT_TOKEN[-1]) ^ 1)
    headers = {
        "no x-bot-token": {},
        "empty": {"x-bot-token": ""},
        "wrong": {"x-bot-token": "wrong-token"},
        "one character short": {"x-bot-token": BOT_TOKEN[:-1]},
        "one character more": {"x-bot-token": BOT_TOKEN + "n"},
        "last character changed": {"x-bot-token": changed},
        "other case": {"x-bot-token": BOT_TOKEN.upper()},
        "surrounded by spaces": {"x-bot-token": f" {BOT_TOKEN} "},
        "a lone surrogate": {"x-bot-token": "\udcff"},
        "the bot token as a bearer token": {"Authorization": f"Bearer {BOT_TOKEN}"},
        "the bot token as Authorization: Bot": {"Authorization": f"Bot {BOT_TOKEN}"},
    }
    if setup is not None:
        headers["a valid user JWT"] = {"Authorization": f"Bearer {setup.sign(_claims(role='admin'))}"}
    return headers


@pytest.mark.parametrize("operation", bot_operations(), ids=str)
def test_every_missing_empty_wrong_or_almost_right_bot_token_is_403(hs256, operation):
    matrix = {}
    for case, headers in refused_bot_headers(hs256).items():
        for body in _bodies(operation):
            response = call(operation, body, headers)
            matrix[case, body[:20]] = response.status
            assert response.status != 403 or response.body == {
                "error": "Forbidden",
                "message": "The x-bot-token header is missing or wrong.",
                "code": 403,
                "requestId": REQUEST_ID,
            }
    assert matrix == dict.fromkeys(matrix, 403)
    assert call(operation, "{}", {"x-bot-token": BOT_TOKEN}).status != 403


@pytest.mark.parametrize("operation", bot_operations(), ids=str)
def test_a_separate_bot_api_key_replaces_the_bot_token_towards_the_service(hs256, operation, monkeypatch):
    # Given an operator who gave the bot a key of its own (the template's BotApiKeySecretArn)
    import boto3

    api_key = "bot-api-key-" + "0123456789" * 4
    arn = boto3.client("secretsmanager").create_secret(Name="bot-api-key", SecretString=api_key)["ARN"]
    monkeypatch.setenv("SVC_BOT_API_KEY_SECRET_ARN", arn)
    get_settings.cache_clear()
    # Then the key gets past auth and the platform's bot token no longer does
    assert call(operation, "{}", {"x-bot-token": api_key}).status != 403
    refused = call(operation, "{}", {"x-bot-token": BOT_TOKEN})
    assert (refused.status, refused.body["message"]) == (403, "The x-bot-token header is missing or wrong.")
    for case, headers in refused_bot_headers(None).items():
        assert call(operation, "{}", headers).status == 403, case
