"""What a holder of some roles may do: the chat platform's own permission order, as one pure function.

Everything that asks "who can do what" (the lint, export's exactness, what a caller may do to a server) computes it
here, so they cannot disagree. The order (docs/04-chat-platform.md, "What the code relies on"): @everyone's base
permissions, OR the holder's roles; the owner and ADMINISTRATOR hold everything; then in a channel the @everyone
overwrite (deny, then allow), the holder's role overwrites (all their denies, then all their allows), a member
overwrite (deny, then allow); then the implicit rules: without VIEW_CHANNEL nothing else, without SEND_MESSAGES none
of what sending carries, and in a voice channel without CONNECT none of the voice permissions.

`effective_access` applies it to a whole server, per category or channel and per role (a holder of that role and
@everyone; @everyone alone too): `config_access` reads a configuration, the deploy engine's `guild_access` a live
guild or a template, and `access_differences` names what differs, so "the deploy did what the configuration says"
is one comparison (docs/05-deploy-engine.md, "Exact access").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from svcconf.config.channels import Channel, Overwrite, platform_channel_name
from svcconf.config.permissions import ALL_PERMISSIONS, CHANNEL_TYPES, PERMISSION_BITS, from_bitfield
from svcconf.config.roles import EVERYONE
from svcconf.config.schema import ServerConfig

_MASKS = {name: 1 << bit for name, bit in PERMISSION_BITS.items()}


def _bits(*names: str) -> int:
    return _mask(names)


def _mask(names: Iterable[str]) -> int:
    """The bits of these permission names (the schema has checked them)."""
    value = 0
    for name in names:
        value |= _MASKS[name]
    return value


ADMINISTRATOR_BIT = _bits("ADMINISTRATOR")
VIEW_CHANNEL_BIT = _bits("VIEW_CHANNEL")
SEND_MESSAGES_BIT = _bits("SEND_MESSAGES")
CONNECT_BIT = _bits("CONNECT")
# What a configuration that leaves @everyone's permissions as the guild has them is assumed to give: viewing (the
# platform's default for a new server), nothing more.
DEFAULT_EVERYONE_PERMISSIONS = VIEW_CHANNEL_BIT
# What a text channel's sender permissions carry: lost with SEND_MESSAGES.
NEEDS_SEND_MESSAGES = _bits("MENTION_EVERYONE", "SEND_TTS_MESSAGES", "ATTACH_FILES", "EMBED_LINKS")
# What a voice channel's connection carries: lost with CONNECT.
NEEDS_CONNECT = _bits(
    "SPEAK", "MUTE_MEMBERS", "DEAFEN_MEMBERS", "MOVE_MEMBERS", "USE_VAD", "PRIORITY_SPEAKER", "STREAM"
)


class OverwriteBits(NamedTuple):
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


# --- Who can do what, channel by channel and role by role ---------------------------------------------------------

VOICE_TYPES = frozenset({CHANNEL_TYPES["voice"], CHANNEL_TYPES["stage"]})
_KIND_NAMES = {number: kind for kind, number in CHANNEL_TYPES.items()}

Access = dict[tuple[str, str], int]
"""(place, holder) -> what the holder may do there: a place is a category or channel (`place_label`), a holder is
@everyone alone or one role with @everyone."""


class Place(NamedTuple):
    """A category or channel as access reads it: whether it is voice-like, and its overwrites by role name."""

    voice: bool
    overwrites: dict[str, OverwriteBits]


def place_label(channel_type: int, name: str, category: str | None = None) -> str:
    """How access names a category or channel, the same for a configuration and a guild: by the name the platform
    stores, its type, and its category's name."""
    label = f"{_KIND_NAMES.get(channel_type, f'type {channel_type}')} '{platform_channel_name(name, channel_type)}'"
    return label if category is None else f"{label} in category '{category}'"


