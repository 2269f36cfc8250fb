"""What the plan tells a person and the worker, item by item: each object's path in the configuration, the old and
new value of each change, the overwrites of a channel one by one, what a step journals to undo itself, and the
order of deletions when the platform's caps leave no room."""

from __future__ import annotations

from itertools import groupby
from typing import Any

import pytest

from svcconf.config import ServerConfig, to_bitfield
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import ChannelStep, GuildStep, ReorderRoles
from svcconf.errors import BadRequest
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, community_config, overwrite

VIEW = int(to_bitfield(["VIEW_CHANNEL"]))
SEND = int(to_bitfield(["SEND_MESSAGES"]))


def runs(plan) -> list[tuple[str, int]]:
    """The plan's operations, each run of one operation counted."""
    return [(op, len(list(group))) for op, group in groupby(step.op for step in plan.steps)]


def overwrite_items(plan) -> list[tuple[str, str, str, str, str | None, list[Any]]]:
    return [
        (i.name, i.action, i.field, i.key, i.owner, [(c.field, c.old, c.new) for c in i.changes])
        for i in plan.items
        if i.kind == "overwrite"
    ]


def test_a_name_given_twice_is_refused_naming_both_places_and_why():
    config = ServerConfig.model_validate(
        {"name": "s", "categories": [{"name": "Hub"}, {"name": "hub"}], "channels": [{"name": "a"}, {"name": "A"}]}
    )

    with pytest.raises(BadRequest) as refused:
        plan_deployment(GuildBuilder().build(), config)

    assert refused.value.message == "The configuration names some objects twice."
    assert [(d.field, d.message) for d in refused.value.details or []] == [
        (
            "config.categories[1].name",
            "category 'hub' has the same name as categories[0]: a deploy matches by name, so names must differ",
        ),
        (
            "config.channels[1].name",
            "channel 'A' has the same name as channels[0]: a deploy matches by name, so names must differ",
        ),
    ]


def test_channels_of_one_name_in_different_categories_are_different_channels():
    body = {"name": "s", "categories": [{"name": "A", "channels": [{"name": "chat"}]}], "channels": [{"name": "chat"}]}

    plan = plan_deployment(GuildBuilder().build(), ServerConfig.model_validate(body))

    assert [(i.name, i.action) for i in plan.items if i.kind == "channel"] == [
        ("A / chat", "create"),
        ("chat", "create"),
    ]


def test_every_created_object_and_overwrite_names_its_path_in_the_configuration():
    plan = plan_deployment(GuildBuilder().build(), community_config())

    assert plan.guild_id == GUILD_ID
    assert [(i.kind, i.name, i.field) for i in plan.items if i.kind in ("role", "category")] == [
        ("role", "Admin", "roles[0]"),
        ("role", "Moderator", "roles[1]"),
        ("role", "Member", "roles[2]"),
        ("category", "Community", "categories[0]"),
        ("category", "Staff", "categories[1]"),
    ]
    staff = next(s for s in plan.steps if s.name == "Staff")
    assert isinstance(staff, ChannelStep)
    assert staff.payload == {"name": "Staff", "type": 4, "position": 1}
    assert staff.overwrite_keys == ["overwrite:category:staff:@everyone", "overwrite:category:staff:role:moderator"]
    assert [(i[0], i[2]) for i in overwrite_items(plan) if i[4] == "category:staff"] == [
        ("Staff → @everyone", "categories[1].overwrites[0]"),
        ("Staff → Moderator", "categories[1].overwrites[1]"),
    ]
    talk = next(s for s in plan.steps if s.name == "Staff / staff-talk")
    assert isinstance(talk, ChannelStep)
    assert [(o.target, o.field) for o in talk.overwrites] == [
        ("@everyone", "categories[1].overwrites[0]"),  # inherited from its category: the category's path
        ("role:moderator", "categories[1].overwrites[1]"),
        ("role:member", "categories[1].channels[1].overwrites[0]"),
    ]
    talk_key = "channel:category:staff:0:staff-talk"
    assert [item[:5] for item in overwrite_items(plan) if item[4] == talk_key] == [
        (
            "Staff / staff-talk → @everyone",
            "create",
            "categories[1].overwrites[0]",
            f"overwrite:{talk_key}:@everyone",
            talk_key,
        ),
        (
            "Staff / staff-talk → Moderator",
            "create",
            "categories[1].overwrites[1]",
            f"overwrite:{talk_key}:role:moderator",
            talk_key,
        ),
        (
            "Staff / staff-talk → Member",
            "create",
            "categories[1].channels[1].overwrites[0]",
            f"overwrite:{talk_key}:role:member",
            talk_key,
        ),
    ]


