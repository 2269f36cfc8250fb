"""Bearer tokens for local use: the runner's banner prints them and the tests send them."""

from __future__ import annotations

import time

import jwt

DEFAULT_TTL_SECONDS = 12 * 3600


def issue_token(
    secret: str,
    sub: str,
    *,
    role: str | None = None,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    issuer: str | None = None,
    audience: str | None = None,
) -> str:
    """An HS256 JWT as the service expects it (docs/03-api.md, Authentication): `sub`, `exp`, `role` for admins."""
    now = int(time.time())
    claims: dict[str, object] = {"sub": sub, "iat": now, "exp": now + ttl_seconds}
    if role is not None:
        claims["role"] = role
    if issuer:
        claims["iss"] = issuer
    if audience:
        claims["aud"] = audience
    return jwt.encode(claims, secret, algorithm="HS256")
