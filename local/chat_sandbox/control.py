"""The sandbox's own API under `/_sandbox/` (not the platform's): settings, OAuth codes, reset, and views of
its users and guilds for people and end-to-end tests. Errors come in the service's error body
(`{"error": "Bad Request", "message": "...", "code": 400, "details": [...], "requestId": "..."}`).
docs/04-chat-platform.md, Control API, documents each endpoint.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from local.chat_sandbox import actors
from local.chat_sandbox.access import permissions_of
from local.chat_sandbox.bodies import Snowflake
from local.chat_sandbox.payloads import forum_json, settings_json, sorted_channels, sorted_roles
from local.chat_sandbox.protocol import ADMINISTRATOR, GUILD_FORUM, MANAGE_GUILD, Answer, render
from local.chat_sandbox.routes import ROUTES
from svcconf.errors import ErrorBody, FieldError, field_path, reason_phrase

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState


class ControlError(Exception):
    def __init__(self, status: int, message: str, details: list[FieldError] | None = None):
        self.status, self.message, self.details = status, message, details
        super().__init__(message)


class MintCode(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user_id: Snowflake
    redirect_uri: str | None = None
    scope: str | None = None
    code_challenge: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{43}$")  # S256 of the PKCE verifier


class AdvanceClock(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    advance_seconds: Annotated[float, Field(gt=0, le=366 * 86400)]


class UseQuota(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    roles: Annotated[int, Field(ge=0, le=10_000)] = 0
    channels: Annotated[int, Field(ge=0, le=10_000)] = 0
    age_seconds: Annotated[float, Field(ge=0, le=366 * 86400)] = 0.0  # how long ago they were made


class Reset(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    config: bool = False  # restore the default settings too


def _stats(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    return 200, state.stats()


def _log(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    return 200, {"requests": state.request_log}


def _configure(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    _shared_buckets_answered(data.get("shared_buckets"))
    return 200, _validated(lambda: state.configure(**data))


def _shared_buckets_answered(shared: Any) -> None:
    """A shared bucket names only routes the sandbox answers (a typo would count nothing together)."""
    answered = {f"{route.method} {route.template}" for route in ROUTES}
    for name, routes in shared.items() if isinstance(shared, dict) else ():
        for route in routes if isinstance(routes, list) else ():
            if isinstance(route, str) and route not in answered:
                message = f"{route!r} is not a route the sandbox answers"
                field = f"shared_buckets.{name}"
                raise ControlError(
                    400, f"Invalid request: {field}: {message}.", [FieldError(field=field, message=message)]
                )


def _mint_code(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    body = _validated(lambda: MintCode.model_validate(data))
    try:
        return 201, {"code": state.mint_code(body.user_id, body.redirect_uri, body.scope, body.code_challenge)}
    except KeyError:
        message = "is not a user of the sandbox (GET /_sandbox/users lists them)"
        raise ControlError(400, f"user_id: {message}.", [FieldError(field="user_id", message=message)]) from None


def _reset(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    state.reset(config=_validated(lambda: Reset.model_validate(data)).config)
    return 204, None


def _clock_view(state: SandboxState) -> dict[str, Any]:
    now = state.clock()
    return {
        "now": now,
        "iso": datetime.fromtimestamp(now, UTC).isoformat(timespec="seconds"),
        "offset_seconds": state.clock_offset,
    }


def _clock(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    return 200, _clock_view(state)


def _advance_clock(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    state.advance_clock(_validated(lambda: AdvanceClock.model_validate(data)).advance_seconds)
    return 200, _clock_view(state)


def _quota(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    """A guild's creation quota per kind: limit, used, remaining and the seconds until a slot frees."""
    if params["guild_id"] not in state.guilds:
        raise ControlError(404, f"No guild {params['guild_id']} in the sandbox.")
    return 200, {"guild_id": params["guild_id"], **state.quota(params["guild_id"])}


