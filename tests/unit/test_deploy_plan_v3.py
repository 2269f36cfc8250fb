"""The plan of configuration version 3: ids, renames and moves in place, order per group, the server's name,
deleting with `prune`, and the plan's id."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from svcconf.config import ServerConfig
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from svcconf.deploy_engine.prune import confirmed_fingerprints
from svcconf.deploy_engine.steps import ChannelStep, DeleteStep, GuildStep, ReorderChannels, ReorderRoles, RoleStep
from svcconf.errors import field_path
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, overwrite


def server() -> tuple[GuildBuilder, dict[str, str]]:
    """A guild with two roles, two categories (text and voice channels in one) and a channel outside them."""
    guild = GuildBuilder()
    ids = {"Mods": guild.role("Mods", "KICK_MEMBERS"), "Member": guild.role("Member", "SEND_MESSAGES", position=1)}
    ids["Info"] = guild.category("Info")
    ids["Chat"] = guild.category("Chat")
    ids["general"] = guild.channel("general", parent=ids["Chat"])
    ids["memes"] = guild.channel("memes", parent=ids["Chat"])
    ids["Lounge"] = guild.channel("Lounge", "voice", parent=ids["Chat"])
    ids["Stage"] = guild.channel("Stage", "voice", parent=ids["Chat"])
    ids["announcements"] = guild.channel("announcements", parent=ids["Info"])
    ids["rules"] = guild.channel("rules")
    return guild, ids


def exported(guild: GuildBuilder) -> dict[str, Any]:
    live = guild.build()
    return export_config(live, live.settings).config.model_dump(mode="json", exclude_none=True)


def category(config: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in config["categories"] if c["name"] == name)


def channel_in(config: dict[str, Any], category_name: str, name: str) -> dict[str, Any]:
    return next(c for c in category(config, category_name)["channels"] if c["name"] == name)


def item(plan, name: str):
    return next(i for i in plan.items if i.name == name)


def test_an_export_plans_nothing_and_carries_every_objects_id():
    guild, ids = server()
    config = exported(guild)

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config), prune=True)

    assert plan.steps == []
    assert [role["id"] for role in config["roles"]] == [ids["Mods"], ids["Member"]]
    assert channel_in(config, "Chat", "memes")["id"] == ids["memes"]
    assert {i.action for i in plan.items} == {"keep"}


def test_two_objects_with_one_id_are_refused_naming_the_second():
    guild, ids = server()
    config = exported(guild)
    config["channels"].append({"id": ids["general"], "name": "general-copy"})

    with pytest.raises(ValidationError) as refused:
        ServerConfig.model_validate(config)

    [error] = refused.value.errors()
    assert field_path(error["loc"]) == "channels[1].id"
    assert "categories[1].channels[0]" in error["msg"]


def test_a_renamed_role_and_channel_are_updates_of_the_same_objects():
    guild, ids = server()
    config = exported(guild)
    config["roles"][0]["name"] = "Moderators"
    channel_in(config, "Chat", "general")["name"] = "lobby"

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    role = item(plan, "Moderators")
    lobby = item(plan, "Chat / lobby")
    assert (role.action, role.id, [(c.field, c.old, c.new) for c in role.changes]) == (
        "update",
        ids["Mods"],
        [("name", "Mods", "Moderators")],
    )
    assert (lobby.action, lobby.id, [(c.field, c.old, c.new) for c in lobby.changes]) == (
        "update",
        ids["general"],
        [("name", "general", "lobby")],
    )
    role_step = next(s for s in plan.steps if isinstance(s, RoleStep))
    assert (role_step.role_id, role_step.payload, role_step.previous) == (
        ids["Mods"],
        {"name": "Moderators"},
        {"name": "Mods"},
    )
    assert not [i for i in plan.items if i.action == "create"]


def test_a_moved_channel_is_one_modify_with_its_new_parent_and_a_position_after_its_new_neighbour():
    guild, ids = server()
    config = exported(guild)
    moved = category(config, "Info")["channels"].pop()
    category(config, "Chat")["channels"].insert(1, moved)  # between general and memes

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    assert (step.op, step.channel_id, step.parent) == ("update_channel", ids["announcements"], "category:chat")
    assert step.previous == {"parent_id": ids["Info"], "position": 0}
    announcements = item(plan, "Chat / announcements")
    assert [(c.field, c.old, c.new) for c in announcements.changes] == [("category", "Info", "Chat")]
    # general stands at 0 and memes at 1: no position fits between them, so one bulk request sets the group
    [bulk] = [s for s in plan.steps if isinstance(s, ReorderChannels)]
    assert [(p.ref, p.position) for p in bulk.positions] == [
        ("channel:category:chat:0:general", 0),
        ("channel:category:chat:0:announcements", 1),
        ("channel:category:chat:0:memes", 2),
    ]
    assert [(c.field, c.old, c.new) for c in item(plan, "Chat / memes").changes] == [("position", 1, 2)]


def test_a_move_out_of_any_category_sends_a_null_parent():
    guild, ids = server()
    config = exported(guild)
    config["channels"].append(category(config, "Chat")["channels"].pop(0))

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    # After rules, at 2 (outside any category, channels share their positions with the categories)
    assert (step.channel_id, step.parent, step.payload) == (ids["general"], None, {"position": 3, "parent_id": None})


def test_reversed_orders_are_one_bulk_request_per_kind_compared_per_group():
    guild, ids = server()
    config = exported(guild)
    config["roles"].reverse()
    config["categories"].reverse()
    chat = category(config, "Chat")["channels"]
    chat[:] = [chat[1], chat[0], chat[3], chat[2]]  # memes, general, Stage, Lounge

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    assert [s.op for s in plan.steps] == ["reorder_channels", "reorder_roles"]
    [bulk] = [s for s in plan.steps if isinstance(s, ReorderChannels)]
    positions = {p.ref: p.position for p in bulk.positions}
    assert positions["category:chat"] < positions["category:info"]
    assert positions["channel:category:chat:0:memes"] < positions["channel:category:chat:0:general"]
    assert positions["channel:category:chat:2:stage"] < positions["channel:category:chat:2:lounge"]
    reorder = next(s for s in plan.steps if isinstance(s, ReorderRoles))
    final = {p.ref: p.position for p in reorder.positions}
    assert final[ids["Member"]] > final[ids["Mods"]]
    assert [c.field for c in item(plan, "Member").changes] == ["position"]


def test_a_voice_channel_listed_among_text_ones_is_ordered_among_the_voice_ones_only():
    guild, _ = server()
    config = exported(guild)
    chat = category(config, "Chat")["channels"]
    chat[:] = [chat[0], chat[2], chat[1], chat[3]]  # general, Lounge, memes, Stage: the same order per group

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    assert plan.steps == []


def test_new_channels_land_in_place_through_their_create_position_without_a_bulk_request():
    guild, _ = server()
    config = exported(guild)
    category(config, "Chat")["channels"].append({"name": "news"})
    category(config, "Chat")["channels"].append({"name": "Radio", "type": "voice"})

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    creates = {s.name: s.payload["position"] for s in plan.steps if isinstance(s, ChannelStep)}
    assert creates == {"Chat / news": 2, "Chat / Radio": 4}  # after memes (1), after Stage (3)
    assert not any(isinstance(s, ReorderChannels) for s in plan.steps)


def test_the_configurations_name_is_the_servers_name():
    guild, _ = server()
    config = exported(guild)
    config["name"] = "New Name"

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    [step] = plan.steps
    assert isinstance(step, GuildStep)
    assert (step.field, step.payload, step.previous) == ("name", {"name": "New Name"}, {"name": "Community"})


def test_an_id_the_guild_does_not_have_is_ignored_and_the_name_matches():
    guild, ids = server()
    config = exported(guild)
    config["roles"][0]["id"] = "999999999999999999"

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    assert plan.steps == []
    assert item(plan, "Mods").id == ids["Mods"]


def test_without_prune_what_the_configuration_leaves_out_stays():
    guild, _ = server()
    config = exported(guild)
    category(config, "Chat")["channels"].pop(1)
    config["roles"].pop()

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    assert plan.steps == []
    assert not plan.deletes()


def test_prune_deletes_what_the_configuration_leaves_out_channels_first_and_says_what_is_lost():
    guild, ids = server()
    config = exported(guild)
    category(config, "Chat")["channels"].pop(1)  # memes
    config["roles"].pop()  # Member

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config), prune=True)

    assert [(s.op, s.object_id) for s in plan.steps] == [
        ("delete_channel", ids["memes"]),
        ("delete_role", ids["Member"]),
    ]
    assert [(i.action, i.id) for i in plan.deletes()] == [("delete", ids["memes"]), ("delete", ids["Member"])]
    memes = item(plan, "Chat / memes")
    assert (memes.action, memes.id, memes.field) == ("delete", ids["memes"], "")
    assert "messages" in (memes.note or "")


def test_prune_never_deletes_everyone_managed_roles_roles_above_the_bot_or_community_channels():
    guild, ids = server()
    above = guild.role("Owner", position=4)  # above the bot's role (at 3)
    live = guild.build()
    live = live.model_copy(update={"community_channel_ids": [ids["rules"]]})
    config = ServerConfig.model_validate({"name": "Community"})

    plan = plan_deployment(live, config, prune=True)

    deleted = {s.object_id for s in plan.steps if isinstance(s, DeleteStep)}
    assert GUILD_ID not in deleted
    assert {above, ids["rules"]}.isdisjoint(deleted)
    assert deleted == {ids[n] for n in ("Mods", "Member", "Info", "Chat", "general", "memes", "Lounge", "Stage")} | {
        ids["announcements"]
    }
    assert {(w.field, w.rule) for w in plan.warnings} == {("roles", "kept"), ("channels", "kept")}


def test_a_confirmed_plan_deletes_only_what_it_listed():
    guild, ids = server()
    config = ServerConfig.model_validate({**exported(guild), "roles": []})

    plan = plan_deployment(guild.build(), config, prune=True, confirmed_deletes=[ids["Mods"]])

    assert [(s.op, s.object_id) for s in plan.steps if isinstance(s, DeleteStep)] == [("delete_role", ids["Mods"])]


def test_the_plan_id_is_stable_for_the_same_server_and_changes_with_what_the_plan_writes():
    guild, _ = server()
    config = exported(guild)
    config["roles"].pop()
    parsed = ServerConfig.model_validate(config)

    first = plan_deployment(guild.build(), parsed, prune=True)
    again = plan_deployment(guild.build(), parsed, prune=True)
    guild.channel("new-one")  # someone adds a channel after the dry run
    later = plan_deployment(guild.build(), parsed, prune=True)
    other_guild = first.model_copy(update={"guild_id": "1191000000000009999"})

    assert first.plan_id == again.plan_id
    assert first.plan_id.startswith("plan_")
    assert len(first.plan_id) == len("plan_") + 32
    assert later.plan_id != first.plan_id
    assert other_guild.plan_id != first.plan_id
    # v4: the caller's, and every step's payload: plans that show the same items but would write differently differ
    assert first.model_copy(update={"caller_id": "1191000000000000101"}).plan_id != first.plan_id
    quiet = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "Crew", "permissions": []}]})
    loud = ServerConfig.model_validate(
        {"name": "Community", "roles": [{"name": "Crew", "permissions": ["KICK_MEMBERS"]}]}
    )
    live = GuildBuilder().build()
    quiet_plan, loud_plan = plan_deployment(live, quiet), plan_deployment(live, loud)
    assert [i.model_dump() for i in quiet_plan.items] == [i.model_dump() for i in loud_plan.items]
    assert quiet_plan.plan_id != loud_plan.plan_id
    assert plan_deployment(live, quiet).plan_id == quiet_plan.plan_id


def test_deletes_go_first_when_the_channel_cap_leaves_no_room_for_the_creations():
    guild = GuildBuilder()
    for n in range(498):
        guild.channel(f"old-{n}")
    config = ServerConfig.model_validate({"name": "Community", "channels": [{"name": f"new-{n}"} for n in range(5)]})

    plan = plan_deployment(guild.build(), config, prune=True)

    ops = [s.op for s in plan.steps]
    assert ops.index("create_channel") > max(i for i, op in enumerate(ops) if op == "delete_channel")


def test_a_channel_moved_out_of_a_private_category_leaves_its_overwrites_behind():
    guild = GuildBuilder()
    private = [{"id": GUILD_ID, "type": 0, "allow": "0", "deny": "1024"}]
    staff = guild.category("Staff", overwrites=private)
    guild.category("Public")
    guild.channel("notes", parent=staff, overwrites=private)
    config = exported(guild)
    category(config, "Public")["channels"].append(category(config, "Staff")["channels"].pop())

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    assert (step.parent, step.base_overwrites, step.replaces_overwrites) == ("category:public", [], True)
    # an access change, shown as one: the overwrite it leaves behind is an item of its own, and no object deleted
    left = [i for i in plan.items if i.kind == "overwrite" and i.action != "keep"]
    assert [(i.name, i.action, i.field, i.owner, i.note) for i in left] == [
        (
            "Public / notes → @everyone",
            "delete",
            "categories[1].channels[0].overwrites",
            step.key,
            "the move leaves behind what the channel had from its old category",
        )
    ]
    assert [(c.field, c.old, c.new) for c in left[0].changes] == [
        ("permissions", {"allow": [], "deny": ["VIEW_CHANNEL"]}, None)
    ]
    assert step.rewritten_keys == [left[0].key] == [f"overwrite:{step.key}:{GUILD_ID}"]
    assert plan.deletes() == []


def test_a_moved_channels_left_behind_overwrites_name_their_role_or_member():
    guild = GuildBuilder()
    mods = guild.role("Mods")
    member = "1191000000000007777"
    private = [
        {"id": mods, "type": 0, "allow": "1024", "deny": "0"},
        {"id": member, "type": 1, "allow": "1024", "deny": "0"},
        {"id": "1191000000000006666", "type": 0, "allow": "1024", "deny": "0"},  # a role gone since
    ]
    staff = guild.category("Staff", overwrites=private)
    guild.channel("notes", parent=staff, overwrites=private)
    config = exported(guild)
    config["channels"].append(category(config, "Staff")["channels"].pop())

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    names = [i.name for i in plan.items if i.kind == "overwrite" and i.action == "delete"]
    assert names == ["notes → Mods", f"notes → member {member}", "notes → 1191000000000006666"]


def test_deletes_go_first_when_a_category_would_pass_fifty_channels_before_them():
    guild = GuildBuilder()
    hall = guild.category("Hall")
    for n in range(49):
        guild.channel(f"ch-{n}", parent=hall)
    named = [{"name": f"ch-{n}"} for n in range(46)]  # three of the hall's channels go
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "categories": [{"name": "Hall", "channels": [*named, *({"name": f"new-{n}"} for n in range(3))]}],
        }
    )

    plan = plan_deployment(guild.build(), config, prune=True)
    kept = plan_deployment(guild.build(), config)

    ops = [s.op for s in plan.steps]
    assert ops[:3] == ["delete_channel"] * 3
    assert ops[3:6] == ["create_channel"] * 3
    assert [p.field for p in preflight_problems(guild.build(), kept)] == ["categories[0].channels"]
    assert preflight_problems(guild.build(), plan) == []


def test_a_confirmed_deletion_of_an_object_changed_since_is_kept_and_named_and_an_unchanged_one_is_deleted():
    # Given a plan confirmed to delete Mods and Member, as they were then
    guild, ids = server()
    config = ServerConfig.model_validate({**exported(guild), "roles": []})
    confirmed = [ids["Mods"], ids["Member"]]
    prints = confirmed_fingerprints(guild.build(), confirmed)
    # When someone renames Mods before the deploy resumes
    renamed = guild.build()
    renamed = renamed.model_copy(
        update={
            "roles": [r.model_copy(update={"name": "Helpers"}) if r.id == ids["Mods"] else r for r in renamed.roles]
        }
    )

    plan = plan_deployment(renamed, config, prune=True, confirmed_deletes=confirmed, confirmed_fingerprints=prints)

    # Then Member is deleted, and Mods is kept, named in the plan's `kept` with what changed
    assert [s.object_id for s in plan.steps if isinstance(s, DeleteStep)] == [ids["Member"]]
    assert [(item.id, item.action, item.note) for item in plan.kept] == [
        (ids["Mods"], "keep", "changed since its deletion was confirmed (name): kept")
    ]


def test_a_move_out_of_a_private_category_names_each_overwrite_it_leaves_behind_and_none_it_keeps():
    # Given `plans` in the private Vault, synced with it: Mods may view, Member may view, @everyone may not
    guild = GuildBuilder()
    mods, member = guild.role("Mods", "KICK_MEMBERS"), guild.role("Member", position=1)
    rules = [overwrite(mods, allow=("VIEW_CHANNEL",)), overwrite(member, allow=("VIEW_CHANNEL",))]
    vault = guild.category("Vault", overwrites=[*rules, overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))])
    plans = guild.channel("plans", parent=vault, overwrites=[*rules, overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))])
    config = exported(guild)
    # When the configuration moves it to the top level keeping only Mods' rule (the first of its overwrites)
    moved = next(channel for channel in category(config, "Vault")["channels"] if channel["id"] == plans)
    category(config, "Vault")["channels"].remove(moved)
    moved["overwrites"] = [{"role": "Mods", "allow": ["VIEW_CHANNEL"]}]
    config.setdefault("channels", []).append(moved)

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(config))

    # Then the two rules it leaves behind are items of their own, and the one it keeps is not
    left = [(item.name, item.action) for item in plan.items if item.kind == "overwrite" and item.action == "delete"]
    assert left == [("plans → Member", "delete"), ("plans → @everyone", "delete")]
