"""The sandbox's settings: injected faults, rate limits, latency. Changed with `state.configure(...)` or
`POST /_sandbox/config`; `reset(config=True)` restores these defaults."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

Probability = Annotated[float, Field(ge=0.0, le=1.0)]
RouteLimit = tuple[PositiveInt, PositiveFloat]  # requests per window, window in seconds
RouteName = Annotated[str, StringConstraints(pattern=r"^(GET|POST|PUT|PATCH|DELETE) /\S+$")]  # "METHOD /template"
BucketName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9 -]{0,63}$")]

# Scaled-down stand-ins for the platform's observed creation limits (about 250 roles per 48 hours per guild;
# discord-api-docs#1480): strict enough that a client that ignores X-RateLimit-* headers meets 429s in tests.
CREATION_LIMITS: dict[str, RouteLimit] = {
    "POST /guilds/{guild_id}/roles": (5, 1.0),
    "POST /guilds/{guild_id}/channels": (5, 1.0),
}
MEMBER_ROLE_GRANT = "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"
MEMBER_ROLE_REMOVAL = "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}"
# Member role grants and removals: a bucket of their own, observed at 10 per fixed window (the platform's issue #7680).
MEMBER_ROLE_LIMITS: dict[str, RouteLimit] = {MEMBER_ROLE_GRANT: (10, 1.0), MEMBER_ROLE_REMOVAL: (10, 1.0)}
# Routes counted in one bucket, answered with one X-RateLimit-Bucket. Documented (rate-limits.mdx): a bucket may
# include the method, and "per-route limits will be shared across a set of similar endpoints", named by that
# header. Observed (#7680): the grant route answers `X-RateLimit-Limit: 10` in a fixed window. That the removal
# shares the grant's bucket is our reading of the pair, not a documented fact: the stricter model for a client.
SHARED_BUCKETS: dict[str, list[str]] = {"member roles": [MEMBER_ROLE_GRANT, MEMBER_ROLE_REMOVAL]}

QUOTA_WINDOW_SECONDS = 48 * 3600
# The platform's creation quota per guild (observed: about 250 roles and 500 channels per 48 hours, deletions
# counted); past it, a 429 whose retry_after runs until the oldest counted creation leaves the window.
CREATION_QUOTAS: dict[str, RouteLimit] = {
    "POST /guilds/{guild_id}/roles": (250, QUOTA_WINDOW_SECONDS),
    "POST /guilds/{guild_id}/channels": (500, QUOTA_WINDOW_SECONDS),
}


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    seed: int | None = None  # seeds the fault RNG: the same seed and request order give the same faults
    rate_limit_probability: Probability = 0.0  # share of platform requests answered 429 (bucket scope)
    global_429_probability: Probability = 0.0  # share answered 429 with global: true
    error_5xx_probability: Probability = 0.0  # share answered with one of error_5xx_statuses
    error_5xx_statuses: list[Annotated[int, Field(ge=500, le=599)]] = Field(default=[500, 502, 503], min_length=1)
    fail_next: NonNegativeInt = 0  # answer the next N platform requests with fail_next_status (counts down)
    fail_next_status: Annotated[int, Field(ge=400, le=599)] = 503
    fault_retry_after: tuple[NonNegativeFloat, NonNegativeFloat] = (0.05, 0.2)  # injected 429s: uniform in [min, max]
    blocked: bool = False  # answer everything like an edge ban: 429 without rate-limit headers
    bucket_limit: PositiveInt = 50  # requests per bucket (route + top-level resource + caller) per window
    bucket_window_seconds: PositiveFloat = 1.0
    route_limits: dict[str, RouteLimit] = Field(
        default_factory=lambda: {**CREATION_LIMITS, **MEMBER_ROLE_LIMITS}
    )  # "METHOD /template"; a route of a shared bucket sets the whole bucket's limit
    shared_buckets: dict[BucketName, list[RouteName]] = Field(
        default_factory=lambda: {name: list(routes) for name, routes in SHARED_BUCKETS.items()}
    )  # bucket name -> its routes, counted once per major parameter and caller
    creation_quotas: dict[str, RouteLimit] = Field(default_factory=lambda: dict(CREATION_QUOTAS))  # on the clock
    global_limit_per_second: NonNegativeInt = 50  # per caller; 0 disables
    latency_seconds: NonNegativeFloat = 0.0  # added to every platform answer
    guild_members_intent: bool = True  # the bot holds the privileged GUILD_MEMBERS intent (the member list)
    guild_members_intent_denied: list[str] = Field(default_factory=list)  # guilds where the member list is refused
    normalize_channel_names: bool = True  # text-like names come back lower-case with dashes [obs]
    log_limit: PositiveInt = 20000

    @field_validator("shared_buckets")
    @classmethod
    def _shared_buckets_hold(cls, value: dict[str, list[str]], info: ValidationInfo) -> dict[str, list[str]]:
        limits = info.data.get("route_limits", {})
        owner: dict[str, str] = {}
        for name, routes in value.items():
            if len(set(routes)) < 2:
                raise ValueError(f"{name!r} must name at least two different routes")
            for route in routes:  # control.py checks the sandbox answers it (the routes here would be an import cycle)
                if route in owner:
                    raise ValueError(f"{name!r}: {route!r} is already in the bucket {owner[route]!r}")
                owner[route] = name
            if len({limits.get(route) for route in routes}) > 1:
                raise ValueError(f"{name!r}: its routes have different route_limits; a bucket has one limit")
        return value

    def bucket_of(self, route: str) -> str:
        """The bucket a route counts in: its shared bucket's name, else the route itself."""
        return next((name for name, routes in self.shared_buckets.items() if route in routes), route)

    def changed(self, changes: dict[str, Any]) -> SandboxConfig:
        """These settings with `changes` applied. `route_limits` and `shared_buckets` entries merge into the current
        ones (null removes one), so setting a limit for one route keeps the creation limits; a route's limit in a
        shared bucket is the bucket's, so it applies to all its routes."""
        values = self.model_dump()
        for name, value in changes.items():
            if name in ("route_limits", "shared_buckets") and isinstance(value, dict):
                merged = {**values[name], **value}
                value = {key: item for key, item in merged.items() if item is not None}
            values[name] = value
        limits = changes.get("route_limits")
        if isinstance(limits, dict) and isinstance(values["shared_buckets"], dict):
            values["route_limits"] = _whole_buckets(values["route_limits"], limits, values["shared_buckets"])
        return SandboxConfig.model_validate(values)


def _whole_buckets(limits: dict[str, Any], asked: dict[str, Any], shared: dict[str, Any]) -> dict[str, Any]:
    """`limits` with each asked route's limit given to the other routes of its shared bucket (one asked value
    per bucket: two different ones are left to the validator to refuse)."""
    limits = dict(limits)
    for routes in shared.values():
        if not isinstance(routes, list):
            continue  # the validator names it
        named = {route: asked[route] for route in routes if isinstance(route, str) and route in asked}
        if len({json.dumps(limit) for limit in named.values()}) != 1:
            continue
        limit = next(iter(named.values()))
        for route in routes:
            if limit is None:
                limits.pop(route, None)
            else:
                limits[route] = limit
    return limits


DEFAULT_CONFIG: dict[str, Any] = SandboxConfig().model_dump()
