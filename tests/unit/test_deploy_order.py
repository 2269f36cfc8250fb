"""The order of categories and channels a deploy converges to: a newcomer lands by the position its create body
carries when it can, and otherwise one bulk request sets the group, each unnamed channel staying after the named one
it follows."""

from __future__ import annotations

from svcconf.config import ServerConfig
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import ChannelStep, ReorderChannels
from tests.helpers.live_guilds import GuildBuilder


def creates(plan) -> dict[str, int]:
    return {s.name: s.payload["position"] for s in plan.steps if isinstance(s, ChannelStep)}


def bulk(plan) -> list[tuple[str, int, int | None]]:
    [reorder] = [s for s in plan.steps if isinstance(s, ReorderChannels)]
    return [(p.ref, p.position, p.previous) for p in reorder.positions]


def plan_for(guild: GuildBuilder, channels: list[dict]) -> object:
    config = ServerConfig.model_validate({"name": "Community", "channels": channels})
    return plan_deployment(guild.build(), config)


def test_new_channels_between_two_adjacent_ones_take_the_first_ones_position_in_order():
    guild = GuildBuilder()
    guild.channel("a")  # 0
    guild.channel("b")  # 1

    plan = plan_for(guild, [{"name": "a"}, {"name": "n1"}, {"name": "n2"}, {"name": "b"}])

    # a tie at 0 with a: the platform shows the newer id after the older, and n2 is created after n1
    assert creates(plan) == {"n1": 0, "n2": 0}
    assert not any(isinstance(s, ReorderChannels) for s in plan.steps)


def test_a_new_channel_in_a_gap_takes_the_position_after_the_one_before_it():
    guild = GuildBuilder()
    guild.channel("a")  # 0
    guild.channel("gone")  # 1, deleted by someone: a gap
    guild.channel("b")  # 2
    guild.channels.pop(1)

    plan = plan_for(guild, [{"name": "a"}, {"name": "new"}, {"name": "b"}])

    assert creates(plan) == {"new": 1}
    assert not any(isinstance(s, ReorderChannels) for s in plan.steps)


def test_a_channel_moved_in_counts_its_new_neighbour_not_its_old_position_for_the_one_created_before_it():
    guild = GuildBuilder()
    other = guild.category("Other")  # 0
    for n in range(5):
        guild.channel(f"o{n}", parent=other)
    moved = guild.channels[-1].id  # at 4 in Other, older than a and b
    guild.channel("a")  # 1
    guild.channel("b")  # 2

    plan = plan_for(guild, [{"name": "a"}, {"name": "new"}, {"id": moved, "name": "o4"}, {"name": "b"}])

    steps = {s.name: s for s in plan.steps if isinstance(s, ChannelStep)}
    assert steps["new"].payload["position"] == 1  # a tie with a, before b
    assert steps["o4"].payload == {"position": 2, "parent_id": None}  # a tie with b, which is newer
    assert not any(isinstance(s, ReorderChannels) for s in plan.steps)


def test_a_bulk_reorder_keeps_each_unnamed_object_after_the_named_one_it_follows_in_every_group():
    guild = GuildBuilder()
    guild.category("U0")  # 0, unnamed, leads
    a = guild.category("A")  # 1
    guild.category("U1")  # 2, unnamed, follows A
    guild.category("B")  # 3
    guild.channel("t-u0", parent=a)  # 0, unnamed, leads the text group
    guild.channel("t1", parent=a)  # 1
    guild.channel("t-u1", parent=a)  # 2, unnamed, follows t1
    guild.channel("t2", parent=a)  # 3
    guild.channel("v1", "voice", parent=a)  # 4
    guild.channel("v-u1", "voice", parent=a)  # 5, unnamed, follows v1
    guild.channel("v2", "voice", parent=a)  # 6
    ids = {c.name: c.id for c in guild.channels}
    body = {
        "name": "Community",
        "categories": [
            {"name": "B"},
            {
                "name": "A",
                "channels": [
                    {"name": "t2"},
                    {"name": "new"},
                    {"name": "t1"},
                    {"name": "v2", "type": "voice"},
                    {"name": "v1", "type": "voice"},
                ],
            },
        ],
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body))

    text, voice = "channel:category:a:0:", "channel:category:a:2:"
    assert bulk(plan) == [
        (ids["U0"], 0, 0),
        ("category:b", 1, 3),
        ("category:a", 2, 1),
        (ids["U1"], 3, 2),
        (ids["t-u0"], 0, 0),
        (f"{text}t2", 1, 3),
        (f"{text}new", 2, None),
        (f"{text}t1", 3, 1),
        (ids["t-u1"], 4, 2),
        (f"{voice}v2", 0, 6),
        (f"{voice}v1", 1, 4),
        (ids["v-u1"], 2, 5),
    ]
    assert creates(plan) == {"A / new": 2}  # the position the bulk request gives it
    moved = {i.name: [(c.field, c.old, c.new) for c in i.changes] for i in plan.items if i.changes}
    assert moved == {
        "B": [("position", 3, 1)],
        "A": [("position", 1, 2)],
        "A / t2": [("position", 3, 1)],
        "A / t1": [("position", 1, 3)],
        "A / v2": [("position", 2, 0)],
        "A / v1": [("position", 0, 1)],
    }


def test_a_channel_of_a_category_the_configuration_does_not_name_moves_out_to_where_it_is_listed():
    guild = GuildBuilder()
    guild.channel("a")  # 0
    attic = guild.category("Attic")  # 1, not in the configuration
    old = guild.channel("old", parent=attic)

    plan = plan_for(guild, [{"name": "a"}, {"id": old, "name": "old"}])

    [step] = [s for s in plan.steps if isinstance(s, ChannelStep)]
    assert (step.channel_id, step.payload) == (old, {"position": 1, "parent_id": None})