def test_an_existing_channels_overwrites_are_kept_updated_or_created_one_by_one_and_journaled_whole():
    guild = GuildBuilder()
    mods = guild.role("Mods")
    guild.role("Helpers")
    guild.role("Quiet")
    live_overwrites = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)), overwrite(mods, allow=("SEND_MESSAGES",))]
    guild.channel("desk", overwrites=live_overwrites)
    body = {
        "name": "Community",
        "roles": [{"name": "Mods"}, {"name": "Helpers"}, {"name": "Quiet"}],
        "channels": [
            {
                "name": "desk",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},  # as it is
                    {"role": "Mods", "allow": ["VIEW_CHANNEL"]},  # changed
                    {"role": "Helpers", "allow": ["VIEW_CHANNEL"]},  # new
                    {"role": "Quiet"},  # neutral, and the channel has none: nothing to write
                ],
            }
        ],
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    desk = "channel:-:0:desk"
    assert overwrite_items(plan) == [
        ("desk → @everyone", "keep", "channels[0].overwrites[0]", f"overwrite:{desk}:@everyone", desk, []),
        (
            "desk → Mods",
            "update",
            "channels[0].overwrites[1]",
            f"overwrite:{desk}:role:mods",
            desk,
            [
                (
                    "permissions",
                    {"allow": ["SEND_MESSAGES"], "deny": []},
                    {"allow": ["VIEW_CHANNEL"], "deny": []},
                )
            ],
        ),
        ("desk → Helpers", "create", "channels[0].overwrites[2]", f"overwrite:{desk}:role:helpers", desk, []),
        ("desk → Quiet", "keep", "channels[0].overwrites[3]", f"overwrite:{desk}:role:quiet", desk, []),
    ]
    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    assert [(o.target, o.allow, o.deny) for o in step.overwrites] == [
        ("role:mods", VIEW, 0),
        ("role:helpers", VIEW, 0),
    ]
    assert step.overwrite_keys == [f"overwrite:{desk}:role:mods", f"overwrite:{desk}:role:helpers"]
    assert (step.payload, step.previous) == ({}, {"permission_overwrites": step.base_overwrites})
    assert [o["id"] for o in step.base_overwrites] == [GUILD_ID, mods]


