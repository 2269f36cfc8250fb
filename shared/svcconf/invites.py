"""Invitation checks: a link or bare code of the chat platform, resolved to its server's name and size."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import BaseModel

from svcconf.api.pasted_links import link_parts
from svcconf.chat import UnknownInvite, get_chat_client
from svcconf.clock import utc_now
from svcconf.errors import BadRequest
from svcconf.settings import get_settings

# Codes are case-sensitive: they are passed on exactly as written.
CODE = re.compile(r"[A-Za-z0-9_-]{2,64}")
GUILD_INVITE = 0


class InviteValidation(BaseModel):
    valid: bool
    permanent: bool | None = None
    expired: bool
    guild_name: str | None = None
    member_count: int | None = None
    expires_at: datetime | None = None
    reason: str | None = None
    code: str | None = None


def invite_code_from(text: str) -> str:
    """The code in a bare code or an invite link on one of the platform's hosts (CHAT_INVITE_HOSTS); anything else,
    whatever urllib makes of it, is a 400 on `invite` (`svcconf.api.pasted_links`)."""
    text = text.strip()
    if CODE.fullmatch(text):
        return text
    hosts = get_settings().chat_invite_hosts
    not_an_invite = BadRequest.for_field("invite", f"must be an invite code or a link on {', '.join(hosts)}")
    host, segments = link_parts(text, not_an_invite)
    if segments[:1] == ["invite"]:
        segments = segments[1:]
    on_invite_host = any(host == known or host.endswith(f".{known}") for known in hosts)
    if not on_invite_host or len(segments) != 1:
        raise not_an_invite
    if not CODE.fullmatch(segments[0]):
        raise BadRequest.for_field("invite", "the link's invite code has characters an invite code cannot have")
    return segments[0]


def validate_invite(text: str) -> InviteValidation:
    code = invite_code_from(text)
    try:
        invite = get_chat_client().get_invite(code, with_counts=True)
    except UnknownInvite:
        return InviteValidation(
            valid=False, expired=False, code=code, reason="The invitation does not exist, expired or was revoked."
        )
    if invite.type != GUILD_INVITE or invite.guild is None:
        return InviteValidation(valid=False, expired=False, code=code, reason="The invitation is not for a server.")
    found = InviteValidation(
        valid=True,
        permanent=invite.permanent,
        expired=False,
        guild_name=invite.guild.name,
        member_count=invite.approximate_member_count,
        expires_at=invite.expires_at,
        code=code,
    )
    if invite.is_expired(utc_now()):
        return found.model_copy(update={"valid": False, "expired": True, "reason": "The invitation has expired."})
    return found