def _use_quota(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    """Counts creations against a guild's quota, as if the bot had made them `age_seconds` ago."""
    used = _validated(lambda: UseQuota.model_validate(data))
    if params["guild_id"] in state.guilds:
        state.use_quota(params["guild_id"], roles=used.roles, channels=used.channels, age_seconds=used.age_seconds)
    return _quota(state, data, params)


def _users(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    """Every user of the fixture with the guilds they own or can manage (owner, ADMINISTRATOR or MANAGE_GUILD)."""
    with state.lock:
        users = [user for user in state.users.values() if user["id"] != state.bot["id"]]
        return 200, {
            "bot": {"id": state.bot["id"], "username": state.bot["username"]},
            "users": [
                {
                    "id": user["id"],
                    "username": user["username"],
                    "global_name": user.get("global_name"),
                    "email": user.get("email"),
                    "manages": [
                        {
                            "id": guild["id"],
                            "name": guild["name"],
                            "owner": guild["owner_id"] == user["id"],
                            "bot_present": state.bot["id"] in guild["members"],
                        }
                        for guild in sorted(state.guilds.values(), key=lambda guild: int(guild["id"]))
                        if permissions_of(guild, user["id"]) & (ADMINISTRATOR | MANAGE_GUILD)
                    ],
                }
                for user in sorted(users, key=lambda user: int(user["id"]))
            ],
        }


def _guild(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    """One guild's live state, whether or not the bot is in it."""
    with state.lock:
        guild = state.guilds.get(params["guild_id"])
        if guild is None:
            raise ControlError(404, f"No guild {params['guild_id']} in the sandbox.")
        return 200, {
            "id": guild["id"],
            "name": guild["name"],
            "owner_id": guild["owner_id"],
            "features": list(guild.get("features", [])),
            "settings": settings_json(guild),
            "bot_present": state.bot["id"] in guild["members"],
            "members": [{"user_id": user_id, "roles": list(m["roles"])} for user_id, m in guild["members"].items()],
            "roles": [
                {
                    "id": role["id"],
                    "name": role["name"],
                    "position": role["position"],
                    "permissions": str(role.get("permissions", "0")),
                    "color": role.get("color", 0),
                    "hoist": role.get("hoist", False),
                    "mentionable": role.get("mentionable", False),
                    "managed": role.get("managed", False),
                    "unicode_emoji": role.get("unicode_emoji"),
                }
                for role in sorted_roles(guild)
            ],
            "channels": [
                {
                    "id": channel["id"],
                    "type": channel["type"],
                    "name": channel["name"],
                    "parent_id": channel.get("parent_id"),
                    "position": channel.get("position", 0),
                    "topic": channel.get("topic"),
                    "nsfw": channel.get("nsfw", False),
                    "rate_limit_per_user": channel.get("rate_limit_per_user", 0),
                    "user_limit": channel.get("user_limit"),
                    "bitrate": channel.get("bitrate"),
                    "video_quality_mode": channel.get("video_quality_mode"),
                    "flags": channel.get("flags", 0),
                    "permission_overwrites": [dict(item) for item in channel.get("permission_overwrites", [])],
                    **(forum_json(channel) if channel["type"] == GUILD_FORUM else {}),
                }
                for channel in sorted_channels(guild)
            ],
        }


def _act_as(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    """A person's token for a second actor (actors.py)."""
    body = _validated(lambda: actors.ActAs.model_validate(data))
    try:
        return 201, {"user_id": body.user_id, "token": actors.act_as(state, body.user_id)}
    except KeyError:
        message = "is not a user of the sandbox (GET /_sandbox/users lists them)"
        raise ControlError(400, f"user_id: {message}.", [FieldError(field="user_id", message=message)]) from None


def _add_members(state: SandboxState, data: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    """New users joined to a guild, holding its roles in turn (actors.py)."""
    body = _validated(lambda: actors.AddMembers.model_validate(data))
    if params["guild_id"] not in state.guilds:
        raise ControlError(404, f"No guild {params['guild_id']} in the sandbox.")
    try:
        added = actors.add_members(state, params["guild_id"], body.count, body.roles, body.per_member)
    except ValueError as refusal:
        raise ControlError(400, f"roles: {refusal}.", [FieldError(field="roles", message=str(refusal))]) from None
    return 201, {"guild_id": params["guild_id"], "added": len(added), "first": added[0], "last": added[-1]}


Endpoint = Callable[["SandboxState", dict[str, Any], dict[str, str]], tuple[int, Any]]
ENDPOINTS: list[tuple[str, re.Pattern[str], Endpoint]] = [
    ("GET", re.compile(r"^/_sandbox/stats$"), _stats),
    ("GET", re.compile(r"^/_sandbox/log$"), _log),
    ("POST", re.compile(r"^/_sandbox/config$"), _configure),
    ("POST", re.compile(r"^/_sandbox/oauth/codes$"), _mint_code),
    ("POST", re.compile(r"^/_sandbox/reset$"), _reset),
    ("GET", re.compile(r"^/_sandbox/users$"), _users),
    ("GET", re.compile(r"^/_sandbox/guilds/(?P<guild_id>[^/]+)$"), _guild),
    ("GET", re.compile(r"^/_sandbox/clock$"), _clock),
    ("POST", re.compile(r"^/_sandbox/clock$"), _advance_clock),
    ("GET", re.compile(r"^/_sandbox/guilds/(?P<guild_id>[^/]+)/quota$"), _quota),
    ("POST", re.compile(r"^/_sandbox/guilds/(?P<guild_id>[^/]+)/quota$"), _use_quota),
    ("POST", re.compile(r"^/_sandbox/actors$"), _act_as),
    ("POST", re.compile(r"^/_sandbox/guilds/(?P<guild_id>[^/]+)/members$"), _add_members),
]


def handle(state: SandboxState, method: str, path: str, body: bytes) -> Answer:
    allowed = []
    for endpoint_method, pattern, endpoint in ENDPOINTS:
        found = pattern.match(path)
        if not found:
            continue
        allowed.append(endpoint_method)
        if endpoint_method != method:
            continue
        try:
            status, answer = endpoint(state, _json_object(body), found.groupdict())
        except ControlError as refusal:
            return _error(refusal.status, refusal.message, refusal.details)
        return render(status, answer)
    if allowed:
        return _error(405, f"{path} answers {', '.join(allowed)} only.", headers={"Allow": ", ".join(allowed)})
    return _error(404, f"No sandbox control endpoint {path} (see docs/04-chat-platform.md, Control API).")


def _json_object(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        data = json.loads(body)
    except ValueError:
        raise ControlError(400, "The body is not valid JSON.", [_body_detail("is not valid JSON")]) from None
    if not isinstance(data, dict):
        raise ControlError(400, "The body must be a JSON object.", [_body_detail("must be a JSON object")])
    return data


def _body_detail(message: str) -> FieldError:
    return FieldError(field="body", message=message)


def _validated[T](build: Callable[[], T]) -> T:
    """What `build` returns; its pydantic errors as a 400 naming each field."""
    try:
        return build()
    except ValidationError as problems:
        details = [
            FieldError(field=field_path(tuple(problem["loc"])), message=problem["msg"])
            for problem in problems.errors(include_url=False)
        ]
        summary = f"{details[0].field}: {details[0].message}" if len(details) == 1 else f"{len(details)} invalid fields"
        raise ControlError(400, f"Invalid request: {summary}.", details) from None


def _error(
    status: int, message: str, details: list[FieldError] | None = None, headers: dict[str, str] | None = None
) -> Answer:
    """The service's error body, `requestId` included (and as `x-request-id`, as the service sends it)."""
    request_id = str(uuid.uuid4())
    body = ErrorBody(error=reason_phrase(status), message=message, code=status, details=details, requestId=request_id)
    return render(status, body.model_dump(exclude_none=True), {**(headers or {}), "x-request-id": request_id})
