"""What a holder of some roles may do: the chat platform's own permission order, as one pure function.

Everything that asks "who can do what" (the lint, export's exactness, what a caller may do to a server) computes it
here, so they cannot disagree. The order (docs/04-chat-platform.md, "What the code relies on"): @everyone's base permissions,
OR the holder's roles; the owner and ADMINISTRATOR hold everything; then in a channel the @everyone overwrite (deny,
then allow), the holder's role overwrites (all their denies, then all their allows), a member overwrite (deny, then
allow); then the implicit rules: without VIEW_CHANNEL nothing else, without SEND_MESSAGES none of what sending
carries, and in a voice channel without CONNECT none of the voice permissions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from svcconf.config.permissions import ALL_PERMISSIONS, PERMISSION_BITS


def _bits(*names: str) -> int:
    return sum(1 << PERMISSION_BITS[name] for name in names)


ADMINISTRATOR_BIT = _bits("ADMINISTRATOR")
VIEW_CHANNEL_BIT = _bits("VIEW_CHANNEL")
SEND_MESSAGES_BIT = _bits("SEND_MESSAGES")
CONNECT_BIT = _bits("CONNECT")
# What a text channel's sender permissions carry: lost with SEND_MESSAGES.
NEEDS_SEND_MESSAGES = _bits("MENTION_EVERYONE", "SEND_TTS_MESSAGES", "ATTACH_FILES", "EMBED_LINKS")
# What a voice channel's connection carries: lost with CONNECT.
NEEDS_CONNECT = _bits(
    "SPEAK", "MUTE_MEMBERS", "DEAFEN_MEMBERS", "MOVE_MEMBERS", "USE_VAD", "PRIORITY_SPEAKER", "STREAM"
)


@dataclass(frozen=True)
class OverwriteBits:
    """One permission overwrite as bitfields: what it allows and what it denies."""

    allow: int = 0
    deny: int = 0


def guild_permissions(everyone: int, roles: Iterable[int], *, owner: bool = False) -> int:
    """The holder's server-wide permissions: @everyone's base OR each of their roles'; all for the owner and for
    ADMINISTRATOR."""
    permissions = everyone
    for role in roles:
        permissions |= role
    if owner or permissions & ADMINISTRATOR_BIT:
        return ALL_PERMISSIONS
    return permissions


def channel_permissions(
    base: int,
    everyone: OverwriteBits | None = None,
    roles: Iterable[OverwriteBits] = (),
    member: OverwriteBits | None = None,
    *,
    voice: bool = False,
) -> int:
    """The holder's permissions in one channel (or category), from their server-wide ones (`guild_permissions`)
    and the channel's overwrites that apply to them: @everyone's, those of the roles they hold, their own."""
    if base & ADMINISTRATOR_BIT:
        return ALL_PERMISSIONS  # ADMINISTRATOR (and the owner) ignore overwrites
    permissions = base
    if everyone is not None:
        permissions = permissions & ~everyone.deny | everyone.allow
    role_allow = role_deny = 0
    for overwrite in roles:
        role_allow |= overwrite.allow
        role_deny |= overwrite.deny
    permissions = permissions & ~role_deny | role_allow
    if member is not None:
        permissions = permissions & ~member.deny | member.allow
    return implicit(permissions, voice=voice)


def implicit(permissions: int, *, voice: bool) -> int:
    """The platform's implicit rules on a channel's permissions."""
    if not permissions & VIEW_CHANNEL_BIT:
        return 0
    if not permissions & SEND_MESSAGES_BIT:
        permissions &= ~NEEDS_SEND_MESSAGES
    if voice and not permissions & CONNECT_BIT:
        permissions &= ~NEEDS_CONNECT
    return permissions
