"""export: a live guild read as a configuration that the deploy plan reads back as the same guild."""

from __future__ import annotations

from svcconf.chat import Guild, PermissionOverwrite
from svcconf.config import ServerConfig, to_bitfield
from svcconf.config.access import VIEW_CHANNEL_BIT, access_differences, config_access
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import guild_access
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.live_guilds import BOT_ROLE_ID, GUILD_ID, GuildBuilder, overwrite
from tests.helpers.live_settings import with_settings

FORUM_TAGS = [
    {"id": "1191000000000009801", "name": "Bug", "moderated": False, "emoji_name": "🐛"},
    {"id": "1191000000000009802", "name": "Solved", "moderated": True, "emoji_name": None},
]


def hand_built() -> tuple[GuildBuilder, dict[str, str]]:
    """A guild with every kind of object: roles with an emoji, a private category, a forum with tags, voice."""
    guild = GuildBuilder()
    ids = {"mod": guild.role("Moderator", "KICK_MEMBERS", "MANAGE_MESSAGES", color=0x3498DB, hoist=True)}
    ids["member"] = guild.role("Member", "SEND_MESSAGES", unicode_emoji="🙂", mentionable=True)
    private = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), overwrite(ids["mod"], allow=("VIEW_CHANNEL",))]
    ids["staff"] = guild.category("Staff", private)
    guild.channel("mod-log", parent=ids["staff"], overwrites=private, topic="Who did what", rate_limit_per_user=30)
    guild.channel(
        "staff-talk",
        parent=ids["staff"],
        overwrites=[*private, overwrite(ids["member"], deny=("SEND_MESSAGES",))],
    )
    ids["afk"] = guild.channel("Quiet Room", "voice", parent=ids["staff"], overwrites=private, bitrate=64000,
                               user_limit=4, video_quality_mode=2)  # fmt: skip
    ids["community"] = guild.category("Community")
    ids["general"] = guild.channel("general", parent=ids["community"], nsfw=False)
    guild.channel(
        "help",
        "forum",
        parent=ids["community"],
        topic="Ask here",
        available_tags=FORUM_TAGS,
        default_reaction_emoji={"emoji_id": None, "emoji_name": "👍"},
        default_thread_rate_limit_per_user=60,
        default_sort_order=1,
        default_forum_layout=2,
        flags=1 << 4,
    )
    guild.channel("rules", topic="Read first")
    return guild, ids


def settings_of(ids: dict[str, str], **changes: object) -> Guild:
    values = {
        "id": GUILD_ID,
        "name": "Test Guild",
        "verification_level": 2,
        "default_message_notifications": 1,
        "explicit_content_filter": 2,
        "afk_channel_id": ids["afk"],
        "afk_timeout": 900,
        "system_channel_id": ids["general"],
        "system_channel_flags": 0b101,
        "preferred_locale": "de",
    }
    return Guild.model_validate(values | changes)


def test_a_hand_built_guild_exports_to_a_configuration_that_deploys_back_with_no_write():
    guild, ids = hand_built()
    live = with_settings(guild.build(), settings_of(ids))

    exported = export_config(live, settings_of(ids))

    plan = plan_deployment(live, exported.config)
    assert plan.steps == []
    assert {item.action for item in plan.items} == {"keep"}
    # The same through JSON, as a client sends it back.
    again = ServerConfig.model_validate_json(exported.config.model_dump_json())
    assert plan_deployment(live, again).steps == []


def test_roles_come_top_to_bottom_without_managed_ones_and_everyone_becomes_its_permissions():
    guild, _ = hand_built()

    config = export_config(guild.build(), settings_of(_ids(guild))).config

    assert [role.name for role in config.roles] == ["Member", "Moderator"]
    member, moderator = config.roles
    assert (member.emoji, member.mentionable, member.permissions) == ("🙂", True, ["SEND_MESSAGES"])
    assert (moderator.color, moderator.hoist) == (0x3498DB, True)
    assert config.everyone_permissions == ["VIEW_CHANNEL", "SEND_MESSAGES", "READ_MESSAGE_HISTORY", "CONNECT", "SPEAK"]


def _ids(guild: GuildBuilder) -> dict[str, str]:
    by_name = {channel.name: channel.id for channel in guild.channels}
    return {"afk": by_name["Quiet Room"], "general": by_name["general"]}


def test_a_channel_keeps_only_the_overwrites_that_differ_from_its_category():
    guild, ids = hand_built()

    config = export_config(guild.build(), settings_of(ids)).config

    staff = config.categories[0]
    assert staff.name == "Staff"
    assert [(o.role, o.allow, o.deny) for o in staff.overwrites] == [
        ("@everyone", [], ["VIEW_CHANNEL"]),
        ("Moderator", ["VIEW_CHANNEL"], []),
    ]
    mod_log, staff_talk, quiet = staff.channels
    assert mod_log.overwrites == []
    assert [(o.role, o.deny) for o in staff_talk.overwrites] == [("Member", ["SEND_MESSAGES"])]
    assert (quiet.type, quiet.bitrate, quiet.user_limit, quiet.video_quality) == ("voice", 64000, 4, "full")
    assert (mod_log.topic, mod_log.slowmode_seconds) == ("Who did what", 30)


