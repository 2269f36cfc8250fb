"""What each step of a real plan waits for, and its bucket (`step_graph`): plans made by the planner
(`plan_deployment`) and the rollback's planner (`plan_rollback`) from small live guilds. Each expectation is read off
the step itself (the roles its overwrites name, its category, the channels a setting names), so a wait the graph
leaves out, or one it adds, fails here."""

from __future__ import annotations

from datetime import UTC, datetime

from svcconf.chat import PermissionOverwrite
from svcconf.chat.community import GuildOnboarding
from svcconf.config import MAX_ROLES, ServerConfig, to_bitfield
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.rollback import RollbackJournal, plan_rollback
from svcconf.deploy_engine.snapshot import GuildSnapshot
from svcconf.deploy_engine.step_graph import Lane, dependencies, lane_of
from svcconf.deploy_engine.steps import (
    ChannelStep,
    CommunityStep,
    DeleteStep,
    GuildStep,
    ReorderChannels,
    ReorderRoles,
    RoleStep,
    Step,
)
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, community_config, overwrite, v2_config

ROLE_CREATES = Lane("POST /guilds/{guild_id}/roles", GUILD_ID)
CHANNEL_CREATES = Lane("POST /guilds/{guild_id}/channels", GUILD_ID)


def writer(steps: list[Step]) -> dict[str, int]:
    """Each object's key -> the index of the plan's last step that writes it."""
    return {step.key: index for index, step in enumerate(steps)}


def before(waits: list[set[int]], index: int) -> set[int]:
    """Every step that has ended whenever step `index` starts: what it waits for, and what those wait for."""
    seen: set[int] = set()
    todo = list(waits[index])
    while todo:
        earlier = todo.pop()
        if earlier not in seen:
            seen.add(earlier)
            todo.extend(waits[earlier])
    return seen


def side_by_side(waits: list[set[int]], a: int, b: int) -> bool:
    return a not in before(waits, b) and b not in before(waits, a)


def of(steps: list[Step], kind: type) -> list[int]:
    return [index for index, step in enumerate(steps) if isinstance(step, kind)]


# ---------------------------------------------------------------- a deploy's creations


def test_roles_wait_for_nothing_and_each_channel_for_the_roles_its_overwrites_name_and_its_category():
    plan = plan_deployment(GuildBuilder().build(), community_config())
    steps, waits = plan.steps, dependencies(plan.steps)
    made = writer(steps)
    roles, channels = of(steps, RoleStep), of(steps, ChannelStep)

    assert (len(roles), len(channels)) == (3, 7)
    assert [waits[index] for index in roles] == [set()] * len(roles)
    for index in channels:
        step = steps[index]
        assert isinstance(step, ChannelStep)
        named = {made[spec.target] for spec in step.overwrites if spec.target in made}  # @everyone: no step
        category = {made[step.parent]} if step.parent else set()
        assert waits[index] == named | category, step.name
    # The fixture holds each case: a channel waiting for its category and two roles, one for nothing at all
    talk = made["channel:category:staff:0:staff-talk"]
    assert waits[talk] == {made["role:moderator"], made["role:member"], made["category:staff"]}
    assert waits[made["channel:-:0:rules"]] == set()
    # The busiest buckets: every creation of a kind in its guild's one lane, so a category runs beside the roles
    assert {lane_of(steps[index], GUILD_ID) for index in roles} == {ROLE_CREATES}
    assert {lane_of(steps[index], GUILD_ID) for index in channels} == {CHANNEL_CREATES}
    assert side_by_side(waits, made["role:admin"], made["category:community"])


def test_a_channel_updated_in_place_has_a_lane_of_its_own_and_waits_for_the_category_it_moves_into():
    guild = GuildBuilder()
    lobby = guild.channel("lobby", topic="Old")
    hall = guild.channel("hall", topic="Old")
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "roles": [{"name": "Crew"}],
            "categories": [{"name": "Deck", "channels": [{"id": lobby, "name": "lobby", "topic": "New"}]}],  # moved
            "channels": [{"name": "hall", "topic": "New", "overwrites": [{"role": "Crew", "allow": ["VIEW_CHANNEL"]}]}],
        }
    )

    plan = plan_deployment(guild.build(), config)

    steps, waits, made = plan.steps, dependencies(plan.steps), writer(plan.steps)
    updates = {step.channel_id: index for index, step in enumerate(steps) if step.op == "update_channel"}
    assert set(updates) == {lobby, hall}
    assert lane_of(steps[updates[lobby]], GUILD_ID) == Lane("PATCH /channels/{channel_id}", lobby)
    assert lane_of(steps[updates[hall]], GUILD_ID) == Lane("PATCH /channels/{channel_id}", hall)
    assert waits[updates[lobby]] == {made["category:deck"]}
    assert waits[updates[hall]] == {made["role:crew"]}
    assert side_by_side(waits, updates[lobby], updates[hall])


