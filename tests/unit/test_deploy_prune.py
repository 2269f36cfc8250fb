"""Deleting what a configuration leaves out (`prune`): what goes and in which order, what is kept and why, what a
person is told before confirming, and when deletions go first because the platform's caps leave no room."""

from __future__ import annotations

from typing import Any

import pytest

from svcconf.config import MAX_CHANNELS, MAX_CHANNELS_PER_CATEGORY, MAX_ROLES, ServerConfig
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.prune import MESSAGES_LOST, confirmed_fingerprints, deletion_warnings
from svcconf.deploy_engine.steps import PlanItem
from tests.helpers.live_guilds import BOT_ROLE_ID, GUILD_ID, GuildBuilder, overwrite


def deletes_first(plan, kind: str) -> bool:
    """Whether the plan's first delete of `kind` ("role" or "channel") comes before its first create of it."""
    ops = [step.op for step in plan.steps]
    return ops.index(f"delete_{kind}") < ops.index(f"create_{kind}")


def test_prune_deletes_channels_then_categories_then_roles_from_the_highest_and_keeps_what_it_must_with_a_reason():
    guild = GuildBuilder()
    low = guild.role("Low")
    high = guild.role("High")
    owner = guild.role("Owner", position=9)  # above the bot's role
    info = guild.category("Info")  # 0, moved to the bottom below
    news = guild.channel("news", parent=info)
    rules = guild.channel("rules")  # 1
    chat = guild.channel("chat")  # 2
    guild.channel("kept")  # 3: named by the configuration
    guild.channel("media")  # 4: made a type a configuration cannot name, below
    guild.channels[-1] = guild.channels[-1].model_copy(update={"type": 16})
    zed = guild.category("Zed")  # 5
    guild.channels[0] = guild.channels[0].model_copy(update={"position": 6})  # Info: listed first, shown last
    live = guild.build().model_copy(update={"community_channel_ids": [rules]})
    config = ServerConfig.model_validate({"name": "Community", "channels": [{"name": "kept"}]})

    plan = plan_deployment(live, config, prune=True)

    assert [(s.op, s.key, s.name, s.object_id) for s in plan.steps] == [
        ("delete_channel", f"delete:{news}", "Info / news", news),
        ("delete_channel", f"delete:{chat}", "chat", chat),
        ("delete_channel", f"delete:{zed}", "Zed", zed),
        ("delete_channel", f"delete:{info}", "Info", info),
        ("delete_role", f"delete:{high}", "High", high),
        ("delete_role", f"delete:{low}", "Low", low),
    ]
    assert [(i.kind, i.name, i.action, i.id, i.field, i.note) for i in plan.deletes()] == [
        ("channel", "Info / news", "delete", news, "", MESSAGES_LOST),
        ("channel", "chat", "delete", chat, "", MESSAGES_LOST),
        ("category", "Zed", "delete", zed, "", None),
        ("category", "Info", "delete", info, "", None),
        ("role", "High", "delete", high, "", None),
        ("role", "Low", "delete", low, "", None),
    ]
    assert [(w.field, w.rule, w.message) for w in plan.warnings] == [
        (
            "channels",
            "kept",
            "channel 'rules' is kept: the platform keeps a Community server's rules and updates channels",
        ),
        ("roles", "kept", "role 'Owner' is kept: it is at or above the bot's highest role, which cannot delete it"),
    ]
    assert {GUILD_ID, BOT_ROLE_ID, owner, rules}.isdisjoint(s.object_id for s in plan.steps)


def test_a_confirmed_plan_deletes_only_what_the_person_saw_listed():
    guild = GuildBuilder()
    seen = guild.role("Seen")
    guild.role("Made since")
    guild.channel("made-since-too")
    config = ServerConfig.model_validate({"name": "Community"})

    plan = plan_deployment(guild.build(), config, prune=True, confirmed_deletes=[seen])

    assert [(s.op, s.object_id) for s in plan.steps] == [("delete_role", seen)]


