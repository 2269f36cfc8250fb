"""The platform's permission order (svcconf.config.access): each rule with a case it decides."""

from __future__ import annotations

from svcconf.config import ALL_PERMISSIONS, to_bitfield
from svcconf.config.access import OverwriteBits, channel_permissions, guild_permissions


def bits(*names: str) -> int:
    return int(to_bitfield(names))


VIEW, SEND, EMBED = bits("VIEW_CHANNEL"), bits("SEND_MESSAGES"), bits("EMBED_LINKS")


def test_guild_permissions_are_everyones_or_the_roles():
    assert guild_permissions(VIEW, [SEND, EMBED]) == VIEW | SEND | EMBED


def test_the_owner_and_administrator_hold_every_permission():
    assert guild_permissions(0, [], owner=True) == ALL_PERMISSIONS
    assert guild_permissions(0, [bits("ADMINISTRATOR")]) == ALL_PERMISSIONS


def test_administrator_ignores_a_channels_denies():
    base = guild_permissions(VIEW, [bits("ADMINISTRATOR")])
    assert channel_permissions(base, OverwriteBits(deny=VIEW)) == ALL_PERMISSIONS


def test_an_everyone_deny_hides_the_channel():
    assert channel_permissions(VIEW | SEND, OverwriteBits(deny=VIEW)) == 0


def test_a_role_allow_wins_over_the_everyone_deny():
    assert channel_permissions(VIEW | SEND, OverwriteBits(deny=VIEW), [OverwriteBits(allow=VIEW)]) == VIEW | SEND


def test_among_the_holders_roles_an_allow_wins_over_a_deny():
    roles = [OverwriteBits(deny=SEND), OverwriteBits(allow=SEND)]
    assert channel_permissions(VIEW, None, roles) == VIEW | SEND


def test_a_member_overwrite_comes_last():
    roles = [OverwriteBits(allow=SEND)]
    assert channel_permissions(VIEW, None, roles, OverwriteBits(deny=SEND)) == VIEW


def test_a_neutral_overwrite_grants_nothing_and_takes_nothing():
    assert channel_permissions(VIEW | SEND, None, [OverwriteBits()]) == VIEW | SEND


def test_without_send_messages_what_sending_carries_is_lost():
    assert channel_permissions(VIEW | EMBED) == VIEW


def test_in_a_voice_channel_without_connect_the_voice_permissions_are_lost():
    speak, connect = bits("SPEAK"), bits("CONNECT")
    assert channel_permissions(VIEW | SEND | speak, voice=True) == VIEW | SEND
    assert channel_permissions(VIEW | SEND | speak | connect, voice=True) == VIEW | SEND | speak | connect
    assert channel_permissions(VIEW | SEND | speak) == VIEW | SEND | speak  # a text channel keeps it