def holders(everyone: int, roles: dict[str, int]) -> dict[str, int]:
    """Each holder's server-wide permissions: @everyone alone, then each role (by name) with @everyone."""
    found = {EVERYONE: guild_permissions(everyone, ())}
    return found | {name: guild_permissions(everyone, (permissions,)) for name, permissions in roles.items()}


def access_in(place: Place, holders: dict[str, int]) -> Iterator[tuple[str, int]]:
    """What each holder may do in the place, holder by holder (lazily: a caller may stop at the first it needs)."""
    everyone_overwrite = place.overwrites.get(EVERYONE)
    for holder, base in holders.items():
        own = place.overwrites.get(holder) if holder != EVERYONE else None
        yield holder, channel_permissions(base, everyone_overwrite, (own,) if own else (), voice=place.voice)


def effective_access(everyone: int, roles: dict[str, int], places: dict[str, Place]) -> Access:
    """What @everyone alone, and each role with @everyone, may do in each place (by its label): the platform's
    order, from the server-wide permissions (@everyone's base, each role's by name) and each place's overwrites."""
    everyone_and_roles = holders(everyone, roles)
    return {
        (label, holder): found
        for label, place in places.items()
        for holder, found in access_in(place, everyone_and_roles)
    }


def overwrite_bits(overwrites: Iterable[Overwrite]) -> dict[str, OverwriteBits]:
    """A configuration's overwrites as bits, by role name."""
    return {o.role: OverwriteBits(_mask(o.allow), _mask(o.deny)) for o in overwrites}


def channel_place(channel: Channel, inherited: dict[str, OverwriteBits]) -> Place:
    """A configuration's channel: its category's overwrites (`inherited`) with its own replacing them role by role,
    as a deploy writes them."""
    return Place(CHANNEL_TYPES[channel.type] in VOICE_TYPES, inherited | overwrite_bits(channel.overwrites))


def config_holders(config: ServerConfig, everyone_default: int = DEFAULT_EVERYONE_PERMISSIONS) -> dict[str, int]:
    """The configuration's holders (`holders`); @everyone's base is `everyone_permissions`, or `everyone_default`
    (what the guild has) when the configuration leaves them as they are."""
    stated = config.everyone_permissions
    everyone = everyone_default if stated is None else _mask(stated)
    return holders(everyone, {role.name: _mask(role.permissions) for role in config.roles})


def config_access(config: ServerConfig, everyone_default: int = DEFAULT_EVERYONE_PERMISSIONS) -> Access:
    """Who can do what on the server a configuration describes, per category and channel (`place_label`)."""
    places: dict[str, Place] = {}
    category_type = CHANNEL_TYPES["category"]
    for category in config.categories:
        inherited = overwrite_bits(category.overwrites)
        places[place_label(category_type, category.name)] = Place(False, inherited)
        for channel in category.channels:
            places[place_label(CHANNEL_TYPES[channel.type], channel.name, category.name)] = channel_place(
                channel, inherited
            )
    for channel in config.channels:
        places[place_label(CHANNEL_TYPES[channel.type], channel.name)] = channel_place(channel, {})
    everyone_and_roles = config_holders(config, everyone_default)
    return {
        (label, holder): found
        for label, place in places.items()
        for holder, found in access_in(place, everyone_and_roles)
    }


def access_differences(expected: Access, actual: Access) -> list[str]:
    """Each place and holder whose permissions differ, naming the permissions gained and lost (empty: the same)."""
    differences = []
    for place, holder in sorted(expected.keys() | actual.keys()):
        if (place, holder) not in actual or (place, holder) not in expected:
            side = "expected only" if (place, holder) not in actual else "found only"
            differences.append(f"{place}, {holder}: {side}")
            continue
        wanted, found = expected[place, holder], actual[place, holder]
        if wanted != found:
            gained, lost = from_bitfield(found & ~wanted), from_bitfield(wanted & ~found)
            said = [f"gains {', '.join(gained)}"] * bool(gained) + [f"loses {', '.join(lost)}"] * bool(lost)
            differences.append(f"{place}, {holder}: {'; '.join(said)}")
    return differences