def test_the_settings_wait_for_the_channels_they_name_and_nothing_else():
    plan = plan_deployment(GuildBuilder(features=("COMMUNITY", "NEWS", "ROLE_ICONS")).build(), v2_config())
    steps, waits, made = plan.steps, dependencies(plan.steps), writer(plan.steps)
    (index,) = of(steps, GuildStep)
    settings = steps[index]
    assert isinstance(settings, GuildStep)

    assert set(settings.channels) == {"afk_channel_id", "system_channel_id"}
    assert waits[index] == {made[key] for key in settings.channels.values()}
    assert lane_of(settings, GUILD_ID) == Lane("PATCH /guilds/{guild_id}", GUILD_ID)
    # Not the forum beside them, nor the role: those may still be in flight when the settings go
    assert side_by_side(waits, index, made["channel:category:hall:15:ideas"])
    assert side_by_side(waits, index, made["role:helper"])


# ---------------------------------------------------------------- the orders and v4


def v4_plan():
    rooms = ["general", "lfg", "clips"]
    guild = GuildBuilder(features=("COMMUNITY",))
    guild.role("Mods", "MANAGE_MESSAGES")
    guild.role("EU")
    for room in rooms:
        guild.channel(room)
    live = guild.build().model_copy(
        update={"automod_rules": [], "onboarding": GuildOnboarding(guild_id=GUILD_ID), "welcome_screen": None}
    )
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "roles": [{"name": "Fresh"}, {"name": "Mods", "permissions": ["MANAGE_MESSAGES"]}, {"name": "EU"}],
            "channels": [{"name": room} for room in reversed([*rooms, "news-desk"])],
            "automod": [
                {"name": "Invites", "trigger": "keyword", "keywords": ["discord.gg*"], "actions": [{"type": "block"}]}
            ],
            "onboarding": {
                "enabled": True,
                "default_channels": [*rooms, "news-desk"],
                "prompts": [{"title": "Region?", "options": [{"title": "Europe", "roles": ["Fresh"]}]}],
            },
            "welcome_screen": {"description": "Hi", "channels": [{"channel": "news-desk", "description": "Hello"}]},
        }
    )
    return plan_deployment(live, config)


def orders_plan():
    """Without v4 parts nor a channel order: the role order right after the creations and updates."""
    guild = GuildBuilder()
    guild.role("Mods", "MANAGE_MESSAGES")
    guild.role("EU")
    guild.channel("general")
    config = ServerConfig.model_validate(
        {
            "name": "Community",
            "roles": [{"name": "Fresh"}, {"name": "Mods", "permissions": ["MANAGE_MESSAGES"]}, {"name": "EU"}],
            "channels": [{"name": "general", "topic": "Hello"}, {"name": "news-desk"}],
        }
    )
    return plan_deployment(guild.build(), config)


def test_the_role_order_waits_for_everything_before_it_without_a_barrier_before_it_too():
    steps = orders_plan().steps
    waits = dependencies(steps)
    (index,) = of(steps, ReorderRoles)

    assert of(steps, ReorderChannels) == []
    assert {steps[i].op for i in range(index)} == {"create_role", "create_channel", "update_channel"}
    assert before(waits, index) == set(range(index))


def test_the_orders_and_the_v4_steps_wait_for_everything_before_them():
    steps = v4_plan().steps
    waits = dependencies(steps)
    last = [*of(steps, ReorderRoles), *of(steps, ReorderChannels), *of(steps, CommunityStep)]

    assert sorted({steps[index].op for index in last}) == [
        "create_automod_rule",
        "modify_welcome_screen",
        "put_onboarding",
        "reorder_channels",
        "reorder_roles",
    ]
    for index in last:
        assert before(waits, index) == set(range(index)), steps[index].op
    assert of(steps, ReorderRoles) == [len(steps) - 1], "the role order goes last"
    assert lane_of(steps[of(steps, ReorderRoles)[0]], GUILD_ID) == Lane("PATCH /guilds/{guild_id}/roles", GUILD_ID)
    assert lane_of(steps[of(steps, ReorderChannels)[0]], GUILD_ID) == Lane(
        "PATCH /guilds/{guild_id}/channels", GUILD_ID
    )


# ---------------------------------------------------------------- deletions


def test_a_pruning_plans_room_making_role_deletions_go_side_by_side_before_its_creations():
    guild = GuildBuilder()
    for n in range(MAX_ROLES - 2):  # with @everyone and the bot's role: the cap
        guild.role(f"old-{n}")
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "New"}], "channels": [{"name": "c"}]})

    plan = plan_deployment(guild.build(), config, prune=True)

    steps, waits, made = plan.steps, dependencies(plan.steps), writer(plan.steps)
    deletions = [index for index in of(steps, DeleteStep) if steps[index].op == "delete_role"]
    assert len(deletions) == MAX_ROLES - 2
    assert deletions[0] < made["role:new"], "they make room: before the creation in the plan too"
    assert all(waits[index] == set() for index in deletions), "side by side: none waits for another"
    assert before(waits, made["role:new"]) >= set(deletions)
    assert {lane_of(steps[index], GUILD_ID) for index in deletions} == {
        Lane("DELETE /guilds/{guild_id}/roles/{role_id}", GUILD_ID)
    }


