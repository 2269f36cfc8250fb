"""The deploy plan of configuration version 2: settings, @everyone's permissions, role emoji, voice and forum fields,
each created, updated or kept, and a guild that already holds them gets no write."""

from __future__ import annotations

from typing import Any

from svcconf.config import ServerConfig, to_bitfield
from svcconf.config.vocabulary import REQUIRE_TAG_FLAG
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import ChannelStep, GuildStep, RoleStep
from tests.helpers.live_guilds import EVERYONE_PERMISSIONS, GUILD_ID, GuildBuilder, holding_guild, v2_body, v2_config


def steps_by_name(plan) -> dict[str, Any]:
    return {step.name: step for step in plan.steps}


def test_an_empty_guild_gets_every_v2_field_in_the_create_bodies_and_the_settings_last():
    plan = plan_deployment(GuildBuilder().build(), v2_config())

    steps = steps_by_name(plan)
    assert steps["@everyone"].payload == {"permissions": to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"])}
    assert steps["Helper"].payload["unicode_emoji"] == "🛟"
    assert steps["Hall / Quiet Room"].payload == {
        "name": "Quiet Room",
        "type": 2,
        "bitrate": 48000,
        "video_quality_mode": 2,
        "position": 0,
    }
    forum = steps["Hall / ideas"]
    assert isinstance(forum, ChannelStep)
    assert forum.payload == {
        "name": "ideas",
        "type": 15,
        "available_tags": [
            {"name": "Bug", "emoji_name": "🐛", "moderated": False},
            {"name": "Idea", "emoji_name": None, "moderated": False},
            {"name": "Staff pick", "emoji_name": None, "moderated": True},
        ],
        "default_reaction_emoji": {"emoji_id": None, "emoji_name": "👍"},
        "default_thread_rate_limit_per_user": 60,
        "default_sort_order": 1,
        "default_forum_layout": 2,
        "position": 1,  # after the hall's first text channel
    }
    assert forum.after_create == {"flags": REQUIRE_TAG_FLAG}  # the create body takes no flags
    settings = plan.steps[-1]
    assert isinstance(settings, GuildStep)
    assert settings.payload == {
        "verification_level": 2,
        "default_message_notifications": 1,
        "explicit_content_filter": 2,
        "afk_timeout": 900,
        "system_channel_flags": 8,
        "preferred_locale": "en-GB",
        "description": "A server with everything",
    }
    # The AFK and system channels are created by this deploy: named by key, resolved when the step runs.
    assert settings.channels == {
        "afk_channel_id": "channel:category:hall:2:Quiet Room".casefold(),
        "system_channel_id": "channel:category:hall:0:welcome",
    }


def test_the_settings_item_lists_each_change_in_the_configurations_names():
    plan = plan_deployment(GuildBuilder().build(), v2_config())

    [item] = [item for item in plan.items if item.kind == "settings"]
    assert (item.name, item.action, item.field) == ("server settings", "update", "settings")
    assert [(c.field, c.old, c.new) for c in item.changes] == [
        ("verification_level", "none", "medium"),
        ("default_notifications", "all_messages", "only_mentions"),
        ("explicit_content_filter", "disabled", "all_members"),
        ("afk_channel", None, "Quiet Room"),
        ("afk_timeout", 300, 900),
        ("system_channel", None, "welcome"),
        ("system_channel_flags", [], ["SUPPRESS_JOIN_NOTIFICATION_REPLIES"]),
        ("preferred_locale", None, "en-GB"),
        ("description", None, "A server with everything"),
    ]


def test_a_guild_that_holds_every_v2_field_gets_no_write_at_all():
    plan = plan_deployment(holding_guild().build(), v2_config())

    assert plan.steps == []
    assert {item.action for item in plan.items} == {"keep"}
    assert [item.name for item in plan.items if item.kind in ("settings", "role")] == [
        "@everyone",
        "Helper",
        "server settings",
    ]


def test_changed_settings_update_only_those_fields_in_one_guild_step():
    guild = holding_guild()
    lounge = guild.channel("Lounge", "voice")

    plan = plan_deployment(guild.build(), v2_config(verification_level="high", afk_channel="Quiet Room"))
    guild.settings.afk_channel_id = lounge  # the guild's AFK channel is another one now
    moved = plan_deployment(guild.build(), v2_config())

    [step] = plan.steps
    assert isinstance(step, GuildStep)
    assert (step.payload, step.channels, step.previous) == ({"verification_level": 3}, {}, {"verification_level": 2})
    [afk] = moved.steps
    assert isinstance(afk, GuildStep)
    quiet_id = moved.ids["channel:category:hall:2:quiet room"]
    assert (afk.payload, afk.channels) == ({}, {"afk_channel_id": "channel:category:hall:2:quiet room"})
    assert quiet_id != lounge
    [change] = next(item for item in moved.items if item.kind == "settings").changes
    assert (change.field, change.old, change.new) == ("afk_channel", "Lounge", "Quiet Room")


def test_settings_the_configuration_omits_are_left_as_the_guild_has_them():
    body = v2_body()
    body["settings"] = {"verification_level": "medium", "afk_timeout": None}
    guild = holding_guild()
    guild.settings.afk_timeout, guild.settings.preferred_locale = 3600, "fr"

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    assert plan.steps == []


def test_everyone_permissions_update_the_everyone_role_by_the_guilds_id():
    body = v2_body() | {"everyone_permissions": ["VIEW_CHANNEL"]}

    plan = plan_deployment(holding_guild().build(), ServerConfig.model_validate(body))

    [step] = plan.steps
    assert isinstance(step, RoleStep)
    assert (step.op, step.role_id, step.field) == ("update_role", GUILD_ID, "everyone_permissions")
    assert step.payload == {"permissions": to_bitfield(["VIEW_CHANNEL"])}
    assert step.previous == {"permissions": to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"])}


def test_without_everyone_permissions_the_everyone_role_is_not_compared():
    body = v2_body()
    del body["everyone_permissions"]
    guild = holding_guild()
    guild.roles[0].permissions = str(EVERYONE_PERMISSIONS)

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    assert plan.steps == []
    assert "@everyone" not in [item.name for item in plan.items]


def test_a_changed_role_emoji_and_forum_fields_update_with_old_and_new_keeping_the_tag_ids():
    body = v2_body()
    body["roles"][0]["emoji"] = "🧯"
    forum = body["categories"][0]["channels"][2]
    forum["tags"] = [{"name": "Idea", "emoji": "💡"}, {"name": "Question"}]
    forum["require_tag"] = False
    forum["default_layout"] = "list"

    plan = plan_deployment(holding_guild().build(), ServerConfig.model_validate(body))

    steps = steps_by_name(plan)
    assert steps["Helper"].payload == {"unicode_emoji": "🧯"}
    assert steps["Helper"].previous == {"unicode_emoji": "🛟"}
    ideas = steps["Hall / ideas"]
    assert ideas.payload == {
        "available_tags": [
            {"name": "Idea", "emoji_name": "💡", "moderated": False, "id": "1191000000000009902"},
            {"name": "Question", "emoji_name": None, "moderated": False},
        ],
        "default_forum_layout": 1,
        "flags": 0,
    }
    item = next(item for item in plan.items if item.name == "Hall / ideas")
    assert [change.field for change in item.changes] == ["available_tags", "default_forum_layout", "flags"]


def test_voice_fields_update_and_keep_like_the_others():
    body = v2_body()
    body["categories"][0]["channels"][1] |= {"bitrate": 64000, "video_quality": "full"}

    plan = plan_deployment(holding_guild().build(), ServerConfig.model_validate(body))

    [step] = plan.steps
    assert (step.name, step.payload, step.previous) == ("Hall / Quiet Room", {"bitrate": 64000}, {"bitrate": 48000})


def test_an_empty_guild_needs_one_step_per_object_and_one_for_all_the_settings():
    # @everyone, Helper, Hall, its three channels (the forum's flag rides on its create step), the settings.
    assert plan_deployment(GuildBuilder().build(), v2_config()).writes() == 7
