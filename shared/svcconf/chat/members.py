"""The chat platform's members and audit log, as backups and restores read and change them
(docs/04-chat-platform.md, "Members and the audit log"): the paged member list, one role granted to or taken
from a member, and audit-log entries.

`MemberCalls` is a part of `ChatClient` (svcconf/chat/client.py); its calls go through the same transport, so the
rate limits are honoured the same way: the member-role routes have a bucket of their own per guild.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import Field, TypeAdapter, ValidationError

from svcconf.chat.errors import ChatUnreadableAnswer
from svcconf.chat.models import ChatModel, ChatUser, GuildMember, Snowflake
from svcconf.chat.transport import ChatTransport, Route

MEMBER_PAGE_SIZE = 1000  # the platform's largest page of `GET /guilds/{id}/members`
AUDIT_LOG_PAGE_SIZE = 100  # and of `GET /guilds/{id}/audit-logs`
MEMBER_ROLE_ROUTE = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"


class AuditLogChange(ChatModel):
    key: str | None = None
    new_value: Any = None
    old_value: Any = None


class AuditLogEntry(ChatModel):
    id: Snowflake
    action_type: int  # an open set: the platform adds values
    user_id: Snowflake | None = None
    target_id: Snowflake | None = None
    changes: list[AuditLogChange] = Field(default_factory=list)
    options: dict[str, Any] | None = None
    reason: str | None = None


class AuditLog(ChatModel):
    audit_log_entries: list[AuditLogEntry] = Field(default_factory=list)
    users: list[ChatUser] = Field(default_factory=list)


_MEMBERS: TypeAdapter[list[GuildMember]] = TypeAdapter(list[GuildMember])


_AUDIT_LOG: TypeAdapter[AuditLog] = TypeAdapter(AuditLog)


def _read[M](adapter: TypeAdapter[M], route: Route, data: Any) -> M:
    """The answer in the platform's shape; one the service cannot read is the platform's failure (502)."""
    try:
        return adapter.validate_python(data)
    except ValidationError as problem:
        first = problem.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "body"
        message = (
            f"The chat platform answered {route.name} in a shape the service cannot read: {field}: {first['msg']}."
        )
        raise ChatUnreadableAnswer(message, field=field, route=route.name) from None


class MemberCalls(ChatTransport):
    """Members' roles and the audit log (bot token)."""

    member_page_size = MEMBER_PAGE_SIZE

    def member_pages(self, guild_id: str, after: str = "0") -> Iterator[list[GuildMember]]:
        """The guild's members whose user id is above `after`, a page at a time, ascending by user id (`after` = the
        last page's highest id), until a page comes back shorter than asked. Needs the privileged GUILD_MEMBERS
        intent: without it `MissingAccess` (403 50001); the bot not in the guild: `UnknownGuild`."""
        while True:
            route = Route("GET", "/guilds/{guild_id}/members", guild_id=guild_id)
            params = {"limit": str(self.member_page_size), "after": after}
            page = _read(_MEMBERS, route, self._json(route, self._bot_auth(), params=params))
            if page:
                yield page
            with_ids = [int(member.user.id) for member in page if member.user is not None]
            if len(page) < self.member_page_size or not with_ids:
                return
            after = str(max(with_ids))

    def list_members(self, guild_id: str) -> list[GuildMember]:
        """Every member of the guild (all pages); see `member_pages`."""
        return [member for page in self.member_pages(guild_id) for member in page]

    def add_member_role(self, guild_id: str, user_id: str, role_id: str, reason: str | None = None) -> None:
        """Grant one role to a member (204; granting one they hold changes nothing). Needs MANAGE_ROLES and the role
        below the bot's highest: otherwise `MissingPermissions`; `UnknownMember`, `UnknownRole`."""
        route = Route("PUT", MEMBER_ROLE_ROUTE, guild_id=guild_id, user_id=user_id, role_id=role_id)
        self._send(route, self._bot_auth(), reason=reason)

    def remove_member_role(self, guild_id: str, user_id: str, role_id: str, reason: str | None = None) -> None:
        """Take one role from a member (204); the same rules as `add_member_role`."""
        route = Route("DELETE", MEMBER_ROLE_ROUTE, guild_id=guild_id, user_id=user_id, role_id=role_id)
        self._send(route, self._bot_auth(), reason=reason)

    def audit_log(
        self,
        guild_id: str,
        *,
        user_id: str | None = None,
        action_type: int | None = None,
        target_id: str | None = None,
        before: str | None = None,
        limit: int = 50,
    ) -> AuditLog:
        """One page of the guild's audit log, newest first (entries older than `before` when given). Needs
        VIEW_AUDIT_LOG: otherwise `MissingPermissions`."""
        route = Route("GET", "/guilds/{guild_id}/audit-logs", guild_id=guild_id)
        params = {"limit": str(max(1, min(limit, AUDIT_LOG_PAGE_SIZE)))}
        for name, value in (("user_id", user_id), ("action_type", action_type), ("target_id", target_id)):
            if value is not None:
                params[name] = str(value)
        if before is not None:
            params["before"] = before
        return _read(_AUDIT_LOG, route, self._json(route, self._bot_auth(), params=params))


__all__ = ["AuditLog", "AuditLogChange", "AuditLogEntry", "MemberCalls"]
