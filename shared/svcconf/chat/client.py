"""The chat platform's typed calls: one method per REST route the service uses, over `ChatTransport`.

One `ChatClient` is meant to live as long as the Lambda container (`get_chat_client()`), so its
connection pool and its learned rate-limit buckets carry over between invocations. How a request is sent,
waited for, retried and turned into an error is svcconf/chat/transport.py's.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Literal
from urllib.parse import quote_plus

from pydantic import BaseModel, TypeAdapter, ValidationError

from svcconf.chat.community import CommunityCalls
from svcconf.chat.errors import (
    ChatNotConfigured,
    ChatUnreadableAnswer,
)
from svcconf.chat.members import MemberCalls
from svcconf.chat.models import Channel, ChatUser, Guild, GuildMember, Invite, PartialGuild, Role, TokenGrant
from svcconf.chat.ratelimit import (
    BucketView,
    RouteKey,
)
from svcconf.chat.recent import RecentAnswers
from svcconf.chat.templates import GuildTemplate
from svcconf.chat.transport import ANONYMOUS, Auth, Route
from svcconf.settings import get_settings

logger = logging.getLogger(__name__)

TEMPLATE_SECONDS = 60.0  # a native template changes only when its creator syncs it
INVITE_SECONDS = 30.0  # an invite's member counts are approximate anyway
PAGE_SIZE = 200  # `GET /users/@me/guilds` returns at most 200 guilds per page
BITFIELD_KEYS = ("permissions", "allow", "deny")
CREATE_ROUTES = {"role": "/guilds/{guild_id}/roles", "channel": "/guilds/{guild_id}/channels"}


def _with_string_bitfields(value: Any) -> Any:
    """Bitfields go out as decimal strings: they exceed what a JSON number carries exactly in some clients."""
    if isinstance(value, Mapping):
        return {
            key: str(item) if key in BITFIELD_KEYS and isinstance(item, int) else _with_string_bitfields(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_with_string_bitfields(item) for item in value]
    return value


def _positions(positions: Mapping[str, int] | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(positions, Mapping):
        return [{"id": str(key), "position": value} for key, value in positions.items()]
    return [dict(entry) for entry in positions]


class ChatClient(MemberCalls, CommunityCalls):
    """Typed calls to the chat platform's REST API (v10), with its rate limits honoured."""

    guild_page_size = PAGE_SIZE

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # Public lookups by code, kept briefly (svcconf/chat/recent.py): a flood of the same code costs one request.
        self._recent_invites: RecentAnswers[Invite] = RecentAnswers(INVITE_SECONDS, clock=self._clock)
        self._recent_templates: RecentAnswers[GuildTemplate] = RecentAnswers(TEMPLATE_SECONDS, clock=self._clock)

    def get_invite(self, code: str, *, with_counts: bool = True) -> Invite:
        """Resolve an invite code (case-sensitive). Unknown, expired or revoked: `UnknownInvite`.

        Sent with the bot token when one is configured: anonymous lookups are limited per IP, and
        serverless egress IPs are shared with other tenants.
        """
        route = Route("GET", "/invites/{code}", code=code)
        params = {"with_counts": "true"} if with_counts else None
        auth = self._bot_auth() if self._has_bot_token() else ANONYMOUS
        return self._recent_invites.get_or_fetch(
            (code, with_counts), lambda: self._read(Invite, route, self._json(route, auth, params=params))
        )

    # -- OAuth2 ----------------------------------------------------------------------------

    def exchange_code(self, code: str, redirect_uri: str, code_verifier: str | None = None) -> TokenGrant:
        """Exchange an authorization code (single use) for tokens, with its PKCE verifier when the authorize URL
        carried a challenge. Refused: `InvalidGrant` (never retried: each refusal counts at the platform)."""
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if code_verifier is not None:
            form["code_verifier"] = code_verifier
        return self._token_request(form)

    def refresh_token(self, refresh_token: str) -> TokenGrant:
        """A fresh grant for a refresh token; keep the refresh token it returns. Refused: `InvalidGrant`."""
        return self._token_request({"grant_type": "refresh_token", "refresh_token": refresh_token})

    # -- users -----------------------------------------------------------------------------

    def get_current_user(self, access_token: str) -> ChatUser:
        """The user behind an OAuth access token (`email`, `verified` need the email scope)."""
        route = Route("GET", "/users/@me")
        return self._read(ChatUser, route, self._json(route, self._bearer_auth(access_token)))

    def get_bot_user(self) -> ChatUser:
        """The bot's own user (cached for the client's life)."""
        if self._bot_user is None:
            route = Route("GET", "/users/@me")
            self._bot_user = self._read(ChatUser, route, self._json(route, self._bot_auth()))
        return self._bot_user

    def get_current_user_guilds(self, access_token: str, *, with_counts: bool = False) -> list[PartialGuild]:
        """The user's guilds with `owner` and the user's guild-level `permissions` (scope `guilds`)."""
        return self._guild_pages(self._bearer_auth(access_token), with_counts)

    def get_bot_guilds(self) -> list[PartialGuild]:
        """Every guild the bot is in (paged by 200)."""
        return self._guild_pages(self._bot_auth(), False)

    def bot_guild_ids(self) -> set[str]:
        return {guild.id for guild in self.get_bot_guilds()}

    # -- guild structure (bot) ---------------------------------------------------------------

    def get_guild(self, guild_id: str, *, with_counts: bool = False) -> Guild:
        """The guild with its roles. The bot must be in it: otherwise `UnknownGuild`."""
        route = Route("GET", "/guilds/{guild_id}", guild_id=guild_id)
        params = {"with_counts": "true"} if with_counts else None
        return self._read(Guild, route, self._json(route, self._bot_auth(), params=params))

    def modify_guild(self, guild_id: str, payload: Mapping[str, Any], reason: str | None = None) -> Guild:
        """Change the guild's settings (fields left out stay as they are). Needs MANAGE_GUILD: otherwise
        `MissingPermissions`; an AFK channel that is not voice, or a system channel not text: `ChatInvalidRequest`."""
        route = Route("PATCH", "/guilds/{guild_id}", guild_id=guild_id)
        return self._read(Guild, route, self._json(route, self._bot_auth(), json_body=dict(payload), reason=reason))

    def get_guild_member(self, guild_id: str, user_id: str) -> GuildMember:
        """A member of the guild; not a member: `UnknownMember`; the bot not in the guild: `UnknownGuild`."""
        route = Route("GET", "/guilds/{guild_id}/members/{user_id}", guild_id=guild_id, user_id=user_id)
        return self._read(GuildMember, route, self._json(route, self._bot_auth()))

    def get_template(self, code: str) -> GuildTemplate:
        """A native server template by its code (anonymous lookups are limited per IP: the bot's token when there
        is one, as for invites). Unknown: `UnknownTemplate`."""
        route = Route("GET", "/guilds/templates/{code}", code=code)
        auth = self._bot_auth() if self._has_bot_token() else ANONYMOUS
        return self._recent_templates.get_or_fetch(
            code, lambda: self._read(GuildTemplate, route, self._json(route, auth))
        )

    def list_roles(self, guild_id: str) -> list[Role]:
        route = Route("GET", "/guilds/{guild_id}/roles", guild_id=guild_id)
        return self._read_list(Role, route, self._json(route, self._bot_auth()))

    def create_role(self, guild_id: str, payload: Mapping[str, Any], reason: str | None = None) -> Role:
        """Create a role (it appears just above @everyone). Without `permissions` it copies @everyone's."""
        route = Route("POST", "/guilds/{guild_id}/roles", guild_id=guild_id)
        body = _with_string_bitfields(payload)
        return self._read(Role, route, self._json(route, self._bot_auth(), json_body=body, reason=reason))

    def modify_role(self, guild_id: str, role_id: str, payload: Mapping[str, Any], reason: str | None = None) -> Role:
        """Change a role's name, permissions, color, hoist or mentionable (fields left out stay as they are).

        The role must be below the bot's highest role and the permissions added ones the bot holds:
        otherwise `MissingPermissions`."""
        route = Route("PATCH", "/guilds/{guild_id}/roles/{role_id}", guild_id=guild_id, role_id=role_id)
        body = _with_string_bitfields(payload)
        return self._read(Role, route, self._json(route, self._bot_auth(), json_body=body, reason=reason))

    def delete_role(self, guild_id: str, role_id: str, reason: str | None = None) -> None:
        """Delete a role: it leaves every member and channel overwrite. Unknown: `UnknownRole`."""
        route = Route("DELETE", "/guilds/{guild_id}/roles/{role_id}", guild_id=guild_id, role_id=role_id)
        self._send(route, self._bot_auth(), reason=reason)

    def role_member_counts(self, guild_id: str) -> dict[str, int]:
        """How many members hold each role of the guild (`{role_id: count}`)."""
        route = Route("GET", "/guilds/{guild_id}/roles/member-counts", guild_id=guild_id)
        data = self._json(route, self._bot_auth()) or {}
        return {str(role_id): int(count) for role_id, count in data.items()}

    def reorder_roles(
        self, guild_id: str, positions: Mapping[str, int] | Iterable[Mapping[str, Any]], reason: str | None = None
    ) -> list[Role]:
        """Move roles (`{role_id: position}` or `[{id, position}]`); returns every role of the guild."""
        route = Route("PATCH", "/guilds/{guild_id}/roles", guild_id=guild_id)
        data = self._json(route, self._bot_auth(), json_body=_positions(positions), reason=reason)
        return self._read_list(Role, route, data)

    def list_channels(self, guild_id: str) -> list[Channel]:
        """The guild's channels and categories (threads excluded)."""
        route = Route("GET", "/guilds/{guild_id}/channels", guild_id=guild_id)
        return self._read_list(Channel, route, self._json(route, self._bot_auth()))

    def create_channel(self, guild_id: str, payload: Mapping[str, Any], reason: str | None = None) -> Channel:
        """Create a channel or category (only `name` is required). Compare names with the one returned:
        the platform may normalise text-channel names."""
        route = Route("POST", "/guilds/{guild_id}/channels", guild_id=guild_id)
        body = _with_string_bitfields(payload)
        return self._read(Channel, route, self._json(route, self._bot_auth(), json_body=body, reason=reason))

    def modify_channel(self, channel_id: str, payload: Mapping[str, Any], reason: str | None = None) -> Channel:
        """Change a channel or category; `permission_overwrites` replaces its whole list. Compare the name with
        the one returned: the platform may normalise text-channel names."""
        route = Route("PATCH", "/channels/{channel_id}", channel_id=channel_id)
        body = _with_string_bitfields(payload)
        return self._read(Channel, route, self._json(route, self._bot_auth(), json_body=body, reason=reason))

    def delete_channel(self, channel_id: str, reason: str | None = None) -> Channel:
        """Delete a channel or category (its channels stay, outside any category); returns what was deleted."""
        route = Route("DELETE", "/channels/{channel_id}", channel_id=channel_id)
        return self._read(Channel, route, self._json(route, self._bot_auth(), reason=reason))

    def reorder_channels(
        self, guild_id: str, positions: Mapping[str, int] | Iterable[Mapping[str, Any]], reason: str | None = None
    ) -> None:
        """Move channels (`{channel_id: position}` or `[{id, position?, parent_id?, lock_permissions?}]`).

        The platform lets at most one entry change `parent_id` per request."""
        route = Route("PATCH", "/guilds/{guild_id}/channels", guild_id=guild_id)
        self._send(route, self._bot_auth(), json_body=_positions(positions), reason=reason)

    def set_channel_overwrite(
        self,
        channel_id: str,
        target_id: str,
        type: int,  # the platform's field name: 0 role, 1 member
        allow: int | str = 0,
        deny: int | str = 0,
        reason: str | None = None,
    ) -> None:
        """Create or replace one permission overwrite on a channel or category."""
        route = Route(
            "PUT", "/channels/{channel_id}/permissions/{overwrite_id}", channel_id=channel_id, overwrite_id=target_id
        )
        body = {"type": type, "allow": str(allow), "deny": str(deny)}
        self._send(route, self._bot_auth(), json_body=body, reason=reason)

    def delete_overwrite(self, channel_id: str, overwrite_id: str, reason: str | None = None) -> None:
        """Remove one permission overwrite (a role's or a member's). None there: `UnknownOverwrite`."""
        route = Route(
            "DELETE",
            "/channels/{channel_id}/permissions/{overwrite_id}",
            channel_id=channel_id,
            overwrite_id=overwrite_id,
        )
        self._send(route, self._bot_auth(), reason=reason)

    # -- what the rate limits said -------------------------------------------------------------

    def creation_bucket(self, guild_id: str, kind: Literal["role", "channel"]) -> BucketView | None:
        """What the platform's bucket for creating roles (or channels) in this guild said last, if it has."""
        return self.limiter.observed(RouteKey("POST", CREATE_ROUTES[kind], guild_id, "bot"))

    def forget_guild_buckets(self, guild_id: str) -> None:
        """Forget the guild's learned buckets: the caller waited out their reset on a clock of its own."""
        self.limiter.forget(guild_id)

    # -- plumbing ----------------------------------------------------------------------------

    def _guild_pages(self, auth: Auth, with_counts: bool) -> list[PartialGuild]:
        guilds: list[PartialGuild] = []
        after: str | None = None
        while True:
            params = {"limit": str(self.guild_page_size)}
            if after:
                params["after"] = after
            if with_counts:
                params["with_counts"] = "true"
            route = Route("GET", "/users/@me/guilds")
            page = self._read_list(PartialGuild, route, self._json(route, auth, params=params) or [])
            guilds.extend(page)
            if len(page) < self.guild_page_size:
                return guilds
            after = max(page, key=lambda guild: int(guild.id)).id

    def _token_request(self, form: dict[str, str]) -> TokenGrant:
        client_id = self.settings.chat_client_id
        client_secret = self.settings.resolved_chat_client_secret()
        if not client_id or not client_secret:
            raise ChatNotConfigured("The chat-platform OAuth client (CHAT_CLIENT_ID and its secret) is not configured.")
        # HTTP Basic with form-urlencoded id and secret (RFC 6749 §2.3.1); the body stays form-encoded.
        pair = f"{quote_plus(client_id)}:{quote_plus(client_secret)}".encode()
        auth = Auth("client", "Basic " + base64.b64encode(pair).decode("ascii"), "client")
        route = Route("POST", "/oauth2/token")
        return self._read(TokenGrant, route, self._json(route, auth, form=form, url=self.token_url))

    def _read[M: BaseModel](self, model: type[M], route: Route, data: Any) -> M:
        """The answer read as the platform's shape; one the service cannot read is the platform's failure (502)."""
        try:
            return model.model_validate(data)
        except ValidationError as problem:
            raise _unreadable(problem, route) from None

    def _read_list[M: BaseModel](self, model: type[M], route: Route, data: Any) -> list[M]:
        try:
            return _list_of(model).validate_python(data)
        except ValidationError as problem:
            raise _unreadable(problem, route) from None


@cache
def _list_of[M: BaseModel](model: type[M]) -> TypeAdapter[list[M]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def _unreadable(problem: ValidationError, route: Route) -> ChatUnreadableAnswer:
    """The first field of the answer that could not be read, logged and named in the error (its type, never its
    value: an answer may carry a token)."""
    first = problem.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "body"
    held = type(first.get("input")).__name__
    logger.error("chat platform answer to %s unreadable at %s: %s (a %s)", route.name, field, first["msg"], held)
    message = f"The chat platform answered {route.name} in a shape the service cannot read: {field}: {first['msg']}."
    return ChatUnreadableAnswer(message, field=field, route=route.name)


@cache
def get_chat_client() -> ChatClient:
    """The container's client, built once from the settings."""
    return ChatClient(get_settings())