def test_forum_fields_and_settings_are_read_by_name():
    guild, ids = hand_built()

    config = export_config(guild.build(), settings_of(ids)).config

    forum = config.categories[1].channels[1]
    assert forum.type == "forum"
    assert [(t.name, t.emoji, t.moderated) for t in forum.tags or []] == [("Bug", "🐛", False), ("Solved", None, True)]
    assert (forum.default_reaction, forum.default_thread_slowmode_seconds) == ("👍", 60)
    assert (forum.default_sort, forum.default_layout, forum.require_tag) == ("creation_date", "gallery", True)
    settings = config.settings
    assert settings is not None
    assert settings.model_dump(exclude_none=True) == {
        "verification_level": "medium",
        "default_notifications": "only_mentions",
        "explicit_content_filter": "all_members",
        "afk_channel": "Quiet Room",
        "afk_timeout": 900,
        "system_channel": "general",
        "system_channel_flags": ["SUPPRESS_JOIN_NOTIFICATIONS", "SUPPRESS_GUILD_REMINDER_NOTIFICATIONS"],
        "preferred_locale": "de",
    }
    assert [c.name for c in config.channels] == ["rules"]


def test_member_overwrites_and_overwrites_for_managed_roles_are_left_out_and_named():
    guild = GuildBuilder()
    member = {"id": "1191000000000000101", "type": 1, "allow": to_bitfield(["VIEW_CHANNEL"]), "deny": "0"}
    guild.channel("secret", overwrites=[member, overwrite(BOT_ROLE_ID, allow=("VIEW_CHANNEL",))])
    live = guild.build()

    exported = export_config(live, Guild(id=GUILD_ID, name="g"))

    assert exported.config.channels[0].overwrites == []
    rules = [(w.field, w.rule) for w in exported.warnings if w.rule in ("member-overwrite", "unrepresentable")]
    assert rules == [("channels[0].overwrites", "member-overwrite"), ("channels[0].overwrites", "unrepresentable")]
    assert plan_deployment(live, exported.config).steps == []


def test_names_the_deploy_would_confuse_keep_one_object_and_warn_about_the_other():
    guild = GuildBuilder()
    guild.role("Helper", "SEND_MESSAGES")
    guild.role("helper", "KICK_MEMBERS")
    guild.category("Games")
    guild.category("games")
    guild.channel("chat")
    guild.channel("Chat", "voice")
    guild.channel("chat")
    live = guild.build()

    exported = export_config(live, Guild(id=GUILD_ID, name="g"))

    config = exported.config
    assert len(config.roles) == 1
    assert len(config.categories) == 1
    assert sorted((c.name, c.type) for c in config.channels) == [("Chat", "voice"), ("chat", "text")]
    assert [w.rule for w in exported.warnings].count("name-collision") == 3
    assert plan_deployment(live, config).steps == []


def administration_category() -> tuple[GuildBuilder, dict[str, str]]:
    """A category that lets Moderator view, holding a channel only GA Manager may view (no Moderator overwrite)."""
    guild = GuildBuilder()
    ids = {"moderator": guild.role("Moderator"), "manager": guild.role("GA Manager")}
    grants = [overwrite(ids["moderator"], allow=("VIEW_CHANNEL",))]
    category = guild.category("Administration", grants)
    guild.channel("mod-chat", parent=category, overwrites=grants)
    admin_only = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), overwrite(ids["manager"], allow=("VIEW_CHANNEL",))]
    guild.channel("admin", parent=category, overwrites=admin_only)
    return guild, ids


def test_a_channel_without_its_categorys_overwrite_says_so_with_a_neutral_overwrite_not_a_warning():
    guild, _ = administration_category()

    exported = export_config(guild.build(), Guild(id=GUILD_ID, name="g"))

    admin = exported.config.categories[0].channels[1]
    assert [(o.role, o.allow, o.deny) for o in admin.overwrites] == [
        ("Moderator", [], []),  # the category's roles first, as a deploy writes them
        ("@everyone", [], ["VIEW_CHANNEL"]),
        ("GA Manager", ["VIEW_CHANNEL"], []),
    ]
    assert [w for w in exported.warnings if w.rule == "unrepresentable"] == []


def test_the_export_grants_exactly_what_the_guild_does_and_deploys_back_with_no_write():
    guild, _ = administration_category()
    live = guild.build()

    config = export_config(live, Guild(id=GUILD_ID, name="g")).config

    assert access_differences(guild_access(live), config_access(config)) == []
    admin = "text 'admin' in category 'Administration'"
    assert not config_access(config)[admin, "Moderator"] & VIEW_CHANNEL_BIT
    assert plan_deployment(live, config).steps == []


