"""A loopback sandbox of the chat platform's REST API (v10), for local runs, tests and benchmarks.

It answers the part of the API the service uses the way the platform does (chat-platform.md):
invites, the OAuth2 token endpoint, `users/@me`, `users/@me/guilds`, guild, roles, channels,
permission overwrites and guild members; error bodies with the platform's JSON codes (and the
nested `errors` of code 50035); 201/204 where the platform answers them; rate-limit headers on
every response and per-bucket limits that answer 429 like the platform. Faults can be injected
(random 429s, global 429s, 5xx, an edge ban) from a seeded RNG, and every request is logged.

The API root is `http://HOST:PORT/api/v10` (the client swaps only its base URL); `/api/...` and
bare paths are accepted too. `/_sandbox/...` is the sandbox's own control API, not the platform's:

    GET  /_sandbox/stats          counts by status, route and fault; the fault configuration
    GET  /_sandbox/log            the request log (method, path, route, status, auth scheme, ...)
    POST /_sandbox/config         change the fault/limit configuration (JSON object of DEFAULT_CONFIG keys)
    POST /_sandbox/oauth/codes    mint an OAuth code: {"user_id", "redirect_uri"?, "scope"?} -> {"code"}
    POST /_sandbox/reset          reload the fixture and clear the log ({"config": true}: defaults too)

Run alone: `python -m local.chat_sandbox --port 8790` (prints the settings to point the service at it).
In tests: `server, base_url = start_sandbox(seed=7, rate_limit_probability=0.3)`; `server.state` is
the `SandboxState`; `server.shutdown()` stops it.

Where the platform's behaviour is observed rather than documented, the sandbox follows the
observation and says so in a comment.
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import json
import math
import random
import re
import secrets
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, unquote_plus, urlsplit

try:
    from svcconf.config.permissions import ALL_PERMISSIONS, PERMISSION_BITS
except ModuleNotFoundError:  # `python -m local.chat_sandbox` without shared/ on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
    from svcconf.config.permissions import ALL_PERMISSIONS, PERMISSION_BITS

API_ROOT = "/api/v10"
DEFAULT_FIXTURE = Path(__file__).with_name("chat_sandbox_fixture.json")
PLATFORM_EPOCH_MS = 1420070400000

ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
MANAGE_CHANNELS = 1 << PERMISSION_BITS["MANAGE_CHANNELS"]
MANAGE_ROLES = 1 << PERMISSION_BITS["MANAGE_ROLES"]

GUILD_TEXT, GUILD_VOICE, GUILD_CATEGORY, GUILD_ANNOUNCEMENT = 0, 2, 4, 5
GUILD_STAGE_VOICE, GUILD_FORUM, GUILD_MEDIA = 13, 15, 16
CREATABLE_CHANNEL_TYPES = {
    GUILD_TEXT,
    GUILD_VOICE,
    GUILD_CATEGORY,
    GUILD_ANNOUNCEMENT,
    GUILD_STAGE_VOICE,
    GUILD_FORUM,
    GUILD_MEDIA,
}
TEXT_LIKE = {GUILD_TEXT, GUILD_ANNOUNCEMENT, GUILD_FORUM, GUILD_MEDIA}
VOICE_LIKE = {GUILD_VOICE, GUILD_STAGE_VOICE}
MAX_ROLES = 250
MAX_CHANNELS = 500
MAX_CHANNELS_PER_CATEGORY = 50
MAX_CREATE_OVERWRITES = 100

DEFAULT_CONFIG: dict[str, Any] = {
    "seed": None,  # seeds the fault RNG: the same seed and request order give the same faults
    "rate_limit_probability": 0.0,  # share of platform requests answered 429 (bucket scope)
    "global_429_probability": 0.0,  # share answered 429 with global: true
    "error_5xx_probability": 0.0,  # share answered with one of error_5xx_statuses
    "error_5xx_statuses": [500, 502, 503],
    "fail_next": 0,  # answer the next N platform requests with fail_next_status (counts down)
    "fail_next_status": 503,
    "fault_retry_after": [0.05, 0.2],  # retry_after of injected 429s: uniform in [min, max] seconds
    "blocked": False,  # answer everything like an edge ban: 429 without rate-limit headers
    "bucket_limit": 50,  # requests per bucket (route + top-level resource + caller) per window
    "bucket_window_seconds": 1.0,
    "route_limits": {},  # per route: {"POST /guilds/{guild_id}/roles": [limit, window_seconds]}
    "global_limit_per_second": 50,  # per caller; 0 disables
    "latency_seconds": 0.0,  # added to every platform answer
    "normalize_channel_names": True,  # text-like names come back lower-case with dashes [obs]
    "log_limit": 20000,
}

# (method, template, handler, who may call: "optional" | "any" | "bot" | "client")
ROUTES: list[tuple[str, str, str, str]] = [
    ("GET", "/invites/{code}", "_get_invite", "optional"),
    ("POST", "/oauth2/token", "_token", "client"),
    ("GET", "/users/@me", "_get_me", "any"),
    ("GET", "/users/@me/guilds", "_get_my_guilds", "any"),
    ("GET", "/guilds/{guild_id}", "_get_guild", "bot"),
    ("GET", "/guilds/{guild_id}/roles", "_list_roles", "bot"),
    ("POST", "/guilds/{guild_id}/roles", "_create_role", "bot"),
    ("PATCH", "/guilds/{guild_id}/roles", "_reorder_roles", "bot"),
    ("GET", "/guilds/{guild_id}/channels", "_list_channels", "bot"),
    ("POST", "/guilds/{guild_id}/channels", "_create_channel", "bot"),
    ("PATCH", "/guilds/{guild_id}/channels", "_reorder_channels", "bot"),
    ("PUT", "/channels/{channel_id}/permissions/{overwrite_id}", "_put_overwrite", "bot"),
    ("GET", "/guilds/{guild_id}/members/{user_id}", "_get_member", "bot"),
]
MAJOR_PARAMETERS = ("guild_id", "channel_id", "webhook_id")


def _compile(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$")


COMPILED_ROUTES = [(method, template, _compile(template), handler, who) for method, template, handler, who in ROUTES]


class PlatformError(Exception):
    """An answer other than success, raised inside a handler."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None):
        self.status = status
        self.body = body
        self.headers = headers or {}
        super().__init__(f"{status}")


def _error(status: int, code: int, message: str) -> PlatformError:
    return PlatformError(status, {"message": message, "code": code})


def _field_error(code: str, message: str) -> dict[str, Any]:
    return {"_errors": [{"code": code, "message": message}]}


