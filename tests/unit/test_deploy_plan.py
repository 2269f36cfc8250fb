"""The deploy plan on its own: live guild + configuration -> ordered steps; converge, never delete."""

from __future__ import annotations

import pytest

from svcconf.config import ServerConfig, to_bitfield
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import ChannelStep, ReorderRoles, RoleStep
from svcconf.errors import BadRequest
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, community_config, overwrite


def ops(plan) -> list[tuple[str, str]]:
    return [(step.op, step.name) for step in plan.steps]


def items(plan, action: str | None = None) -> list[tuple[str, str, str]]:
    return [(i.kind, i.name, i.action) for i in plan.items if action is None or i.action == action]


def test_an_empty_guild_gets_roles_then_categories_then_channels_in_configuration_order():
    plan = plan_deployment(GuildBuilder().build(), community_config())

    assert ops(plan) == [
        ("create_role", "Admin"),
        ("create_role", "Moderator"),
        ("create_role", "Member"),
        ("create_channel", "Community"),
        ("create_channel", "Staff"),
        ("create_channel", "Community / General Chat"),
        ("create_channel", "Community / Lounge"),
        ("create_channel", "Staff / mod-log"),
        ("create_channel", "Staff / staff-talk"),
        ("create_channel", "rules"),
    ]
    # Created in configuration order, each new role lands below the previous one: no reorder is needed.
    assert not any(isinstance(step, ReorderRoles) for step in plan.steps)


def test_new_roles_carry_explicit_permissions_and_their_attributes():
    plan = plan_deployment(GuildBuilder().build(), community_config())

    member = next(step for step in plan.steps if step.name == "Member")
    moderator = next(step for step in plan.steps if step.name == "Moderator")
    assert member.payload == {
        "name": "Member",
        "permissions": to_bitfield(["SEND_MESSAGES"]),
        "color": 0,
        "hoist": False,
        "mentionable": False,
    }
    assert moderator.payload["color"] == 3447003
    assert moderator.payload["hoist"] is True


def test_channels_carry_their_parent_and_their_categorys_overwrites_with_their_own_per_role():
    plan = plan_deployment(GuildBuilder().build(), community_config())
    steps = {step.name: step for step in plan.steps}

    staff_talk = steps["Staff / staff-talk"]
    assert isinstance(staff_talk, ChannelStep)
    assert staff_talk.parent == "category:staff"
    assert staff_talk.payload == {"name": "staff-talk", "type": 0, "position": 1}
    assert {(spec.target, spec.allow, spec.deny) for spec in staff_talk.overwrites} == {
        ("@everyone", 0, int(to_bitfield(["VIEW_CHANNEL"]))),
        ("role:moderator", int(to_bitfield(["VIEW_CHANNEL"])), 0),
        ("role:member", 0, int(to_bitfield(["SEND_MESSAGES"]))),
    }
    assert steps["Staff / mod-log"].payload == {"name": "mod-log", "type": 0, "rate_limit_per_user": 30, "position": 0}
    assert steps["Community / Lounge"].payload == {"name": "Lounge", "type": 2, "user_limit": 10, "position": 0}
    assert steps["Community / General Chat"].parent == "category:community"


def test_the_plan_counts_every_overwrite_as_an_object_of_its_own():
    plan = plan_deployment(GuildBuilder().build(), community_config())

    overwrites = [name for kind, name, action in items(plan) if kind == "overwrite"]
    assert overwrites == [
        "Staff → @everyone",
        "Staff → Moderator",
        "Staff / mod-log → @everyone",
        "Staff / mod-log → Moderator",
        "Staff / staff-talk → @everyone",
        "Staff / staff-talk → Moderator",
        "Staff / staff-talk → Member",
    ]