def test_a_neutral_overwrite_on_a_channel_that_has_none_plans_no_write():
    guild = GuildBuilder()
    guild.role("Quiet")
    guild.channel("desk")
    body = {
        "name": "Community",
        "roles": [{"name": "Quiet"}],
        "channels": [{"name": "desk", "overwrites": [{"role": "Quiet"}]}],
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    assert plan.steps == []
    assert [(name, action) for name, action, *_ in overwrite_items(plan)] == [("desk → Quiet", "keep")]


def test_a_channel_renamed_and_moved_into_a_category_journals_its_name_parent_and_position():
    guild = GuildBuilder()
    user_overwrite = {"id": "1191000000000000777", "type": 1, "allow": str(SEND), "deny": "0"}
    chat = guild.category("Chat")
    rules = guild.channel("rules", overwrites=[user_overwrite])
    body = {"name": "Community", "categories": [{"name": "Chat", "channels": [{"id": rules, "name": "read-me"}]}]}

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    assert (step.channel_id, step.parent, step.payload) == (rules, "category:chat", {"name": "read-me", "position": 0})
    assert step.previous == {"name": "rules", "parent_id": None, "position": 1}  # after the category
    assert (step.base_overwrites, step.replaces_overwrites) == ([user_overwrite], False)  # a member's stays
    item = next(i for i in plan.items if i.id == rules)
    assert [(c.field, c.old, c.new) for c in item.changes] == [("name", "rules", "read-me"), ("category", None, "Chat")]
    assert plan.ids["category:chat"] == chat


def test_a_channel_moved_between_private_categories_keeps_the_overwrite_both_want_and_a_members_own():
    guild = GuildBuilder()
    private = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))]
    member = {"id": "1191000000000000777", "type": 1, "allow": str(SEND), "deny": "0"}
    staff = guild.category("Staff", overwrites=private)
    guild.category("Vault", overwrites=private)
    notes = guild.channel("notes", parent=staff, overwrites=[*private, member])
    deny_view = [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}]
    body = {
        "name": "Community",
        "categories": [
            {"name": "Staff", "overwrites": deny_view},
            {"name": "Vault", "overwrites": deny_view, "channels": [{"id": notes, "name": "notes"}]},
        ],
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    assert (step.op, step.parent, step.overwrites, step.replaces_overwrites) == (
        "update_channel",
        "category:vault",
        [],
        False,
    )
    assert [o["id"] for o in step.base_overwrites] == [GUILD_ID, member["id"]]
    assert "permission_overwrites" not in step.previous


def test_roles_moved_by_the_reorder_show_their_old_and_new_positions_and_the_others_none():
    guild = GuildBuilder()
    member = guild.role("Member")  # 1
    bystander = guild.role("Bystander")  # 2
    moderator = guild.role("Moderator")  # 3
    keeper = guild.role("Keeper", position=2)  # takes 2: the Bystander goes to 3, the Moderator to 4
    owner = guild.role("Owner", position=7)  # above the bot's role: the bot cannot move it
    roles = ["Member", "Keeper", "Moderator", "Owner"]  # first = highest
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": n} for n in roles]})

    plan = plan_deployment(guild.build(), config)

    [reorder] = [s for s in plan.steps if isinstance(s, ReorderRoles)]
    assert [(p.ref, p.position, p.previous) for p in reorder.positions] == sorted(
        [(member, 4, 1), (keeper, 2, 2), (bystander, 3, 3), (moderator, 1, 4)]
    )
    changes = {i.id: [(c.field, c.old, c.new) for c in i.changes] for i in plan.items if i.kind == "role"}
    assert changes == {moderator: [("position", 4, 1)], keeper: [], member: [("position", 1, 4)], owner: []}


def test_the_servers_name_is_a_change_from_the_old_name_and_settings_with_it_are_one_settings_step():
    guild = GuildBuilder(name="Old")
    guild.channel("lounge", "voice")
    hall = guild.channel("welcome-hall")  # as the platform stores "Welcome Hall"
    guild.settings.afk_channel_id = guild.channels[0].id
    body = {
        "name": "New",
        # a text channel whose name is the AFK channel's: the AFK channel is the voice one, already set
        "channels": [{"name": "lounge"}, {"name": "lounge", "type": "voice"}, {"name": "Welcome Hall"}],
        "settings": {"afk_channel": "lounge", "afk_timeout": 60, "system_channel": "welcome hall"},
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    [settings] = [i for i in plan.items if i.kind == "settings"]
    assert [(c.field, c.old, c.new) for c in settings.changes] == [
        ("name", "Old", "New"),
        ("afk_timeout", 300, 60),
        ("system_channel", None, "welcome hall"),
    ]
    [step] = [s for s in plan.steps if isinstance(s, GuildStep)]
    assert (step.field, step.payload, step.channels) == (
        "settings",
        {"name": "New", "afk_timeout": 60},
        {"system_channel_id": "channel:-:0:welcome-hall"},
    )
    assert plan.ids["channel:-:0:welcome-hall"] == hall


def test_role_deletions_go_first_when_the_role_cap_leaves_no_room_for_the_new_roles():
    guild = GuildBuilder()
    for n in range(247):
        guild.role(f"old-{n}")
    guild.channel("old-chat")
    body = {
        "name": "Community",
        "everyone_permissions": ["VIEW_CHANNEL"],
        "roles": [{"name": f"new-{n}"} for n in range(2)],
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body), prune=True)

    assert runs(plan) == [("update_role", 1), ("delete_role", 247), ("create_role", 2), ("delete_channel", 1)]


def test_channel_deletions_go_first_when_the_channel_cap_leaves_no_room_yet_roles_come_before_them():
    guild = GuildBuilder()
    guild.role("old-role")
    for n in range(500):
        guild.channel(f"old-{n}")
    body = {"name": "Community", "roles": [{"name": "new-role"}], "channels": [{"name": "new-chat"}]}

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body), prune=True)

    assert runs(plan) == [("create_role", 1), ("delete_channel", 500), ("create_channel", 1), ("delete_role", 1)]