def delete_item(kind: str, name: str, object_id: str, action: str = "delete") -> PlanItem:
    return PlanItem(kind=kind, name=name, action=action, id=object_id, field="", key=f"delete:{object_id}")


ITEMS = [
    delete_item("role", "Kept", "1", action="keep"),
    delete_item("channel", "Info / news", "2"),
    delete_item("category", "Info", "3"),
    delete_item("channel", "memes", "4"),
    delete_item("channel", "kept-chat", "5", action="keep"),
    delete_item("role", "Mods", "6"),
    delete_item("role", "Helpers", "7"),
    delete_item("role", "Guests", "8"),
]


def test_before_confirming_a_person_is_told_which_channels_lose_their_messages_and_who_loses_each_role():
    warnings = deletion_warnings(ITEMS, {"6": 1, "7": 3, "1": 5})

    assert [(w.field, w.rule, w.message) for w in warnings] == [
        ("channels", "delete", "2 channels and all their messages will be deleted: Info / news, memes"),
        ("roles", "delete", "role 'Mods' will be deleted: 1 member holds it and loses it"),
        ("roles", "delete", "role 'Helpers' will be deleted: 3 members hold it and lose it"),
        ("roles", "delete", "role 'Guests' will be deleted: 0 members hold it and lose it"),
    ]


def test_one_channel_is_one_channel_and_unknown_member_counts_are_said_to_be_unknown():
    items = [delete_item("channel", "memes", "4"), delete_item("role", "Mods", "6")]

    warnings = deletion_warnings(items, None)

    assert [w.message for w in warnings] == [
        "1 channel and all their messages will be deleted: memes",
        "role 'Mods' will be deleted: an unknown number of members hold it and lose it",
    ]


def test_a_plan_without_deletions_warns_of_nothing():
    assert deletion_warnings([delete_item("channel", "chat", "5", action="keep")], {}) == []


def guild_with_channels(count: int, **category: Any) -> GuildBuilder:
    """A guild of `count` channels: those of a category `hall` (if given, its channel names) and then top-level
    fillers, which a pruning deploy of a configuration that does not name them deletes."""
    guild = GuildBuilder()
    hall_names: list[str] = category.get("hall", [])
    if "hall" in category:
        hall = guild.category("Hall")
        for name in hall_names:
            guild.channel(name, parent=hall)
    for n in range(count - len(guild.channels)):
        guild.channel(f"filler-{n}")
    return guild


@pytest.mark.parametrize(("live_roles", "first"), [(MAX_ROLES - 1, False), (MAX_ROLES, True)])
def test_role_deletions_go_first_only_when_the_new_role_would_pass_the_cap(live_roles: int, first: bool):
    guild = GuildBuilder()
    for n in range(live_roles - 2):  # with @everyone and the bot's role
        guild.role(f"old-{n}")
    config = ServerConfig.model_validate({"name": "Community", "roles": [{"name": "New"}]})

    plan = plan_deployment(guild.build(), config, prune=True)

    assert len(guild.roles) == live_roles
    assert deletes_first(plan, "role") is first


@pytest.mark.parametrize(("live_channels", "first"), [(MAX_CHANNELS - 1, False), (MAX_CHANNELS, True)])
def test_channel_deletions_go_first_only_when_the_new_channel_would_pass_the_cap(live_channels: int, first: bool):
    guild = guild_with_channels(live_channels, hall=["kept"])
    body = {
        "name": "Community",
        "categories": [{"name": "Hall", "channels": [{"name": "kept"}]}],
        "channels": [{"name": "new"}],
    }

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body), prune=True)

    assert len(guild.channels) == live_channels
    assert deletes_first(plan, "channel") is first


@pytest.mark.parametrize(("live_channels", "first"), [(MAX_CHANNELS - 2, False), (MAX_CHANNELS - 1, True)])
def test_a_new_category_counts_as_a_channel_against_the_cap(live_channels: int, first: bool):
    guild = guild_with_channels(live_channels)
    body = {"name": "Community", "categories": [{"name": "New", "channels": [{"name": "x"}]}]}

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body), prune=True)

    assert [s.name for s in plan.steps if s.op == "create_channel"] == ["New", "New / x"]
    assert deletes_first(plan, "channel") is first