def test_a_categorys_deletion_waits_for_its_channels_which_go_side_by_side_and_the_roles_go_after_them():
    guild = GuildBuilder()
    low, high = guild.role("Low"), guild.role("High")
    info = guild.category("Info")
    news = guild.channel("news", parent=info)
    chat = guild.channel("chat")
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "Crew"}], "channels": []})

    plan = plan_deployment(guild.build(), config, prune=True)

    steps, waits = plan.steps, dependencies(plan.steps)
    deleted = {step.object_id: index for index, step in enumerate(steps) if isinstance(step, DeleteStep)}
    assert set(deleted) == {low, high, info, news, chat}
    assert before(waits, deleted[info]) >= {deleted[news], deleted[chat]}
    assert side_by_side(waits, deleted[news], deleted[chat])
    assert lane_of(steps[deleted[news]], GUILD_ID) != lane_of(steps[deleted[chat]], GUILD_ID)
    for role in (low, high):
        assert before(waits, deleted[role]) >= {deleted[info], deleted[news], deleted[chat]}
    assert side_by_side(waits, deleted[low], deleted[high])
    # The creation before them: every deletion waits for it (a deletion waits for everything before it)
    assert all(step.op != "create_role" or index < min(deleted.values()) for index, step in enumerate(steps))
    assert all(before(waits, index) >= set(of(steps, RoleStep)) for index in deleted.values())


def rollback_plan():
    """A deployment that made a role, a category with two channels (one naming the role), and gave a live channel an
    overwrite for that role; the rollback of it."""
    guild = GuildBuilder()
    member = guild.role("Member", "SEND_MESSAGES")
    lobby = guild.channel("lobby", topic="Welcome")
    snapshot = GuildSnapshot.of(guild.build(), datetime(2026, 11, 22, 12, 0, tzinfo=UTC))
    crew = guild.role("Crew", "CONNECT", position=1)
    deck = guild.category("Deck")
    bridge = guild.channel("bridge", parent=deck, overwrites=[overwrite(crew, allow=("VIEW_CHANNEL",))])
    galley = guild.channel("galley", parent=deck)
    after = guild.build()
    for role in after.roles:
        if role.id == member:
            role.permissions = to_bitfield(["SEND_MESSAGES", "ATTACH_FILES"])
    for channel in after.channels:
        if channel.id == lobby:
            channel.permission_overwrites = [PermissionOverwrite(**overwrite(crew, deny=("SEND_MESSAGES",)))]
    created = {
        "role:crew": crew,
        "category:deck": deck,
        "channel:category:deck:0:bridge": bridge,
        "channel:category:deck:0:galley": galley,
    }
    journal = RollbackJournal(created=created, updated={"role:member": member, "channel:-:0:lobby": lobby})
    ids = {"member": member, "lobby": lobby, "crew": crew, "deck": deck, "bridge": bridge, "galley": galley}
    return plan_rollback(after, snapshot, journal).plan, ids


def test_a_rollback_restores_overwrites_before_their_role_goes_and_empties_a_category_before_deleting_it():
    plan, ids = rollback_plan()
    steps, waits = plan.steps, dependencies(plan.steps)
    at = {
        getattr(step, "object_id", None) or getattr(step, "channel_id", None) or step.key: i
        for i, step in enumerate(steps)
    }
    restored_lobby = next(i for i, s in enumerate(steps) if isinstance(s, ChannelStep) and s.channel_id == ids["lobby"])
    restored_member = next(i for i, s in enumerate(steps) if isinstance(s, RoleStep) and s.role_id == ids["member"])

    assert {steps[i].object_id for i in of(steps, DeleteStep)} == {ids[k] for k in ("crew", "deck", "bridge", "galley")}
    assert side_by_side(waits, at[ids["bridge"]], at[ids["galley"]])
    assert before(waits, at[ids["deck"]]) >= {at[ids["bridge"]], at[ids["galley"]]}
    assert restored_lobby in before(waits, at[ids["crew"]]), "lobby's overwrite for Crew is restored before Crew goes"
    assert at[ids["deck"]] in before(waits, at[ids["crew"]])
    assert side_by_side(waits, restored_lobby, restored_member)
    assert lane_of(steps[restored_lobby], GUILD_ID) == Lane("PATCH /channels/{channel_id}", ids["lobby"])
    assert lane_of(steps[at[ids["bridge"]]], GUILD_ID) == Lane("DELETE /channels/{channel_id}", ids["bridge"])
    assert lane_of(steps[restored_member], GUILD_ID) == Lane("PATCH /guilds/{guild_id}/roles/{role_id}", GUILD_ID)


def test_no_step_waits_for_a_later_one_and_the_plans_own_order_keeps_every_wait():
    plans = [
        plan_deployment(GuildBuilder().build(), community_config()).steps,
        v4_plan().steps,
        orders_plan().steps,
        rollback_plan()[0].steps,
    ]
    for steps in plans:
        waits = dependencies(steps)
        assert len(waits) == len(steps)
        assert all(max(wait, default=-1) < index for index, wait in enumerate(waits))