def test_what_the_schema_cannot_hold_is_left_out_with_a_warning_not_a_failure():
    guild = GuildBuilder()
    guild.role("Booster", unicode_emoji=None, icon="a1b2c3")
    guild.channel("Big Stage", "voice", bitrate=384000, user_limit=10)
    guild.channel("Odd", "forum", available_tags=[{"name": "Custom", "emoji_id": "1191000000000009999",
                                                   "emoji_name": "partyblob"}])  # fmt: skip
    unnamed_bit = str((1 << 47) | 1024)
    guild.channels.append(
        guild.channels[0].model_copy(update={"id": "1191000000000009990", "name": "Media", "type": 16})
    )
    guild.roles[0] = guild.roles[0].model_copy(update={"permissions": unnamed_bit})
    live = guild.build()

    exported = export_config(live, Guild(id=GUILD_ID, name="g", preferred_locale="xx-XX", afk_channel_id="1"))

    config = exported.config
    assert config.everyone_permissions == ["VIEW_CHANNEL"]
    odd, stage = config.channels  # as people see them: text-like channels above voice-like ones
    assert stage.bitrate is None
    assert odd.tags is not None
    assert odd.tags[0].emoji is None
    assert {(w.field, w.rule) for w in exported.warnings} >= {
        ("everyone_permissions", "unrepresentable"),
        ("roles[0].emoji", "unrepresentable"),
        ("channels[1].bitrate", "unrepresentable"),
        ("channels[0].tags[0].emoji", "unrepresentable"),
        ("channels", "unrepresentable"),
        ("settings.preferred_locale", "unrepresentable"),
        ("settings.afk_channel", "unrepresentable"),
    }


def test_the_lint_runs_on_the_export():
    guild = GuildBuilder()
    guild.role("Everyone Admin", "ADMINISTRATOR", "KICK_MEMBERS")

    exported = export_config(guild.build(), Guild(id=GUILD_ID, name="g"))

    assert "administrator-redundant-permissions" in {w.rule for w in exported.warnings}


def test_overwrite_objects_parse_as_the_platform_sends_them():
    # A guard on the builder: overwrites are the client's own model, not dicts the exporter happens to read.
    guild, _ = hand_built()
    assert all(isinstance(o, PermissionOverwrite) for c in guild.build().channels for o in c.permission_overwrites)


def test_a_guild_at_the_platforms_caps_exports_whole_and_deploys_back_with_no_write():
    # 250 roles (@everyone and the bot's included), 500 channels: 10 private categories of 49 channels each.
    guild = GuildBuilder()
    role_ids = [guild.role(f"Team {n:03}", "SEND_MESSAGES", color=n) for n in range(248)]
    for c in range(10):
        private = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), *(overwrite(r, allow=("VIEW_CHANNEL",))
                                                                 for r in role_ids[c * 20 : c * 20 + 20])]  # fmt: skip
        category = guild.category(f"Division {c}", private)
        for n in range(49):
            own = [overwrite(role_ids[c * 20 + n % 20], allow=("VIEW_CHANNEL", "ATTACH_FILES"))] if n % 7 == 0 else []
            guild.channel(f"room-{c}-{n}", "voice" if n % 5 == 0 else "text", parent=category, overwrites=private + own)
    live = guild.build()
    assert (len(live.roles), len(live.channels)) == (250, 500)

    exported = export_config(live, Guild(id=GUILD_ID, name="g"))

    config = exported.config
    assert (len(config.roles), config.channel_count()) == (248, 500)
    assert [w.rule for w in exported.warnings if w.rule in ("unrepresentable", "name-collision")] == []
    assert sum(len(channel.overwrites) for channel in config.all_channels()) == 10 * 7
    assert plan_deployment(live, exported.config).steps == []


def test_overwrites_past_what_a_create_body_takes_are_named_not_a_failure():
    guild = GuildBuilder()
    role_ids = [guild.role(f"R{n}") for n in range(120)]
    guild.channel("crowded", overwrites=[overwrite(r, allow=("VIEW_CHANNEL",)) for r in role_ids])

    exported = export_config(guild.build(), Guild(id=GUILD_ID, name="g"))

    assert len(exported.config.channels[0].overwrites) == 100
    assert ("channels[0].overwrites", "unrepresentable") in {(w.field, w.rule) for w in exported.warnings}


def test_a_plain_role_the_bot_also_holds_is_exported_its_managed_role_is_not():
    guild = GuildBuilder()
    bots = guild.role("Bots", "SEND_MESSAGES")
    live = guild.build().model_copy(update={"bot_role_ids": [BOT_ROLE_ID, bots]})

    config = export_config(live, Guild(id=GUILD_ID, name="g")).config

    assert [role.name for role in config.roles] == ["Bots"]
