"""Invitation checks: a link or bare code of the chat platform, resolved to its server's name and size."""

from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import urlsplit

from pydantic import BaseModel

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
    """The code in a bare code or an invite link on one of the platform's hosts (CHAT_INVITE_HOSTS).

    Whatever urllib cannot parse (unbalanced brackets, a port that is not a number, full-width characters that
    normalise into URL syntax) is refused like any other text that is not an invite, never a 500. Inner
    whitespace and control characters are refused first: urllib would silently delete tabs and newlines.
    """
    text = text.strip()
    if CODE.fullmatch(text):
        return text
    hosts = get_settings().chat_invite_hosts
    not_an_invite = BadRequest.for_field("invite", f"must be an invite code or a link on {', '.join(hosts)}")
    if not text.isprintable() or any(character.isspace() for character in text):
        raise not_an_invite
    try:
        url = urlsplit(text if "://" in text else f"https://{text}")
        host = (url.hostname or "").lower()
    except ValueError:
        raise not_an_invite from None
    on_invite_host = any(host == known or host.endswith(f".{known}") for known in hosts)
    segments = [segment for segment in url.path.split("/") if segment]
    if segments[:1] == ["invite"]:
        segments = segments[1:]
    # The netloc must be the host alone: no port (not even an empty one), no user, no password.
    plain_netloc = url.netloc.lower() == host
    if url.scheme not in ("http", "https") or not plain_netloc or not on_invite_host or len(segments) != 1:
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