def matching_guild() -> GuildBuilder:
    """A guild that already holds community_config() exactly, with ids as the platform gave them."""
    guild = GuildBuilder(bot_permissions=BROAD_WITH_ADMIN)
    guild.role("Admin", "ADMINISTRATOR", color=0xE74C3C, hoist=True)
    moderator = guild.role("Moderator", "KICK_MEMBERS", "MANAGE_MESSAGES", position=1, color=3447003, hoist=True)
    member = guild.role("Member", "SEND_MESSAGES", position=1)
    community = guild.category("Community")
    staff = guild.category(
        "Staff", [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), overwrite(moderator, allow=("VIEW_CHANNEL",))]
    )
    guild.channel("general-chat", parent=community, topic="Say hello")
    guild.channel("Lounge", "voice", parent=community, user_limit=10)
    staff_overwrites = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), overwrite(moderator, allow=("VIEW_CHANNEL",))]
    guild.channel("mod-log", parent=staff, overwrites=staff_overwrites, rate_limit_per_user=30)
    guild.channel(
        "staff-talk", parent=staff, overwrites=[*staff_overwrites, overwrite(member, deny=("SEND_MESSAGES",))]
    )
    guild.channel("rules", topic="Read first")
    return guild


BROAD_WITH_ADMIN = int(to_bitfield(["ADMINISTRATOR"]))


def test_a_guild_that_already_matches_gets_no_write_at_all():
    plan = plan_deployment(matching_guild().build(), community_config())

    assert plan.steps == []
    assert {action for _, _, action in items(plan)} == {"keep"}
    assert len(items(plan)) == 3 + 2 + 5 + 7 + 1  # roles, categories, channels, overwrites, the settings


def test_text_channel_names_match_as_the_platform_stores_them():
    guild = GuildBuilder()
    guild.channel("welcome-hall", topic="hi")
    config = ServerConfig.model_validate({"name": "Community", "channels": [{"name": "Welcome Hall", "topic": "hi"}]})

    plan = plan_deployment(guild.build(), config)

    assert plan.steps == []
    assert items(plan) == [("channel", "Welcome Hall", "keep"), ("settings", "server settings", "keep")]


def test_a_channel_of_another_type_or_category_is_another_channel():
    guild = GuildBuilder()
    lobby = guild.category("Lobby")
    guild.channel("chat", "voice")
    guild.channel("chat", parent=lobby)
    config = ServerConfig.model_validate({"name": "Community", "channels": [{"name": "chat", "type": "text"}]})

    plan = plan_deployment(guild.build(), config)

    assert ops(plan) == [("create_channel", "chat")]


def test_changed_permissions_and_topics_update_exactly_those_objects_with_old_and_new_values():
    config = community_config().model_dump(exclude_unset=True)
    config["roles"][2]["permissions"] = ["SEND_MESSAGES", "ATTACH_FILES"]
    config["categories"][0]["channels"][0]["topic"] = "Say hello, be kind"

    plan = plan_deployment(matching_guild().build(), ServerConfig.model_validate(config))

    assert ops(plan) == [("update_role", "Member"), ("update_channel", "Community / General Chat")]
    member, general = plan.steps
    assert member.payload == {"permissions": to_bitfield(["SEND_MESSAGES", "ATTACH_FILES"])}
    assert member.previous == {"permissions": to_bitfield(["SEND_MESSAGES"])}
    assert general.payload == {"topic": "Say hello, be kind"}
    updated = [(i.name, [(c.field, c.old, c.new) for c in i.changes]) for i in plan.items if i.action == "update"]
    assert updated == [
        ("Member", [("permissions", to_bitfield(["SEND_MESSAGES"]), to_bitfield(["SEND_MESSAGES", "ATTACH_FILES"]))]),
        ("Community / General Chat", [("topic", "Say hello", "Say hello, be kind")]),
    ]


def test_an_attribute_the_configuration_omits_never_resets_the_live_one():
    guild = GuildBuilder()
    guild.role("Member", "SEND_MESSAGES", hoist=True, color=5)
    guild.channel("news", topic="today", nsfw=True)
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "roles": [{"name": "Member", "permissions": ["SEND_MESSAGES"]}],
            "channels": [{"name": "news"}],
        }
    )

    plan = plan_deployment(guild.build(), config)

    assert plan.steps == []


def test_objects_the_configuration_does_not_name_are_left_alone():
    guild = GuildBuilder()
    guild.role("Old Role", "KICK_MEMBERS")
    lobby = guild.category("Lobby")
    guild.channel("old-chat", parent=lobby)
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "New"}]})

    plan = plan_deployment(guild.build(), config)

    assert ops(plan) == [("create_role", "New")]


