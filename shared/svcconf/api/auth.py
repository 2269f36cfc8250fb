"""Authentication as route dependencies: the bearer user (JWT, PyJWT) and the bot (x-bot-token).

Every token that is not a well-formed, correctly signed, current JWT with a subject is a 401, whatever is wrong
with it: the refusals differ only in their message. A 503 means our side cannot verify (no secret configured,
the JWKS endpoint unreachable), never that the token is bad.
"""

from __future__ import annotations

import hmac
import re
from functools import cache
from typing import Annotated, Any

import jwt
from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.request import Request
from pydantic import BaseModel

from svcconf.errors import Forbidden, ServiceUnavailable, Unauthorized
from svcconf.observability import logger
from svcconf.settings import get_settings

HS_ALGORITHMS = ["HS256"]
JWKS_ALGORITHMS = ["RS256", "ES256"]  # never "none", never HS* with a public key
ADMIN_ROLE = "admin"
# JWS compact serialisation: three base64url segments. Anything else is refused before it is parsed, and before
# a JWKS is fetched for it.
COMPACT_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
INVALID_BEARER = "The bearer token is invalid."


class BearerUser(BaseModel):
    sub: str
    role: str | None = None
    iss: str | None = None  # the token's issuer when it names one (a sign-in's state is bound to sub and iss)

    model_config = {"frozen": True}

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN_ROLE


class BotCaller(BaseModel):
    """The chat-platform bot, authenticated by its own token."""


@cache
def _jwks_client(url: str) -> jwt.PyJWKClient:
    return jwt.PyJWKClient(url, cache_keys=True, lifespan=300, timeout=5)


def _verification_key(token: str) -> tuple[Any, list[str]]:
    settings = get_settings()
    if settings.jwt_jwks_url:
        try:
            # A PyJWK, not its bare key: PyJWT then verifies with the key's own algorithm, whatever the header says.
            return _jwks_client(settings.jwt_jwks_url).get_signing_key_from_jwt(token), JWKS_ALGORITHMS
        except jwt.PyJWKClientConnectionError as exc:
            raise ServiceUnavailable("The bearer-token keys cannot be fetched right now.") from exc
        except jwt.PyJWKClientError as exc:
            raise Unauthorized("The bearer token is signed with an unknown key.") from exc
        except jwt.PyJWTError as exc:  # a header that does not parse, a key that does not fit
            raise Unauthorized(INVALID_BEARER) from exc
    secret = settings.resolved_jwt_secret()
    if not secret:
        logger.error("bearer authentication is not configured (SVC_JWT_SECRET or SVC_JWT_JWKS_URL)")
        raise ServiceUnavailable("Bearer authentication is not configured.")
    return secret, HS_ALGORITHMS


def verify_bearer_token(token: str) -> BearerUser:
    if not COMPACT_JWT.fullmatch(token):
        raise Unauthorized(INVALID_BEARER)
    settings = get_settings()
    key, algorithms = _verification_key(token)
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=algorithms,
            issuer=settings.jwt_issuer or None,
            audience=settings.jwt_audience or None,
            leeway=settings.jwt_leeway_seconds,
            options={"require": ["exp", "sub"], "verify_aud": bool(settings.jwt_audience)},
        )
    except jwt.ExpiredSignatureError as exc:
        raise Unauthorized("The bearer token has expired.") from exc
    except jwt.PyJWTError as exc:  # InvalidTokenError, and InvalidKeyError for a key that does not fit the token
        raise Unauthorized(INVALID_BEARER) from exc
    subject, role, issuer = claims.get("sub"), claims.get("role"), claims.get("iss")
    if not isinstance(subject, str) or not subject.strip():
        raise Unauthorized(INVALID_BEARER)
    return BearerUser(
        sub=subject, role=role if isinstance(role, str) else None, iss=issuer if isinstance(issuer, str) else None
    )


def bearer_user(request: Request) -> BearerUser:
    """Dependency: the caller of a bearer operation; 401 when the token is missing or invalid."""
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Send Authorization: Bearer <token>.")
    return verify_bearer_token(token.strip())


def admin_user(user: Annotated[BearerUser, Depends(bearer_user)]) -> BearerUser:
    """Dependency: a bearer user whose token carries role=admin; 403 for anyone else."""
    if not user.is_admin:
        raise Forbidden("Only administrators may do this.")
    return user


def optional_bearer_user(request: Request) -> BearerUser | None:
    """Dependency: None without an Authorization header; the user with a valid one; 401 with a bad one,
    so that a caller who meant to be signed in is not silently treated as anonymous."""
    if not request.headers.get("authorization"):
        return None
    return bearer_user(request)


def bot_caller(request: Request) -> BotCaller:
    """Dependency: the bot, proven by x-bot-token; 403 when missing or wrong (compared in constant time). The key is
    the bot's own API key when the operator set one (`SVC_BOT_API_KEY`), else the platform's bot token."""
    expected = get_settings().resolved_bot_api_key()
    if not expected:
        logger.error("the bot token is not configured (SVC_BOT_TOKEN or SVC_BOT_TOKEN_SECRET_ID)")
        raise ServiceUnavailable("Bot authentication is not configured.")
    provided = request.headers.get("x-bot-token") or ""
    # surrogatepass: a direct invoke's header may hold a lone surrogate; it must compare unequal, not fail.
    if not hmac.compare_digest(provided.encode("utf-8", "surrogatepass"), expected.encode()):
        raise Forbidden("The x-bot-token header is missing or wrong.")
    return BotCaller()
