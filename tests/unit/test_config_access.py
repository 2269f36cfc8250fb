"""The platform's permission order (svcconf.config.access): each rule with a case it decides, then whole servers
read from a configuration and from a live guild."""

from __future__ import annotations

from svcconf.config import ALL_PERMISSIONS, ServerConfig, to_bitfield
from svcconf.config.access import (
    OverwriteBits,
    access_differences,
    channel_permissions,
    config_access,
    guild_permissions,
)
from svcconf.deploy_engine.live import guild_access
from tests.helpers.live_guilds import EVERYONE_PERMISSIONS, GUILD_ID, GuildBuilder, overwrite


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


# --- A whole server: per place and per role ------------------------------------------------------------------


def server(**channel: object) -> ServerConfig:
    return ServerConfig.model_validate(
        {
            "name": "Guild",
            "everyone_permissions": ["VIEW_CHANNEL", "SEND_MESSAGES"],
            "roles": [{"name": "Moderator"}, {"name": "Muted"}],
            "categories": [
                {
                    "name": "Staff",
                    "overwrites": [
                        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                        {"role": "Moderator", "allow": ["VIEW_CHANNEL"]},
                        {"role": "Muted", "deny": ["SEND_MESSAGES"]},
                    ],
                    "channels": [{"name": "Mod Log", **channel}],
                }
            ],
        }
    )


MOD_LOG = "text 'mod-log' in category 'Staff'"


def test_a_channel_takes_its_categorys_overwrites_role_by_role():
    access = config_access(server())

    assert access[MOD_LOG, "@everyone"] == 0
    assert access[MOD_LOG, "Moderator"] == VIEW | SEND
    assert access["category 'Staff'", "Moderator"] == VIEW | SEND


def test_a_neutral_overwrite_on_the_channel_drops_the_categorys_for_that_role_only():
    access = config_access(server(overwrites=[{"role": "Moderator"}]))

    assert access[MOD_LOG, "Moderator"] == 0
    assert access[MOD_LOG, "Muted"] == 0  # still denied by the category's @everyone overwrite


def test_a_role_with_administrator_does_everything_in_every_place():
    config = server()
    config.roles[1].permissions = ["ADMINISTRATOR"]

    assert config_access(config)[MOD_LOG, "Muted"] == ALL_PERMISSIONS


def test_differences_name_the_place_the_role_and_each_permission_gained_or_lost():
    expected = config_access(server())
    actual = config_access(server(overwrites=[{"role": "Moderator", "allow": ["EMBED_LINKS"]}]))

    assert access_differences(expected, expected) == []
    assert access_differences(expected, actual) == [f"{MOD_LOG}, Moderator: loses VIEW_CHANNEL, SEND_MESSAGES"]
    assert access_differences({("a", "b"): 0}, {}) == ["a, b: expected only"]


def test_a_live_guild_is_read_by_role_name_without_managed_roles_or_member_overwrites():
    guild = GuildBuilder()
    moderator = guild.role("Moderator")
    guild.role("Moderator", "ADMINISTRATOR", position=1)  # lower: the export keeps the higher one
    private = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), overwrite(moderator, allow=("VIEW_CHANNEL",))]
    member = {"id": "1191000000000000101", "type": 1, "allow": str(VIEW), "deny": "0"}
    guild.channel("mod-log", parent=guild.category("Staff"), overwrites=[*private, member])

    access = guild_access(guild.build())

    assert {holder for _, holder in access} == {"@everyone", "Moderator"}
    assert access[MOD_LOG, "Moderator"] == VIEW | SEND | bits("READ_MESSAGE_HISTORY", "CONNECT", "SPEAK")
    assert access[MOD_LOG, "@everyone"] == 0


def test_a_bit_without_a_name_grants_nothing_a_configuration_can_say():
    guild = GuildBuilder()
    guild.roles[0] = guild.roles[0].model_copy(update={"permissions": str(int(guild.roles[0].permissions) | 1 << 47)})
    guild.channel("general")

    access = guild_access(guild.build())

    assert access["text 'general'", "@everyone"] == EVERYONE_PERMISSIONS  # bit 47 left out
