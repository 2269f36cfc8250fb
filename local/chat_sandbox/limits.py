"""Rate limits the way the platform enforces them, and the faults the sandbox injects on purpose.

Buckets are keyed by bucket, top-level resource (guild, channel) and caller, like the platform's: a bucket is
one route, or the routes of a shared bucket (`SandboxConfig.shared_buckets`), counted together and named by
one `X-RateLimit-Bucket`. Every answer carries `X-RateLimit-*` headers, so a client that reads them never needs
a 429. Faults (random 429s, global 429s, 5xx, an edge ban) come from a seeded RNG, so a seed and a request
order repeat them.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from http.client import responses
from typing import TYPE_CHECKING

from local.chat_sandbox.protocol import Answer, Call, PlatformError, ceil_ms, render

if TYPE_CHECKING:
    from local.chat_sandbox.config import SandboxConfig


def bucket_hash(bucket: str) -> str:
    """The opaque name of a bucket (a route, or a shared bucket's name): like the platform's, it leaves out the
    resource id."""
    return hashlib.sha1(bucket.encode(), usedforsecurity=False).hexdigest()[:32]


@dataclass
class Bucket:
    count: int = 0
    window_start: float = 0.0


class Throttle:
    """Buckets, the per-caller global limit, the creation quota and fault injection, under the state's lock.

    The creation quota runs on `clock` (the sandbox's own clock, which tests move forward); the rest on real
    time. Every creation holds a slot of its guild's quota for the quota's window, deleted or not.
    """

    def __init__(self, seed: int | None, clock: Callable[[], float] = time.time):
        self.rng = random.Random(seed)
        self.faults: Counter[str] = Counter()
        self.clock = clock
        self._buckets: dict[tuple[str, str, str], Bucket] = {}
        self._recent: dict[str, deque[float]] = {}
        self._created: dict[tuple[str, str], deque[float]] = {}  # (route, guild id) -> creation times, oldest first

    def inject_fault(self, call: Call, config: SandboxConfig) -> tuple[str, Answer] | None:
        """An injected failure for this request, or None to answer it normally."""
        if config.blocked:
            self.faults["blocked"] += 1
            # Observed: an edge ban answers 429 with no rate-limit header (and often an HTML body).
            return "blocked", render(429, "error code: 1015")
        if config.fail_next > 0:
            config.fail_next -= 1
            return "5xx", self._server_error(config.fail_next_status)
        draw = self.rng.random()
        low, high = config.fault_retry_after
        retry_after = round(self.rng.uniform(low, high), 3)
        p5xx, pglobal = config.error_5xx_probability, config.global_429_probability
        if draw < p5xx:
            return "5xx", self._server_error(self.rng.choice(config.error_5xx_statuses))
        if draw < p5xx + pglobal:
            self.faults["global_429"] += 1
            return "global_429", rate_limited(retry_after, is_global=True)
        if draw < p5xx + pglobal + config.rate_limit_probability:
            self.faults["rate_limit"] += 1
            route = f"{call.method} {call.route}"
            headers = bucket_headers(config.bucket_of(route), _limits(config, route)[0], 0, retry_after)
            return "rate_limit", rate_limited(retry_after, is_global=False, headers=headers)
        return None

    def _server_error(self, status: int) -> Answer:
        self.faults["5xx"] += 1
        return render(status, {"message": f"{status}: {responses.get(status, 'Error')}", "code": 0})

    def take(self, call: Call, config: SandboxConfig) -> dict[str, str]:
        """Count the request against the global limit and its bucket: its rate-limit headers, or a 429."""
        now = time.monotonic()
        identity = call.caller.identity
        if config.global_limit_per_second and identity != "client":
            recent = self._recent.setdefault(identity, deque())
            while recent and recent[0] <= now - 1.0:
                recent.popleft()
            if len(recent) >= config.global_limit_per_second:
                self.faults["global_limit"] += 1
                raise _as_error(rate_limited(ceil_ms(recent[0] + 1.0 - now), is_global=True))
            recent.append(now)
        route = f"{call.method} {call.route}"
        self._check_quota(route, call.major, config)
        limit, window = _limits(config, route)  # one limit for a shared bucket's routes (the config holds it)
        name = config.bucket_of(route)
        bucket = self._buckets.setdefault((name, call.major, identity), Bucket(0, now))
        if now >= bucket.window_start + window:
            bucket.count, bucket.window_start = 0, now
        reset_after = max(0.0, bucket.window_start + window - now)
        if bucket.count >= limit:
            self.faults["bucket_limit"] += 1
            headers = bucket_headers(name, limit, 0, reset_after)
            raise _as_error(rate_limited(ceil_ms(reset_after), is_global=False, headers=headers))
        bucket.count += 1
        return bucket_headers(name, limit, limit - bucket.count, reset_after)

    # -- the creation quota ------------------------------------------------------------------

    def quota(self, route: str, guild_id: str, config: SandboxConfig) -> dict[str, float]:
        """A guild's quota on one creation route: limit, used, remaining, and seconds until a slot frees."""
        limit, window = config.creation_quotas[route]
        times = self._counted(route, guild_id, window)
        reset_after = max(0.0, times[0] + window - self.clock()) if times else 0.0
        return {"limit": limit, "used": len(times), "remaining": max(0, limit - len(times)), "reset_after": reset_after}

    def created(self, route: str, guild_id: str, config: SandboxConfig, count: int = 1, age: float = 0.0) -> None:
        """Counts `count` creations made `age` seconds ago against the guild's quota."""
        if route in config.creation_quotas:
            times = self._created.setdefault((route, guild_id), deque())
            times.extend([self.clock() - age] * count)
            self._created[(route, guild_id)] = deque(sorted(times))

    def _counted(self, route: str, guild_id: str, window: float) -> deque[float]:
        times = self._created.setdefault((route, guild_id), deque())
        while times and times[0] <= self.clock() - window:
            times.popleft()
        return times

    def _check_quota(self, route: str, guild_id: str, config: SandboxConfig) -> None:
        if route not in config.creation_quotas:
            return
        quota = self.quota(route, guild_id, config)
        if quota["remaining"] <= 0:
            self.faults["creation_quota"] += 1
            # Observed: the role-create bucket answers X-RateLimit-Limit: 250 with a reset of a day or more.
            bucket, limit = config.bucket_of(route), int(quota["limit"])
            headers = bucket_headers(bucket, limit, 0, quota["reset_after"], now=self.clock())
            raise _as_error(rate_limited(ceil_ms(quota["reset_after"]), is_global=False, headers=headers))


def _limits(config: SandboxConfig, route: str) -> tuple[int, float]:
    custom = config.route_limits.get(route)
    if custom:
        return custom
    return config.bucket_limit, config.bucket_window_seconds


def bucket_headers(
    bucket: str, limit: int, remaining: int, reset_after: float, *, now: float | None = None
) -> dict[str, str]:
    reset_after = ceil_ms(reset_after)
    return {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": f"{(time.time() if now is None else now) + reset_after:.3f}",
        "X-RateLimit-Reset-After": f"{reset_after:.3f}",
        "X-RateLimit-Bucket": bucket_hash(bucket),
    }


def rate_limited(retry_after: float, *, is_global: bool, headers: dict[str, str] | None = None) -> Answer:
    headers = dict(headers or {})
    headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
    headers["X-RateLimit-Scope"] = "global" if is_global else "user"
    if is_global:
        headers["X-RateLimit-Global"] = "true"
    body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
    return render(429, body, headers)


def _as_error(answer: Answer) -> PlatformError:
    status, headers, payload = answer
    return PlatformError(status, json.loads(payload), headers)
