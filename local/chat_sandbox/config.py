"""The sandbox's settings: injected faults, rate limits, latency. Changed with `state.configure(...)` or
`POST /_sandbox/config`; `reset(config=True)` restores these defaults."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

Probability = Annotated[float, Field(ge=0.0, le=1.0)]
RouteLimit = tuple[PositiveInt, PositiveFloat]  # requests per window, window in seconds

# Scaled-down stand-ins for the platform's observed creation limits (about 250 roles per 48 hours per guild;
# discord-api-docs#1480): strict enough that a client that ignores X-RateLimit-* headers meets 429s in tests.
CREATION_LIMITS: dict[str, RouteLimit] = {
    "POST /guilds/{guild_id}/roles": (5, 1.0),
    "POST /guilds/{guild_id}/channels": (5, 1.0),
}
# Member role grants and removals: a bucket of their own, observed at 10 per fixed window (the platform's issue #7680).
MEMBER_ROLE_LIMITS: dict[str, RouteLimit] = {
    "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}": (10, 1.0),
    "DELETE /guilds/{guild_id}/members/{user_id}/roles/{role_id}": (10, 1.0),
}

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
    )  # "METHOD /template"
    creation_quotas: dict[str, RouteLimit] = Field(default_factory=lambda: dict(CREATION_QUOTAS))  # on the clock
    global_limit_per_second: NonNegativeInt = 50  # per caller; 0 disables
    latency_seconds: NonNegativeFloat = 0.0  # added to every platform answer
    guild_members_intent: bool = True  # the bot holds the privileged GUILD_MEMBERS intent (the member list)
    guild_members_intent_denied: list[str] = Field(default_factory=list)  # guilds where the member list is refused
    normalize_channel_names: bool = True  # text-like names come back lower-case with dashes [obs]
    log_limit: PositiveInt = 20000

    def changed(self, changes: dict[str, Any]) -> SandboxConfig:
        """These settings with `changes` applied. `route_limits` entries merge into the current ones (null
        removes one), so setting a limit for one route keeps the creation limits."""
        values = self.model_dump()
        for name, value in changes.items():
            if name == "route_limits" and isinstance(value, dict):
                merged = {**values["route_limits"], **value}
                value = {route: limit for route, limit in merged.items() if limit is not None}
            values[name] = value
        return SandboxConfig.model_validate(values)


DEFAULT_CONFIG: dict[str, Any] = SandboxConfig().model_dump()
