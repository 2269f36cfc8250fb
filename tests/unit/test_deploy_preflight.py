"""The preflight on its own: what the platform would refuse, found before anything is queued, by path."""

from __future__ import annotations

from svcconf.config import ServerConfig, to_bitfield
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from tests.helpers.live_guilds import ADMINISTRATOR, BROAD, GuildBuilder, community_config, holding_guild, v2_config

MANAGE_GUILD = int(to_bitfield(["MANAGE_GUILD"]))


def problems(guild: GuildBuilder, config: dict | ServerConfig) -> list[tuple[str, str]]:
    config = (
        config if isinstance(config, ServerConfig) else ServerConfig.model_validate({"name": "Community", **config})
    )
    live = guild.build()
    return [(p.field, p.message) for p in preflight_problems(live, plan_deployment(live, config))]


def fields(guild: GuildBuilder, config: dict | ServerConfig) -> list[str]:
    return [field for field, _ in problems(guild, config)]


def test_a_configuration_the_bot_can_apply_has_no_problem():
    config = community_config().model_dump(exclude_unset=True)
    config["roles"][0]["permissions"] = ["MANAGE_GUILD"]  # the bot holds everything but ADMINISTRATOR

    assert problems(GuildBuilder(), config) == []


def test_a_role_granting_a_permission_the_bot_lacks_is_named_with_the_permission():
    guild = GuildBuilder(bot_permissions=int(to_bitfield(["MANAGE_ROLES", "MANAGE_CHANNELS", "VIEW_CHANNEL"])))

    found = problems(
        guild, {"roles": [{"name": "Mod"}, {"name": "Boss", "permissions": ["KICK_MEMBERS", "VIEW_CHANNEL"]}]}
    )

    assert found == [("roles[1].permissions", "grants KICK_MEMBERS, which the bot does not hold")]


def test_administrator_is_a_permission_like_any_other_for_a_bot_without_it():
    assert fields(GuildBuilder(), community_config()) == ["roles[0].permissions"]
    assert fields(GuildBuilder(bot_permissions=ADMINISTRATOR), community_config()) == []


def test_an_existing_role_may_keep_permissions_the_bot_lacks_but_not_gain_more():
    guild = GuildBuilder(bot_permissions=int(to_bitfield(["MANAGE_ROLES", "MANAGE_CHANNELS", "SEND_MESSAGES"])))
    guild.role("Mod", "KICK_MEMBERS", position=1)

    keeps = {"roles": [{"name": "Mod", "permissions": ["KICK_MEMBERS", "SEND_MESSAGES"]}]}
    gains = {"roles": [{"name": "Mod", "permissions": ["KICK_MEMBERS", "BAN_MEMBERS"]}]}

    assert problems(guild, keeps) == []
    assert fields(guild, gains) == ["roles[0].permissions"]


def test_a_named_role_at_or_above_the_bots_highest_role_may_stay_but_not_change():
    guild = GuildBuilder()
    guild.role("Owner", "KICK_MEMBERS", position=2)  # above the bot's role, which moves to 1

    unchanged = {"roles": [{"name": "Owner", "permissions": ["KICK_MEMBERS"]}]}
    changed = {"roles": [{"name": "Member"}, {"name": "Owner", "permissions": ["BAN_MEMBERS"]}]}

    assert problems(guild, unchanged) == []
    ((field, message),) = problems(guild, changed)
    assert field == "roles[1]"
    assert "'Owner'" in message
    assert "'svc-bot'" in message


def test_overwrites_setting_permissions_the_bot_lacks_are_named_once_where_they_are_written():
    guild = GuildBuilder(bot_permissions=int(to_bitfield(["MANAGE_ROLES", "MANAGE_CHANNELS", "VIEW_CHANNEL"])))
    config = {
        "categories": [
            {
                "name": "Staff",
                "overwrites": [{"role": "@everyone", "deny": ["MANAGE_MESSAGES"]}],
                "channels": [
                    {"name": "a"},
                    {"name": "b", "overwrites": [{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}]},
                ],
            }
        ]
    }

    found = problems(guild, config)

    assert found == [("categories[0].overwrites[0]", "sets MANAGE_MESSAGES, which the bot does not hold")]


def test_manage_roles_in_an_overwrite_needs_a_bot_with_administrator():
    config = {"channels": [{"name": "desk", "overwrites": [{"role": "@everyone", "deny": ["MANAGE_ROLES"]}]}]}

    assert fields(GuildBuilder(), config) == ["channels[0].overwrites[0]"]
    assert fields(GuildBuilder(bot_permissions=ADMINISTRATOR), config) == []


def test_announcement_and_stage_channels_need_the_guilds_features():
    config = {"channels": [{"name": "news", "type": "announcement"}, {"name": "stage", "type": "stage"}]}

    assert fields(GuildBuilder(features=()), config) == ["channels[0].type", "channels[1].type"]
    assert fields(GuildBuilder(features=("NEWS", "COMMUNITY")), config) == []