def _invalid_form(errors: dict[str, Any]) -> PlatformError:
    return PlatformError(400, {"message": "Invalid Form Body", "code": 50035, "errors": errors})


def _oauth_error(status: int, error: str, description: str | None = None) -> PlatformError:
    body = {"error": error}
    if description:
        body["error_description"] = description
    return PlatformError(status, body)


UNAUTHORIZED = (401, {"message": "401: Unauthorized", "code": 0})
MISSING_ACCESS = (403, 50001, "Missing Access")
MISSING_PERMISSIONS = (403, 50013, "Missing Permissions")


def _iso(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).isoformat(timespec="microseconds")


def _ceil_ms(seconds: float) -> float:
    """Seconds rounded up to the millisecond: a client that waits what it is told never comes back early."""
    return math.ceil(seconds * 1000) / 1000


def _truthy(value: str | None) -> bool:
    return value in ("true", "True", "1")


def _bitfield(value: Any) -> int | None:
    """A permission bitfield sent as a decimal string or an integer (the platform accepts both)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _normalize_name(name: str) -> str:
    # Observed, not documented: text-like channel names come back lower-case, spaces as dashes.
    return re.sub(r"\s+", "-", name.strip()).lower()


@dataclass
class Caller:
    kind: str  # "anonymous" | "bot" | "user" | "client"
    scheme: str | None = None  # "Bot" | "Bearer" | "Basic"
    user_id: str | None = None
    scopes: tuple[str, ...] = ()

    @property
    def identity(self) -> str:
        return {"bot": "bot", "user": f"user:{self.user_id}", "client": "client"}.get(self.kind, "anonymous")


@dataclass
class Call:
    method: str
    route: str
    params: dict[str, str]
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    caller: Caller = field(default_factory=lambda: Caller("anonymous"))

    def json(self) -> Any:
        if not self.body:
            raise _invalid_form({"_errors": [{"code": "BASE_TYPE_REQUIRED", "message": "This field is required"}]})
        try:
            return json.loads(self.body)
        except ValueError:
            raise _error(400, 50109, "The request body contains invalid JSON.") from None


@dataclass
class Bucket:
    count: int = 0
    window_start: float = 0.0


class SandboxState:
    """The platform's state, the fault configuration and the request log, behind one lock."""

    def __init__(self, fixture: dict[str, Any] | str | Path | None = None, **config: Any):
        if fixture is None or isinstance(fixture, str | Path):
            fixture = json.loads(Path(fixture or DEFAULT_FIXTURE).read_text(encoding="utf-8"))
        self._fixture = copy.deepcopy(fixture)
        self.lock = threading.RLock()
        self.config: dict[str, Any] = copy.deepcopy(DEFAULT_CONFIG)
        self.configure(**config)
        self._load(self._fixture)

    # -- test and control helpers ---------------------------------------------------------

    def configure(self, **changes: Any) -> dict[str, Any]:
        unknown = set(changes) - set(DEFAULT_CONFIG)
        if unknown:
            raise ValueError(f"unknown sandbox setting(s): {sorted(unknown)}")
        with self.lock:
            self.config.update(copy.deepcopy(changes))
            if "seed" in changes or not hasattr(self, "rng"):
                self.rng = random.Random(self.config["seed"])
            return copy.deepcopy(self.config)

    def reset(self, *, config: bool = False) -> None:
        """Reload the fixture, forget buckets and the log; with `config`, restore DEFAULT_CONFIG too."""
        with self.lock:
            if config:
                self.config = copy.deepcopy(DEFAULT_CONFIG)
            self._load(self._fixture)
            self.rng = random.Random(self.config["seed"])

    @property
    def request_log(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(entry) for entry in self._log]

    def requests(self, method: str | None = None, route: str | None = None) -> list[dict[str, Any]]:
        """Logged platform requests, optionally of one method and route template."""
        return [
            entry
            for entry in self.request_log
            if (method is None or entry["method"] == method) and (route is None or entry["route"] == route)
        ]

    def clear_log(self) -> None:
        with self.lock:
            self._log.clear()
            self._faults.clear()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            log = list(self._log)
            return {
                "requests": len(log),
                "by_status": dict(Counter(str(entry["status"]) for entry in log)),
                "by_route": dict(Counter(f"{entry['method']} {entry['route']}" for entry in log)),
                "faults": dict(self._faults),
                "config": copy.deepcopy(self.config),
            }

    def mint_code(self, user_id: str, redirect_uri: str | None = None, scope: str | None = None) -> str:
        """A fresh single-use OAuth code for a user, as if they had just approved the app."""
        with self.lock:
            if user_id not in self.users:
                raise KeyError(f"unknown user {user_id}")
            code = "sbx-" + secrets.token_urlsafe(18)
            self.codes[code] = {
                "user_id": user_id,
                "redirect_uri": redirect_uri or self.application["redirect_uris"][0],
                "scope": scope or self.application.get("default_scope", "identify email guilds"),
                "expires_at": self._now() + float(self.application.get("code_ttl_seconds", 600)),
                "used": False,
            }
            return code

    def guild(self, guild_id: str) -> dict[str, Any]:
        """The live state of one guild (a copy), for tests to assert on."""
        with self.lock:
            return copy.deepcopy(self.guilds[guild_id])

    # -- state ------------------------------------------------------------------------------

    @staticmethod
    def _now() -> float:
        return time.time()

    def _load(self, fixture: dict[str, Any]) -> None:
        now = self._now()
        self.application = dict(fixture["application"])
        self.bot = dict(fixture["bot"])
        self.users = {user["id"]: dict(user) for user in fixture.get("users", [])}
        self.users[self.bot["id"]] = {**self.bot, "bot": True, "discriminator": "0", "email": None, "verified": True}
        default_scope = self.application.get("default_scope", "identify email guilds")
        code_ttl = float(self.application.get("code_ttl_seconds", 600))
        oauth = fixture.get("oauth", {})
        self.codes = {
            entry["code"]: {
                "user_id": entry["user_id"],
                "redirect_uri": entry.get("redirect_uri", self.application["redirect_uris"][0]),
                "scope": entry.get("scope", default_scope),
                "expires_at": now + float(entry.get("expires_in_seconds", code_ttl)),
                "used": False,
            }
            for entry in oauth.get("codes", [])
        }
        self.access_tokens: dict[str, dict[str, Any]] = {}
        self.refresh_tokens: dict[str, dict[str, Any]] = {}
        for entry in oauth.get("tokens", []):
            scope = entry.get("scope", default_scope)
            self.access_tokens[entry["access_token"]] = {
                "user_id": entry["user_id"],
                "scope": scope,
                "expires_at": now + float(entry.get("expires_in_seconds", 604800)),
            }
            if entry.get("refresh_token"):
                self.refresh_tokens[entry["refresh_token"]] = {"user_id": entry["user_id"], "scope": scope}
        self.guilds: dict[str, dict[str, Any]] = {}
        self.channel_guild: dict[str, str] = {}
        for raw in fixture.get("guilds", []):
            guild = {key: value for key, value in raw.items() if key not in ("members", "roles", "channels")}
            guild["members"] = {
                member["user_id"]: {"roles": list(member.get("roles", [])), "joined_at": now - 86400, "nick": None}
                for member in raw.get("members", [])
            }
            guild["roles"] = {role["id"]: dict(role) for role in raw.get("roles", [])}
            guild["channels"] = {}
            for channel in raw.get("channels", []):
                guild["channels"][channel["id"]] = {**channel, "guild_id": raw["id"]}
                self.channel_guild[channel["id"]] = raw["id"]
            self.guilds[raw["id"]] = guild
        self.invites = {
            invite["code"]: {
                **invite,
                "expires_at": None if invite.get("expires_in_seconds") is None else now + invite["expires_in_seconds"],
            }
            for invite in fixture.get("invites", [])
        }
        self._buckets: dict[tuple[str, str, str], Bucket] = {}
        self._global: dict[str, deque[float]] = {}
        self._log: list[dict[str, Any]] = []
        self._faults: Counter[str] = Counter()
        self._last_id = 0

    def _next_id(self) -> str:
        snowflake = (int(self._now() * 1000) - PLATFORM_EPOCH_MS) << 22
        self._last_id = max(snowflake, self._last_id + 1)
        return str(self._last_id)

    # -- the request pipeline ---------------------------------------------------------------

    def handle(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Answer one HTTP request: (status, headers, body bytes)."""
        headers = {key.lower(): value for key, value in headers.items()}
        parts = urlsplit(target)
        path = unquote(parts.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query, keep_blank_values=True).items()}
        if path.startswith("/_sandbox/"):
            return self._control(method, path, body)
        version = re.match(r"^/api(?:/v(\d+))?(?=/|$)", path)
        if version:
            if version.group(1) and version.group(1) not in ("9", "10"):
                return self._respond(400, {"message": "Invalid API version", "code": 50041})
            path = path[version.end() :] or "/"
        matched = None
        allowed = False
        for route_method, template, pattern, handler, who in COMPILED_ROUTES:
            match = pattern.match(path)
            if match:
                allowed = True
                if route_method == method:
                    matched = (template, match.groupdict(), handler, who)
                    break
        entry = {
            "time": self._now(),
            "method": method,
            "path": path,
            "query": parts.query,
            "route": matched[0] if matched else None,
            "auth": (headers.get("authorization", "").split(" ", 1)[0] or None),
            "user_agent": headers.get("user-agent"),
            "content_type": headers.get("content-type"),
            "audit_log_reason": unquote(headers["x-audit-log-reason"]) if "x-audit-log-reason" in headers else None,
            "fault": None,
            "identity": None,
        }
        if matched is None:
            status, extra, payload = self._respond(
                405 if allowed else 404,
                {"message": "405: Method Not Allowed" if allowed else "404: Not Found", "code": 0},
            )
            return self._logged(entry, status, extra, payload)
        template, params, handler, who = matched
        call = Call(method, template, params, query, headers, body)
        if latency := float(self.config.get("latency_seconds") or 0):
            time.sleep(latency)
        with self.lock:
            fault = self._inject_fault(call)
            if fault is not None:
                entry["fault"] = fault[0]
                return self._logged(entry, *fault[1])
            try:
                call.caller = self._authenticate(call, who)
                entry["identity"] = call.caller.identity
                if call.caller.kind == "client" and call.body:
                    form = parse_qs(call.body.decode("utf-8", "replace"))
                    entry["form_keys"] = sorted(form)
                limit_headers = self._take_bucket(call)
            except PlatformError as error:
                return self._logged(entry, *self._respond(error.status, error.body, error.headers))
            try:
                status, answer = getattr(self, handler)(call)
            except PlatformError as error:
                return self._logged(entry, *self._respond(error.status, error.body, {**limit_headers, **error.headers}))
            return self._logged(entry, *self._respond(status, answer, limit_headers))

    def _logged(self, entry: dict[str, Any], status: int, headers: dict[str, str], payload: bytes) -> tuple:
        entry["status"] = status
        with self.lock:
            self._log.append(entry)
            overflow = len(self._log) - int(self.config["log_limit"])
            if overflow > 0:
                del self._log[:overflow]
        return status, headers, payload

    @staticmethod
    def _respond(status: int, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        headers = dict(headers or {})
        if body is None:
            return status, headers, b""
        if isinstance(body, str | bytes):
            payload = body.encode() if isinstance(body, str) else body
            headers.setdefault("Content-Type", "text/html")
            return status, headers, payload
        headers["Content-Type"] = "application/json"
        return status, headers, json.dumps(body, separators=(",", ":")).encode()

    # -- faults, authentication, rate limits ----------------------------------------------

    def _inject_fault(self, call: Call) -> tuple[str, tuple[int, dict[str, str], bytes]] | None:
        config = self.config
        if config["blocked"]:
            self._faults["blocked"] += 1
            # Observed: an edge ban answers 429 with no rate-limit header (and often an HTML body).
            return "blocked", self._respond(429, "error code: 1015")
        if int(config["fail_next"]) > 0:
            config["fail_next"] = int(config["fail_next"]) - 1
            self._faults["5xx"] += 1
            status = int(config["fail_next_status"])
            return "5xx", self._respond(status, {"message": f"{status}: {HTTPStatus(status).phrase}", "code": 0})
        draw = self.rng.random()
        low, high = config["fault_retry_after"]
        retry_after = round(self.rng.uniform(float(low), float(high)), 3)
        p5xx = float(config["error_5xx_probability"])
        pglobal = float(config["global_429_probability"])
        plimit = float(config["rate_limit_probability"])
        if draw < p5xx:
            self._faults["5xx"] += 1
            status = self.rng.choice(list(config["error_5xx_statuses"]))
            return "5xx", self._respond(status, {"message": f"{status}: {HTTPStatus(status).phrase}", "code": 0})
        if draw < p5xx + pglobal:
            self._faults["global_429"] += 1
            return "global_429", self._rate_limited(retry_after, is_global=True)
        if draw < p5xx + pglobal + plimit:
            self._faults["rate_limit"] += 1
            limit, _ = self._limits(call.route)
            headers = self._bucket_headers(call.route, limit, 0, retry_after)
            return "rate_limit", self._rate_limited(retry_after, is_global=False, headers=headers)
        return None

    def _rate_limited(
        self, retry_after: float, *, is_global: bool, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        headers = dict(headers or {})
        headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
        headers["X-RateLimit-Scope"] = "global" if is_global else "user"
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
        return self._respond(429, body, headers)

    def _authenticate(self, call: Call, who: str) -> Caller:
        header = call.headers.get("authorization", "")
        scheme, _, credential = header.partition(" ")
        if who == "client":
            return self._authenticate_client(call, scheme, credential)
        if not header:
            if who == "optional":
                return Caller("anonymous")
            raise PlatformError(*UNAUTHORIZED)
        if scheme == "Bot":
            if not secrets.compare_digest(credential.encode(), str(self.bot["token"]).encode()):
                raise PlatformError(*UNAUTHORIZED)
            return Caller("bot", "Bot", self.bot["id"])
        if scheme == "Bearer":
            grant = self.access_tokens.get(credential)
            if grant is None or grant["expires_at"] <= self._now():
                raise PlatformError(*UNAUTHORIZED)
            if who == "bot":
                raise _error(*MISSING_ACCESS)  # a user token cannot read guild structure
            return Caller("user", "Bearer", grant["user_id"], tuple(grant["scope"].split()))
        raise PlatformError(*UNAUTHORIZED)

    def _authenticate_client(self, call: Call, scheme: str, credential: str) -> Caller:
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
        expected_id = str(self.application["client_id"])
        expected_secret = str(self.application["client_secret"])
        if not (
            client_id
            and client_secret
            and secrets.compare_digest(client_id.encode(), expected_id.encode())
            and secrets.compare_digest(client_secret.encode(), expected_secret.encode())
        ):
            raise _oauth_error(401, "invalid_client")
        call.query = {**call.query, **form}  # the handler reads the form from here
        return Caller("client", scheme or None)

    def _limits(self, route: str) -> tuple[int, float]:
        custom = self.config["route_limits"].get(route)
        if custom:
            return int(custom[0]), float(custom[1])
        return int(self.config["bucket_limit"]), float(self.config["bucket_window_seconds"])

    @staticmethod
    def bucket_hash(route: str) -> str:
        """The opaque bucket name of a route (like the platform's, it leaves out the resource id)."""
        return hashlib.sha1(route.encode(), usedforsecurity=False).hexdigest()[:32]

    def _bucket_headers(self, route: str, limit: int, remaining: int, reset_after: float) -> dict[str, str]:
        reset_after = _ceil_ms(reset_after)
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": f"{self._now() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": self.bucket_hash(route),
        }

    def _take_bucket(self, call: Call) -> dict[str, str]:
        """Count the request against its bucket and the global limit, or answer 429."""
        now = time.monotonic()
        identity = call.caller.identity
        per_second = int(self.config["global_limit_per_second"] or 0)
        if per_second and identity != "client":
            recent = self._global.setdefault(identity, deque())
            while recent and recent[0] <= now - 1.0:
                recent.popleft()
            if len(recent) >= per_second:
                self._faults["global_limit"] += 1
                _, headers, payload = self._rate_limited(_ceil_ms(recent[0] + 1.0 - now), is_global=True)
                raise PlatformError(429, json.loads(payload), headers)
            recent.append(now)
        major = next((call.params[name] for name in MAJOR_PARAMETERS if name in call.params), "")
        key = (f"{call.method} {call.route}", major, identity)
        limit, window = self._limits(key[0])
        bucket = self._buckets.setdefault(key, Bucket(0, now))
        if now >= bucket.window_start + window:
            bucket.count, bucket.window_start = 0, now
        reset_after = max(0.0, bucket.window_start + window - now)
        if bucket.count >= limit:
            self._faults["bucket_limit"] += 1
            headers = self._bucket_headers(key[0], limit, 0, reset_after)
            _, headers, payload = self._rate_limited(_ceil_ms(reset_after), is_global=False, headers=headers)
            raise PlatformError(429, json.loads(payload), headers)
        bucket.count += 1
        return self._bucket_headers(key[0], limit, limit - bucket.count, reset_after)

    # -- the control API --------------------------------------------------------------------

    def _control(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            data = json.loads(body) if body else {}
        except ValueError:
            return self._respond(400, {"message": "body must be JSON"})
        if not isinstance(data, dict):
            return self._respond(400, {"message": "body must be a JSON object"})
        try:
            if (method, path) == ("GET", "/_sandbox/stats"):
                return self._respond(200, self.stats())
            if (method, path) == ("GET", "/_sandbox/log"):
                return self._respond(200, {"requests": self.request_log})
            if (method, path) == ("POST", "/_sandbox/config"):
                return self._respond(200, self.configure(**data))
            if (method, path) == ("POST", "/_sandbox/oauth/codes"):
                code = self.mint_code(str(data["user_id"]), data.get("redirect_uri"), data.get("scope"))
                return self._respond(201, {"code": code})
            if (method, path) == ("POST", "/_sandbox/reset"):
                self.reset(config=bool(data.get("config")))
                return self._respond(204, None)
        except (KeyError, ValueError, TypeError) as error:
            return self._respond(400, {"message": str(error)})
        return self._respond(404, {"message": "unknown sandbox control endpoint"})

    # -- JSON shapes --------------------------------------------------------------------------

    def _user_json(self, user: dict[str, Any], *, private: bool = False, scopes: tuple[str, ...] = ()) -> dict:
        body = {
            "id": user["id"],
            "username": user["username"],
            "avatar": user.get("avatar"),
            "discriminator": user.get("discriminator", "0"),
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "global_name": user.get("global_name"),
            "avatar_decoration_data": None,
            "collectibles": None,
            "primary_guild": None,
        }
        if user.get("bot"):
            body["bot"] = True
        if private:
            body.update({"mfa_enabled": False, "locale": user.get("locale", "en-US"), "premium_type": 0})
            if user.get("bot") or "email" in scopes:
                body.update({"email": user.get("email"), "verified": bool(user.get("verified"))})
        return body

    @staticmethod
    def _role_json(role: dict[str, Any]) -> dict[str, Any]:
        body = {
            "id": role["id"],
            "name": role["name"],
            "permissions": str(role.get("permissions", "0")),
            "position": role.get("position", 0),
            "color": role.get("color", 0),
            "colors": {"primary_color": role.get("color", 0), "secondary_color": None, "tertiary_color": None},
            "hoist": role.get("hoist", False),
            "managed": role.get("managed", False),
            "mentionable": role.get("mentionable", False),
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }
        if role.get("tags"):
            body["tags"] = role["tags"]
        return body

    @staticmethod
    def _channel_json(channel: dict[str, Any]) -> dict[str, Any]:
        body = {
            "id": channel["id"],
            "type": channel["type"],
            "flags": 0,
            "guild_id": channel["guild_id"],
            "name": channel["name"],
            "parent_id": channel.get("parent_id"),
            "position": channel.get("position", 0),
            "permission_overwrites": [
                {"id": item["id"], "type": item["type"], "allow": str(item["allow"]), "deny": str(item["deny"])}
                for item in channel.get("permission_overwrites", [])
            ],
        }
        if channel["type"] in TEXT_LIKE:
            body.update(
                topic=channel.get("topic"),
                nsfw=channel.get("nsfw", False),
                rate_limit_per_user=channel.get("rate_limit_per_user", 0),
                last_message_id=None,
            )
        elif channel["type"] in VOICE_LIKE:
            body.update(
                bitrate=channel.get("bitrate", 64000),
                user_limit=channel.get("user_limit", 0),
                rtc_region=None,
                nsfw=channel.get("nsfw", False),
                rate_limit_per_user=0,
                last_message_id=None,
            )
        return body

    def _guild_json(self, guild: dict[str, Any], with_counts: bool) -> dict[str, Any]:
        body = {
            "id": guild["id"],
            "name": guild["name"],
            "icon": guild.get("icon"),
            "description": guild.get("description"),
            "home_header": None,
            "splash": None,
            "discovery_splash": None,
            "features": list(guild.get("features", [])),
            "banner": None,
            "owner_id": guild["owner_id"],
            "application_id": None,
            "region": "deprecated",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "widget_enabled": False,
            "widget_channel_id": None,
            "verification_level": 0,
            "roles": [self._role_json(role) for role in self._sorted_roles(guild)],
            "default_message_notifications": 0,
            "mfa_level": 0,
            "explicit_content_filter": 0,
            "max_presences": None,
            "max_members": 500000,
            "max_stage_video_channel_users": 50,
            "max_video_channel_users": 25,
            "vanity_url_code": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": guild.get("preferred_locale", "en-US"),
            "rules_channel_id": None,
            "safety_alerts_channel_id": None,
            "public_updates_channel_id": None,
            "premium_progress_bar_enabled": False,
            "nsfw": False,
            "nsfw_level": 0,
            "emojis": [],
            "stickers": [],
            "incidents_data": None,
        }
        if with_counts:
            body.update(self._counts(guild))
        return body

    @staticmethod
    def _counts(guild: dict[str, Any]) -> dict[str, int]:
        members = len(guild["members"])
        return {
            "approximate_member_count": members,
            "approximate_presence_count": min(members, int(guild.get("presence_count", 0))),
        }

    @staticmethod
    def _sorted_roles(guild: dict[str, Any]) -> list[dict[str, Any]]:
        return sorted(guild["roles"].values(), key=lambda role: (role.get("position", 0), int(role["id"])))

    # -- permissions --------------------------------------------------------------------------

    def _permissions(self, guild: dict[str, Any], user_id: str) -> int:
        if guild["owner_id"] == user_id:
            return ALL_PERMISSIONS
        member = guild["members"].get(user_id)
        if member is None:
            return 0
        value = int(guild["roles"][guild["id"]]["permissions"])
        for role_id in member["roles"]:
            value |= int(guild["roles"].get(role_id, {}).get("permissions", 0))
        return ALL_PERMISSIONS if value & ADMINISTRATOR else value

    def _top_position(self, guild: dict[str, Any], user_id: str) -> float:
        if guild["owner_id"] == user_id:
            return math.inf
        member = guild["members"].get(user_id, {"roles": []})
        return max(
            (guild["roles"][role_id]["position"] for role_id in member["roles"] if role_id in guild["roles"]), default=0
        )

    def _bot_guild(self, guild_id: str) -> dict[str, Any]:
        guild = self.guilds.get(guild_id)
        if guild is None or self.bot["id"] not in guild["members"]:
            raise _error(404, 10004, "Unknown Guild")  # not in it and non-existent look the same
        return guild

    def _require(self, guild: dict[str, Any], flag: int) -> int:
        permissions = self._permissions(guild, self.bot["id"])
        if not permissions & flag:
            raise _error(*MISSING_PERMISSIONS)
        return permissions

    @staticmethod
    def _grantable(bot_permissions: int, *values: int) -> None:
        # The bot can only grant permissions it has itself (ADMINISTRATOR has them all).
        for value in values:
            if value & ~bot_permissions:
                raise _error(*MISSING_PERMISSIONS)

    # -- handlers: invites, OAuth2, users ----------------------------------------------------

    def _get_invite(self, call: Call) -> tuple[int, Any]:
        invite = self.invites.get(call.params["code"])  # codes are case-sensitive
        if invite is None or (invite["expires_at"] is not None and invite["expires_at"] <= self._now()):
            raise _error(404, 10006, "Unknown Invite")
        guild = self.guilds[invite["guild_id"]]
        channel = guild["channels"][invite["channel_id"]]
        body: dict[str, Any] = {
            "type": 0,
            "code": invite["code"],
            "expires_at": None if invite["expires_at"] is None else _iso(invite["expires_at"]),
            "guild": {
                "id": guild["id"],
                "name": guild["name"],
                "splash": None,
                "banner": None,
                "description": guild.get("description"),
                "icon": guild.get("icon"),
                "features": list(guild.get("features", [])),
                "verification_level": 0,
                "vanity_url_code": None,
                "nsfw_level": 0,
                "nsfw": False,
                "premium_subscription_count": 0,
            },
            "guild_id": guild["id"],
            "channel": {"id": channel["id"], "type": channel["type"], "name": channel["name"]},
        }
        if invite.get("inviter_id") in self.users:
            body["inviter"] = self._user_json(self.users[invite["inviter_id"]])
        if _truthy(call.query.get("with_counts")):
            body.update(self._counts(guild))
        return 200, body

    def _token(self, call: Call) -> tuple[int, Any]:
        form = call.query
        grant_type = form.get("grant_type")
        now = self._now()
        if grant_type == "authorization_code":
            if not form.get("code"):
                raise _oauth_error(400, "invalid_request", 'Missing "code" in request.')
            grant = self.codes.get(form["code"])
            if grant is None or grant["used"] or grant["expires_at"] <= now:
                raise _oauth_error(400, "invalid_grant", 'Invalid "code" in request.')
            if form.get("redirect_uri") != grant["redirect_uri"]:
                raise _oauth_error(400, "invalid_grant", 'Invalid "redirect_uri" in request.')
            grant["used"] = True  # single use
            user_id, scope = grant["user_id"], grant["scope"]
        elif grant_type == "refresh_token":
            old = self.refresh_tokens.pop(form.get("refresh_token") or "", None)
            if old is None:
                raise _oauth_error(400, "invalid_grant", 'Invalid "refresh_token" in request.')
            user_id, scope = old["user_id"], old["scope"]
        else:
            raise _oauth_error(400, "unsupported_grant_type", f"Grant type {grant_type} is not supported")
        ttl = int(self.application.get("access_token_ttl_seconds", 604800))
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access_tokens[access] = {"user_id": user_id, "scope": scope, "expires_at": now + ttl}
        self.refresh_tokens[refresh] = {"user_id": user_id, "scope": scope}
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ttl,
            "refresh_token": refresh,
            "scope": scope,
        }

    def _get_me(self, call: Call) -> tuple[int, Any]:
        user = self.users[call.caller.user_id or self.bot["id"]]
        return 200, self._user_json(user, private=True, scopes=call.caller.scopes)

    def _get_my_guilds(self, call: Call) -> tuple[int, Any]:
        caller = call.caller
        if caller.kind == "user" and "guilds" not in caller.scopes:
            raise _error(401, 0, "401: Unauthorized")
        errors: dict[str, Any] = {}
        raw_limit = call.query.get("limit", "200")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 200:
            errors["limit"] = _field_error("NUMBER_TYPE_MAX", "int value should be between 1 and 200.")
        for name in ("after", "before"):
            if name in call.query and not call.query[name].isdigit():
                errors[name] = _field_error("NUMBER_TYPE_COERCE", f'Value "{call.query[name]}" is not snowflake.')
        if errors:
            raise _invalid_form(errors)
        user_id = caller.user_id or self.bot["id"]
        mine = sorted((g for g in self.guilds.values() if user_id in g["members"]), key=lambda g: int(g["id"]))
        if "after" in call.query:
            mine = [g for g in mine if int(g["id"]) > int(call.query["after"])]
        if "before" in call.query:
            mine = [g for g in mine if int(g["id"]) < int(call.query["before"])][-int(raw_limit) :]
        with_counts = _truthy(call.query.get("with_counts"))
        answer = []
        for guild in mine[: int(raw_limit)]:
            item = {
                "id": guild["id"],
                "name": guild["name"],
                "icon": guild.get("icon"),
                "banner": None,
                "owner": guild["owner_id"] == user_id,
                "permissions": str(self._permissions(guild, user_id)),
                "features": list(guild.get("features", [])),
            }
            if with_counts:
                item.update(self._counts(guild))
            answer.append(item)
        return 200, answer

    # -- handlers: guild structure ------------------------------------------------------------

    def _get_guild(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        return 200, self._guild_json(guild, _truthy(call.query.get("with_counts")))

    def _get_member(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        user_id = call.params["user_id"]
        if user_id not in self.users:
            raise _error(404, 10013, "Unknown User")
        member = guild["members"].get(user_id)
        if member is None:
            raise _error(404, 10007, "Unknown Member")
        return 200, {
            "avatar": None,
            "banner": None,
            "communication_disabled_until": None,
            "flags": 0,
            "joined_at": _iso(member["joined_at"]),
            "nick": member.get("nick"),
            "pending": False,
            "premium_since": None,
            "roles": list(member["roles"]),
            "user": self._user_json(self.users[user_id]),
            "mute": False,
            "deaf": False,
        }

    def _list_roles(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        return 200, [self._role_json(role) for role in self._sorted_roles(guild)]

    def _create_role(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        bot_permissions = self._require(guild, MANAGE_ROLES)
        data = call.json()
        if not isinstance(data, dict):
            raise _invalid_form(_field_error("DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"))
        errors: dict[str, Any] = {}
        name = data.get("name")
        if name is not None and (not isinstance(name, str) or not 1 <= len(name) <= 100):
            errors["name"] = _field_error("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
        everyone = int(guild["roles"][guild["id"]]["permissions"])
        permissions = everyone if data.get("permissions") is None else _bitfield(data["permissions"])
        if permissions is None:
            errors["permissions"] = _field_error("NUMBER_TYPE_COERCE", f'Value "{data["permissions"]}" is not int.')
        color = data.get("color", 0) or 0
        if not isinstance(color, int) or isinstance(color, bool) or not 0 <= color <= 0xFFFFFF:
            errors["color"] = _field_error("NUMBER_TYPE_MAX", "int value should be less than or equal to 16777215.")
        for flag in ("hoist", "mentionable"):
            if data.get(flag) is not None and not isinstance(data[flag], bool):
                errors[flag] = _field_error("BOOLEAN_TYPE_COERCE", "Must be either true or false.")
        if errors:
            raise _invalid_form(errors)
        if len(guild["roles"]) >= MAX_ROLES:
            raise _error(400, 30005, f"Maximum number of server roles reached ({MAX_ROLES})")
        self._grantable(bot_permissions, permissions)
        for role in guild["roles"].values():
            if role["id"] != guild["id"]:
                role["position"] += 1  # a new role appears just above @everyone
        role = {
            "id": self._next_id(),
            "name": name or "new role",
            "permissions": str(permissions),
            "position": 1,
            "color": color,
            "hoist": bool(data.get("hoist")),
            "mentionable": bool(data.get("mentionable")),
            "managed": False,
        }
        guild["roles"][role["id"]] = role
        return 200, self._role_json(role)

    def _reorder_roles(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        self._require(guild, MANAGE_ROLES)
        data = call.json()
        if not isinstance(data, list):
            raise _invalid_form(_field_error("LIST_TYPE_CONVERT", "Only iterables may be used in a ListType"))
        errors: dict[str, Any] = {}
        for index, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                errors[str(index)] = {"id": _field_error("BASE_TYPE_REQUIRED", "This field is required")}
            elif item.get("position") is not None and not isinstance(item["position"], int):
                errors[str(index)] = {"position": _field_error("NUMBER_TYPE_COERCE", "Value is not int.")}
        if errors:
            raise _invalid_form(errors)
        ceiling = self._top_position(guild, self.bot["id"])
        for item in data:
            role = guild["roles"].get(item["id"])
            if role is None:
                raise _error(404, 10011, "Unknown Role")
            position = item.get("position")
            if position is None or role["id"] == guild["id"]:
                continue
            if role["position"] >= ceiling or position >= ceiling:
                raise _error(*MISSING_PERMISSIONS)  # only roles below the bot's highest role move
        moved = {
            item["id"]: item["position"]
            for item in data
            if item.get("position") is not None and item["id"] != guild["id"]
        }
        # Roles keep their relative order; each moved role is put at the position it asked for.
        order = [role for role in self._sorted_roles(guild) if role["id"] != guild["id"] and role["id"] not in moved]
        for role_id, position in sorted(moved.items(), key=lambda pair: (pair[1], int(pair[0]))):
            order.insert(min(max(position, 1), len(order) + 1) - 1, guild["roles"][role_id])
        for new_position, role in enumerate(order, start=1):
            role["position"] = new_position
        return 200, [self._role_json(role) for role in self._sorted_roles(guild)]

    def _list_channels(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        channels = sorted(guild["channels"].values(), key=lambda channel: (channel["position"], int(channel["id"])))
        return 200, [self._channel_json(channel) for channel in channels]

    def _overwrites(
        self, guild: dict[str, Any], raw: Any, bot_permissions: int, errors: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            errors["permission_overwrites"] = _field_error("LIST_TYPE_CONVERT", "Only iterables may be used.")
            return []
        if len(raw) > MAX_CREATE_OVERWRITES:
            errors["permission_overwrites"] = _field_error(
                "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_CREATE_OVERWRITES} or fewer in length."
            )
            return []
        result, nested = [], {}
        for index, item in enumerate(raw):
            problems = {}
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"].isdigit():
                problems["id"] = _field_error("BASE_TYPE_REQUIRED", "This field is required")
                nested[str(index)] = problems
                continue
            kind = item.get("type", 0)
            if kind not in (0, 1):
                problems["type"] = _field_error("BASE_TYPE_CHOICES", "Value must be one of {0, 1}.")
            allow = _bitfield(item.get("allow") or 0)
            deny = _bitfield(item.get("deny") or 0)
            if allow is None:
                problems["allow"] = _field_error("NUMBER_TYPE_COERCE", "Value is not int.")
            if deny is None:
                problems["deny"] = _field_error("NUMBER_TYPE_COERCE", "Value is not int.")
            if problems:
                nested[str(index)] = problems
                continue
            result.append({"id": item["id"], "type": kind, "allow": str(allow), "deny": str(deny)})
        if nested:
            errors["permission_overwrites"] = nested
            return []
        for overwrite in result:
            allow, deny = int(overwrite["allow"]), int(overwrite["deny"])
            if (allow | deny) & MANAGE_ROLES and not bot_permissions & ADMINISTRATOR:
                raise _error(*MISSING_PERMISSIONS)  # MANAGE_ROLES in an overwrite needs ADMINISTRATOR
            self._grantable(bot_permissions, allow, deny)
        return result

    def _create_channel(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        bot_permissions = self._require(guild, MANAGE_CHANNELS)
        data = call.json()
        if not isinstance(data, dict):
            raise _invalid_form(_field_error("DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"))
        errors: dict[str, Any] = {}
        name = data.get("name")
        if name is None:
            errors["name"] = _field_error("BASE_TYPE_REQUIRED", "This field is required")
        elif not isinstance(name, str) or not 1 <= len(name) <= 100:
            errors["name"] = _field_error("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
        kind = data.get("type") if data.get("type") is not None else GUILD_TEXT
        features = set(guild.get("features", []))
        if (
            kind not in CREATABLE_CHANNEL_TYPES
            or (kind == GUILD_ANNOUNCEMENT and "NEWS" not in features)
            or (kind == GUILD_STAGE_VOICE and "COMMUNITY" not in features)
        ):
            errors["type"] = _field_error(
                "BASE_TYPE_CHOICES", f"Value must be one of {sorted(CREATABLE_CHANNEL_TYPES)}."
            )
        topic = data.get("topic")
        topic_max = 4096 if kind in (GUILD_FORUM, GUILD_MEDIA) else 1024
        if topic is not None and (not isinstance(topic, str) or len(topic) > topic_max):
            errors["topic"] = _field_error("BASE_TYPE_BAD_LENGTH", f"Must be between 0 and {topic_max} in length.")
        slowmode = data.get("rate_limit_per_user")
        if slowmode is not None and (not isinstance(slowmode, int) or not 0 <= slowmode <= 21600):
            errors["rate_limit_per_user"] = _field_error("NUMBER_TYPE_MAX", "int value should be between 0 and 21600.")
        user_limit = data.get("user_limit")
        if user_limit is not None and (not isinstance(user_limit, int) or not 0 <= user_limit <= 99):
            errors["user_limit"] = _field_error("NUMBER_TYPE_MAX", "int value should be between 0 and 99.")
        parent_id = data.get("parent_id")
        if parent_id is not None:
            parent = guild["channels"].get(str(parent_id))
            if kind == GUILD_CATEGORY or parent is None or parent["type"] != GUILD_CATEGORY:
                # Sandbox wording: the platform's exact leaf code here is undocumented.
                errors["parent_id"] = _field_error("CHANNEL_PARENT_INVALID_TYPE", "Not a category.")
            elif sum(1 for c in guild["channels"].values() if c.get("parent_id") == parent["id"]) >= (
                MAX_CHANNELS_PER_CATEGORY
            ):
                errors["parent_id"] = _field_error(
                    "CHANNEL_PARENT_MAX_CHANNELS",
                    f"Maximum number of channels in category reached ({MAX_CHANNELS_PER_CATEGORY})",
                )
        overwrites = self._overwrites(guild, data.get("permission_overwrites"), bot_permissions, errors)
        if errors:
            raise _invalid_form(errors)
        if len(guild["channels"]) >= MAX_CHANNELS:
            raise _error(400, 30013, f"Maximum number of guild channels reached ({MAX_CHANNELS})")
        if kind in TEXT_LIKE and self.config["normalize_channel_names"]:
            name = _normalize_name(name)
        siblings = [c["position"] for c in guild["channels"].values() if c.get("parent_id") == parent_id]
        channel = {
            "id": self._next_id(),
            "type": kind,
            "guild_id": guild["id"],
            "name": name,
            "position": data["position"] if isinstance(data.get("position"), int) else max(siblings, default=-1) + 1,
            "parent_id": None if parent_id is None else str(parent_id),
            "permission_overwrites": overwrites,
            "topic": topic,
            "nsfw": bool(data.get("nsfw")),
            "rate_limit_per_user": slowmode or 0,
        }
        if kind in VOICE_LIKE:
            channel.update(bitrate=data.get("bitrate") or 64000, user_limit=user_limit or 0)
        guild["channels"][channel["id"]] = channel
        self.channel_guild[channel["id"]] = guild["id"]
        return 201, self._channel_json(channel)

    def _reorder_channels(self, call: Call) -> tuple[int, Any]:
        guild = self._bot_guild(call.params["guild_id"])
        self._require(guild, MANAGE_CHANNELS)
        data = call.json()
        if not isinstance(data, list):
            raise _invalid_form(_field_error("LIST_TYPE_CONVERT", "Only iterables may be used in a ListType"))
        parent_changes = 0
        for index, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise _invalid_form({str(index): {"id": _field_error("BASE_TYPE_REQUIRED", "This field is required")}})
            channel = guild["channels"].get(item["id"])
            if channel is None:
                raise _error(404, 10003, "Unknown Channel")
            if "parent_id" in item and item["parent_id"] != channel.get("parent_id"):
                parent_changes += 1
                parent = guild["channels"].get(str(item["parent_id"])) if item["parent_id"] else None
                if item["parent_id"] and (parent is None or parent["type"] != GUILD_CATEGORY):
                    raise _invalid_form(
                        {str(index): {"parent_id": _field_error("CHANNEL_PARENT_INVALID_TYPE", "Not a category.")}}
                    )
        if parent_changes > 1:
            raise _error(400, 40009, "Only one channel's parent may be changed at a time.")
        for item in data:
            channel = guild["channels"][item["id"]]
            if isinstance(item.get("position"), int):
                channel["position"] = item["position"]
            if "parent_id" in item:
                channel["parent_id"] = item["parent_id"] or None
                if item.get("lock_permissions") and channel["parent_id"]:
                    parent = guild["channels"][channel["parent_id"]]
                    channel["permission_overwrites"] = copy.deepcopy(parent["permission_overwrites"])
        return 204, None

    def _put_overwrite(self, call: Call) -> tuple[int, Any]:
        channel_id = call.params["channel_id"]
        guild_id = self.channel_guild.get(channel_id)
        if guild_id is None:
            raise _error(404, 10003, "Unknown Channel")
        guild = self.guilds[guild_id]
        if self.bot["id"] not in guild["members"]:
            raise _error(*MISSING_ACCESS)
        bot_permissions = self._require(guild, MANAGE_ROLES)
        data = call.json()
        if not isinstance(data, dict):
            raise _invalid_form(_field_error("DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType"))
        errors: dict[str, Any] = {}
        kind = data.get("type")
        if kind not in (0, 1):
            errors["type"] = _field_error("BASE_TYPE_CHOICES", "Value must be one of {0, 1}.")
        allow, deny = _bitfield(data.get("allow") or 0), _bitfield(data.get("deny") or 0)
        if allow is None:
            errors["allow"] = _field_error("NUMBER_TYPE_COERCE", "Value is not int.")
        if deny is None:
            errors["deny"] = _field_error("NUMBER_TYPE_COERCE", "Value is not int.")
        if errors:
            raise _invalid_form(errors)
        target = call.params["overwrite_id"]
        if kind == 0 and target not in guild["roles"]:
            raise _error(404, 10011, "Unknown Role")
        if kind == 1 and target not in guild["members"]:
            raise _error(404, 10007, "Unknown Member")
        self._grantable(bot_permissions, allow, deny)
        channel = guild["channels"][channel_id]
        overwrites = [item for item in channel["permission_overwrites"] if item["id"] != target]
        overwrites.append({"id": target, "type": kind, "allow": str(allow), "deny": str(deny)})
        channel["permission_overwrites"] = overwrites
        return 204, None


class _Handler(BaseHTTPRequestHandler):
    server: SandboxServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's session pools connections
    timeout = 30  # an idle keep-alive connection ends its thread after this
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms delayed-ACK stalls

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, headers, payload = self.server.state.handle(self.command, self.path, dict(self.headers.items()), body)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload and self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server's naming

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the state keeps a structured log; stderr stays quiet in tests


class SandboxServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: SandboxState):
        self.state = state
        super().__init__(address, _Handler)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}{API_ROOT}"

    def start(self) -> SandboxServer:
        self._thread = threading.Thread(target=self.serve_forever, name="chat-sandbox", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop serving and release the port."""
        super().shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def start_sandbox(
    host: str = "127.0.0.1", port: int = 0, fixture: dict[str, Any] | str | Path | None = None, **fault_config: Any
) -> tuple[SandboxServer, str]:
    """Start the sandbox in a background thread; returns the server and the API root URL."""
    server = SandboxServer((host, port), SandboxState(fixture, **fault_config)).start()
    return server, server.base_url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the chat-platform sandbox on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--fixture", default=str(DEFAULT_FIXTURE))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rate-limit-probability", type=float, default=0.0)
    parser.add_argument("--global-429-probability", type=float, default=0.0)
    parser.add_argument("--error-5xx-probability", type=float, default=0.0)
    parser.add_argument("--bucket-limit", type=int, default=DEFAULT_CONFIG["bucket_limit"])
    parser.add_argument("--bucket-window-seconds", type=float, default=DEFAULT_CONFIG["bucket_window_seconds"])
    args = parser.parse_args(argv)
    server, base_url = start_sandbox(
        args.host,
        args.port,
        args.fixture,
        seed=args.seed,
        rate_limit_probability=args.rate_limit_probability,
        global_429_probability=args.global_429_probability,
        error_5xx_probability=args.error_5xx_probability,
        bucket_limit=args.bucket_limit,
        bucket_window_seconds=args.bucket_window_seconds,
    )
    state = server.state
    print(f"chat-platform sandbox on {base_url}")
    print("settings for the service:")
    print(f"  CHAT_API_BASE_URL={base_url}")
    print(f"  CHAT_CLIENT_ID={state.application['client_id']}")
    print(f"  CHAT_CLIENT_SECRET={state.application['client_secret']}")
    print(f"  CHAT_REDIRECT_URIS={','.join(state.application['redirect_uris'])}")
    print(f"  SVC_BOT_TOKEN={state.bot['token']}")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
