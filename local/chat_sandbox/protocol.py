"""What every part of the sandbox speaks: the platform's constants, its refusals, and the request being answered."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, get_args

from svcconf.config.permissions import PERMISSION_BITS
from svcconf.config.vocabulary import Locale

API_ROOT = "/api/v10"
PLATFORM_EPOCH_MS = 1420070400000

ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
MANAGE_CHANNELS = 1 << PERMISSION_BITS["MANAGE_CHANNELS"]
MANAGE_ROLES = 1 << PERMISSION_BITS["MANAGE_ROLES"]
MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]

GUILD_TEXT, GUILD_VOICE, GUILD_CATEGORY, GUILD_ANNOUNCEMENT = 0, 2, 4, 5
GUILD_STAGE_VOICE, GUILD_FORUM, GUILD_MEDIA = 13, 15, 16
CREATABLE_CHANNEL_TYPES = (
    GUILD_TEXT,
    GUILD_VOICE,
    GUILD_CATEGORY,
    GUILD_ANNOUNCEMENT,
    GUILD_STAGE_VOICE,
    GUILD_FORUM,
    GUILD_MEDIA,
)
TEXT_LIKE = {GUILD_TEXT, GUILD_ANNOUNCEMENT, GUILD_FORUM, GUILD_MEDIA}
VOICE_LIKE = {GUILD_VOICE, GUILD_STAGE_VOICE}
MAX_ROLES = 250
MAX_CHANNELS = 500
MAX_CHANNELS_PER_CATEGORY = 50
MAX_BODY_OVERWRITES = 100  # per create or modify body
MAX_BITRATE = {GUILD_VOICE: 96000, GUILD_STAGE_VOICE: 64000}  # an unboosted guild's ceilings
MAX_FORUM_TAGS = 20
AFK_TIMEOUTS = (60, 300, 900, 1800, 3600)
REQUIRE_TAG = 1 << 4  # a forum's channel flag: posts must carry a tag
LOCALES = frozenset(get_args(Locale))

MAJOR_PARAMETERS = ("guild_id", "channel_id", "webhook_id")


class PlatformError(Exception):
    """An answer other than success, raised inside a handler."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None):
        self.status = status
        self.body = body
        self.headers = headers or {}
        super().__init__(f"{status}")


def error(status: int, code: int, message: str) -> PlatformError:
    return PlatformError(status, {"message": message, "code": code})


def field_error(code: str, message: str) -> dict[str, Any]:
    return {"_errors": [{"code": code, "message": message}]}


def invalid_form(errors: dict[str, Any]) -> PlatformError:
    return PlatformError(400, {"message": "Invalid Form Body", "code": 50035, "errors": errors})


def unauthorized() -> PlatformError:
    return PlatformError(401, {"message": "401: Unauthorized", "code": 0})


def missing_access() -> PlatformError:
    return error(403, 50001, "Missing Access")


def missing_permissions() -> PlatformError:
    return error(403, 50013, "Missing Permissions")


Answer = tuple[int, dict[str, str], bytes]  # status, headers, body bytes


def render(status: int, body: Any, headers: dict[str, str] | None = None) -> Answer:
    """An HTTP answer: JSON for objects and lists, text for strings, nothing for None."""
    headers = dict(headers or {})
    if body is None:
        return status, headers, b""
    if isinstance(body, str | bytes):
        headers.setdefault("Content-Type", "text/html")
        return status, headers, body.encode() if isinstance(body, str) else body
    headers["Content-Type"] = "application/json"
    return status, headers, json.dumps(body, separators=(",", ":")).encode()


def iso(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).isoformat(timespec="microseconds")


def ceil_ms(seconds: float) -> float:
    """Seconds rounded up to the millisecond: a client that waits what it is told never comes back early."""
    return math.ceil(seconds * 1000) / 1000


def truthy(value: str | None) -> bool:
    return value in ("true", "True", "1")


@dataclass
class Caller:
    kind: str  # "anonymous" | "bot" | "user" | "client" | "person" (a second actor's own token: actors.py)
    scheme: str | None = None  # "Bot" | "Bearer" | "Basic"
    user_id: str | None = None
    scopes: tuple[str, ...] = ()

    @property
    def identity(self) -> str:
        identities = {
            "bot": "bot",
            "user": f"user:{self.user_id}",
            "person": f"person:{self.user_id}",
            "client": "client",
        }
        return identities.get(self.kind, "anonymous")


@dataclass
class Call:
    """One platform request, matched to its route template."""

    method: str
    route: str
    params: dict[str, str]
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    caller: Caller = field(default_factory=lambda: Caller("anonymous"))

    @property
    def major(self) -> str:
        """The top-level resource the platform keys rate limits by."""
        return next((self.params[name] for name in MAJOR_PARAMETERS if name in self.params), "")

    def json(self) -> Any:
        if not self.body:
            raise invalid_form(field_error("BASE_TYPE_REQUIRED", "This field is required"))
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
            raise error(400, 50109, "The request body contains invalid JSON.") from None