def test_the_role_cap_counts_the_live_roles_and_the_new_ones():
    guild = GuildBuilder()
    for index in range(200):
        guild.role(f"old-{index}", position=1)  # 202 roles with @everyone and the bot's
    config = {"roles": [{"name": f"new-{index}"} for index in range(48)]}

    assert problems(guild, config) == []
    ((field, message),) = problems(guild, {"roles": [{"name": f"new-{index}"} for index in range(49)]})
    assert field == "roles"
    assert "202" in message
    assert "49" in message


def test_the_channel_cap_counts_categories_and_a_category_holds_at_most_fifty():
    guild = GuildBuilder()
    hub = guild.category("Hub")
    for index in range(45):
        guild.channel(f"old-{index}", parent=hub)
    config = {"categories": [{"name": "Hub", "channels": [{"name": f"new-{index}"} for index in range(6)]}]}

    assert fields(guild, config) == ["categories[0].channels"]

    crowded = GuildBuilder()
    for index in range(495):
        crowded.channel(f"c-{index}")
    assert fields(crowded, {"categories": [{"name": "A", "channels": [{"name": "x"}, {"name": "y"}]}]}) == []
    assert fields(crowded, {"categories": [{"name": f"k{index}"} for index in range(6)]}) == ["channels"]


def test_a_bot_without_manage_roles_or_manage_channels_gets_one_problem_each():
    guild = GuildBuilder(bot_permissions=int(to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"])))

    found = problems(guild, community_config())

    assert [field for field, _ in found] == ["roles[0]", "categories[0]"]
    assert "MANAGE_ROLES" in found[0][1]
    assert "MANAGE_CHANNELS" in found[1][1]


# -- configuration version 2 ----------------------------------------------------------------------------------


def test_a_full_v2_configuration_passes_on_a_guild_with_the_features_it_needs():
    assert problems(GuildBuilder(features=("COMMUNITY", "NEWS", "ROLE_ICONS")), v2_config()) == []


def test_settings_that_differ_need_manage_guild_and_settings_that_match_do_not():
    guild = GuildBuilder(bot_permissions=BROAD & ~MANAGE_GUILD, features=("COMMUNITY", "NEWS", "ROLE_ICONS"))
    held = holding_guild()
    held.roles[1].permissions = str(BROAD & ~MANAGE_GUILD)

    assert problems(guild, v2_config()) == [
        ("settings", "the bot needs MANAGE_GUILD in this server to change its name and settings")
    ]
    assert problems(held, v2_config()) == []


def test_a_new_server_name_needs_manage_guild_and_the_platforms_two_characters():
    guild = GuildBuilder(bot_permissions=BROAD & ~MANAGE_GUILD)

    assert problems(guild, {"name": "Renamed"}) == [
        ("name", "the bot needs MANAGE_GUILD in this server to change its name and settings")
    ]
    assert problems(GuildBuilder(), {"name": "X"}) == [("name", "the platform's server names have 2 to 100 characters")]


def test_the_caps_count_what_a_pruning_deploy_deletes():
    guild = GuildBuilder()
    for n in range(499):
        guild.channel(f"old-{n}")
    config = ServerConfig.model_validate({"name": "Community", "channels": [{"name": f"new-{n}"} for n in range(5)]})
    live = guild.build()

    kept = preflight_problems(live, plan_deployment(live, config))
    pruned = preflight_problems(live, plan_deployment(live, config, prune=True))

    assert [p.field for p in kept] == ["channels"]
    assert pruned == []


def test_role_emoji_need_role_icons_and_a_description_needs_community():
    assert fields(GuildBuilder(features=("NEWS",)), v2_config()) == ["roles[0].emoji", "settings.description"]
    body = v2_config().model_dump(exclude_unset=True)
    del body["roles"][0]["emoji"], body["settings"]["description"]
    assert fields(GuildBuilder(features=("NEWS",)), body) == []


def test_everyone_permissions_the_bot_lacks_are_named_at_everyone_permissions():
    guild = GuildBuilder(bot_permissions=BROAD & ~MANAGE_GUILD, features=("COMMUNITY", "ROLE_ICONS"))
    body = {"everyone_permissions": ["VIEW_CHANNEL", "MANAGE_GUILD"]}

    assert problems(guild, body) == [("everyone_permissions", "grants MANAGE_GUILD, which the bot does not hold")]


def test_an_afk_channel_that_resolves_to_a_live_channel_of_another_type_is_refused():
    guild = GuildBuilder(features=("COMMUNITY", "NEWS", "ROLE_ICONS"))
    hall = guild.category("Hall")
    text = guild.channel("quiet-room", parent=hall)
    live = guild.build()
    plan = plan_deployment(live, v2_config())
    plan.ids["channel:category:hall:2:quiet room"] = text  # as if matching had found this one

    assert [(p.field, p.message) for p in preflight_problems(live, plan)] == [
        ("settings.afk_channel", "names channel 'quiet-room', which is not a voice channel")
    ]