def test_an_existing_channel_gets_missing_overwrites_merged_into_its_own_list():
    guild = GuildBuilder()
    moderator = guild.role("Moderator")
    guild.channel("desk", overwrites=[overwrite("1191000000000000777", allow=("VIEW_CHANNEL",))])
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "roles": [{"name": "Moderator"}],
            "channels": [{"name": "desk", "overwrites": [{"role": "Moderator", "allow": ["MANAGE_MESSAGES"]}]}],
        }
    )

    plan = plan_deployment(guild.build(), config)

    (step,) = plan.steps
    assert isinstance(step, ChannelStep)
    assert (step.op, step.payload) == ("update_channel", {})
    assert [o["id"] for o in step.base_overwrites] == ["1191000000000000777"]
    assert [(s.target, s.allow) for s in step.overwrites] == [("role:moderator", int(to_bitfield(["MANAGE_MESSAGES"])))]
    assert plan.ids["role:moderator"] == moderator
    assert items(plan)[-3:-1] == [("channel", "desk", "keep"), ("overwrite", "desk → Moderator", "create")]


def test_configured_roles_out_of_order_are_moved_once_within_their_own_slots():
    guild = GuildBuilder()
    member = guild.role("Member")  # lowest
    guild.role("Bystander")
    moderator = guild.role("Moderator")  # highest below the bot
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "Member"}, {"name": "Moderator"}]})

    plan = plan_deployment(guild.build(), config)

    (reorder,) = plan.steps
    assert isinstance(reorder, ReorderRoles)
    positions = {entry.ref: entry.position for entry in reorder.positions}
    assert positions[member] == 3
    assert positions[moderator] == 1
    assert sorted(positions.values()) == [1, 2, 3]  # the Bystander keeps the middle


def test_a_new_role_listed_above_an_existing_one_is_moved_above_it():
    guild = GuildBuilder()
    guild.role("Member")
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "Captain"}, {"name": "Member"}]})

    plan = plan_deployment(guild.build(), config)

    assert ops(plan) == [("create_role", "Captain"), ("reorder_roles", "role order")]
    positions = {entry.ref: entry.position for entry in plan.steps[1].positions}
    assert positions["role:captain"] == 2


def test_names_given_twice_where_the_deploy_matches_them_are_refused_with_their_paths():
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "categories": [{"name": "Hub", "channels": [{"name": "Chat"}, {"name": "chat"}]}, {"name": "hub"}],
        }
    )

    with pytest.raises(BadRequest) as refused:
        plan_deployment(GuildBuilder().build(), config)

    assert [detail.field for detail in refused.value.details] == [
        "config.categories[0].channels[1].name",
        "config.categories[1].name",
    ]


def test_role_steps_refer_to_live_roles_by_id_and_record_what_they_change():
    guild = GuildBuilder()
    member = guild.role("member", "SEND_MESSAGES")  # matched ignoring case, and given the configuration's case
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "Member", "mentionable": True}]})

    plan = plan_deployment(guild.build(), config)

    (step,) = plan.steps
    assert isinstance(step, RoleStep)
    assert (step.op, step.role_id, step.payload, step.previous) == (
        "update_role",
        member,
        {"name": "Member", "mentionable": True},
        {"name": "member", "mentionable": False},
    )


def test_of_two_live_roles_with_the_configurations_name_the_highest_is_the_one_updated():
    guild = GuildBuilder()
    guild.role("Member", "SEND_MESSAGES")
    highest = guild.role("Member", "SEND_MESSAGES")  # placed below the bot, above the first
    config = ServerConfig.model_validate({"name": "s", "roles": [{"name": "Member", "mentionable": True}]})

    plan = plan_deployment(guild.build(), config)

    (step,) = [step for step in plan.steps if step.op == "update_role"]  # the server's name is a step of its own
    assert (step.op, step.role_id, step.payload) == ("update_role", highest, {"mentionable": True})


def test_a_live_role_of_the_exact_name_wins_over_a_higher_one_that_differs_in_case():
    guild = GuildBuilder()
    exact = guild.role("Member", "SEND_MESSAGES")
    guild.role("member", "SEND_MESSAGES")  # higher, but only the same name ignoring case
    config = ServerConfig.model_validate({"name": "s", "roles": [{"name": "Member", "mentionable": True}]})

    plan = plan_deployment(guild.build(), config)

    (step,) = [step for step in plan.steps if step.op == "update_role"]  # the server's name is a step of its own
    assert (step.op, step.role_id, step.payload) == ("update_role", exact, {"mentionable": True})