@pytest.mark.parametrize(
    ("in_hall", "new", "first"),
    [
        (MAX_CHANNELS_PER_CATEGORY - 1, 1, False),
        (MAX_CHANNELS_PER_CATEGORY, 1, True),
        (MAX_CHANNELS_PER_CATEGORY - 1, 2, True),
    ],
)
def test_channel_deletions_go_first_only_when_new_channels_would_pass_their_categorys_cap(
    in_hall: int, new: int, first: bool
):
    names = [f"ch-{n}" for n in range(in_hall - new)]
    guild = guild_with_channels(in_hall + 1, hall=[*names, *(f"old-{n}" for n in range(new))])  # old: not named
    named = [*({"name": n} for n in names), *({"name": f"new-{n}"} for n in range(new))]
    body = {"name": "Community", "categories": [{"name": "Hall", "channels": named}]}

    plan = plan_deployment(guild.build(), ServerConfig.model_validate(body), prune=True)

    assert deletes_first(plan, "channel") is first


# ---------------------------------------------------------------- a confirmed deletion, re-checked at resume (v4)


def confirmed_guild() -> tuple[GuildBuilder, dict[str, str]]:
    guild = GuildBuilder()
    ids = {
        "Temp": guild.role("Temp", "SEND_MESSAGES"),
        "old-news": guild.channel("old-news", topic="2024"),
    }
    ids["chat"] = guild.channel("chat", overwrites=[overwrite(ids["Temp"], allow=("SEND_MESSAGES",))])
    return guild, ids


def test_a_confirmed_deletion_goes_while_its_object_is_as_confirmed_and_is_kept_and_named_once_it_changed():
    guild, ids = confirmed_guild()
    live = guild.build()
    config = ServerConfig.model_validate({"name": "Community"})
    confirmed = list(ids.values())
    prints = confirmed_fingerprints(live, [*confirmed, "1191000000000009999"])  # an id gone since: no fingerprint
    assert set(prints) == set(confirmed)

    # As confirmed (positions aside, and chat's overwrite for Temp, which goes with Temp): all three go
    moved = live.model_copy(
        update={
            "channels": [
                c.model_copy(update={"position": c.position + 3, "permission_overwrites": []}) for c in live.channels
            ],
        }
    )
    plan = plan_deployment(moved, config, prune=True, confirmed_deletes=confirmed, confirmed_fingerprints=prints)
    assert {step.object_id for step in plan.steps} == set(confirmed)
    assert plan.kept == []

    # Renamed and repurposed, or given other permissions, since: kept, each named with what changed
    changed = live.model_copy(
        update={
            "roles": [r.model_copy(update={"permissions": "8"}) if r.id == ids["Temp"] else r for r in live.roles],
            "channels": [
                c.model_copy(update={"name": "events", "topic": "This week"}) if c.id == ids["old-news"] else c
                for c in live.channels
            ],
        }
    )
    plan = plan_deployment(changed, config, prune=True, confirmed_deletes=confirmed, confirmed_fingerprints=prints)
    assert [step.object_id for step in plan.steps] == [ids["chat"]]
    assert [(i.field, i.key) for i in plan.kept] == [("", f"delete:{ids['old-news']}"), ("", f"delete:{ids['Temp']}")]
    assert [(i.kind, i.name, i.action, i.id, i.note) for i in plan.kept] == [
        ("channel", "events", "keep", ids["old-news"], "changed since its deletion was confirmed (name, topic): kept"),
        ("role", "Temp", "keep", ids["Temp"], "changed since its deletion was confirmed (permissions): kept"),
    ]
    # Without fingerprints (a deployment queued before they were kept): the confirmed ids alone decide
    plan = plan_deployment(changed, config, prune=True, confirmed_deletes=confirmed)
    assert {step.object_id for step in plan.steps} == set(confirmed)
