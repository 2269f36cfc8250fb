"""The rollback plan on its own: restore what a deployment updated, from the snapshot, and delete what it created;
leave, and name, what anyone changed since."""

from __future__ import annotations

from datetime import UTC, datetime

from svcconf.chat import ForumTag, PermissionOverwrite
from svcconf.config import to_bitfield
from svcconf.config.vocabulary import REQUIRE_TAG_FLAG
from svcconf.deploy_engine.journal import fingerprint_of
from svcconf.deploy_engine.rollback import RollbackJournal, plan_rollback
from svcconf.deploy_engine.snapshot import GuildSnapshot
from svcconf.deploy_engine.steps import ChannelStep, DeploymentPlan, GuildStep, ReorderRoles, RoleStep
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, holding_guild, overwrite

TAKEN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def undo(live, snapshot, created, updated) -> DeploymentPlan:
    """The rollback's plan from a journal without fingerprints (a deployment from before they were kept)."""
    return plan_rollback(live, snapshot, RollbackJournal(created=created, updated=updated)).plan


def before_and_after():
    """A guild before a deployment, and after it created a role, a category and a channel, and updated two."""
    guild = GuildBuilder()
    member = guild.role("Member", "SEND_MESSAGES")
    lobby = guild.channel("lobby", topic="Welcome")
    before = guild.build()
    crew = guild.role("Crew", "CONNECT", position=1)
    deck = guild.category("Deck")
    bridge = guild.channel("bridge", parent=deck, overwrites=[overwrite(crew, allow=("VIEW_CHANNEL",))])
    after = guild.build()
    for role in after.roles:
        if role.id == member:
            role.permissions = to_bitfield(["SEND_MESSAGES", "ATTACH_FILES"])
    for channel in after.channels:
        if channel.id == lobby:
            channel.topic = "Welcome aboard"
            channel.permission_overwrites = [PermissionOverwrite(**overwrite(crew, deny=("SEND_MESSAGES",)))]
    created = {"role:crew": crew, "category:deck": deck, "channel:category:deck:0:bridge": bridge}
    updated = {"role:member": member, "channel:-:0:lobby": lobby}
    return GuildSnapshot.of(before, TAKEN), after, created, updated


def test_rollback_restores_updated_objects_then_deletes_channels_then_categories_then_roles():
    snapshot, after, created, updated = before_and_after()

    plan = undo(after, snapshot, created, updated)

    assert [(step.op, step.name) for step in plan.steps] == [
        ("update_role", "Member"),
        ("update_channel", "lobby"),
        ("delete_channel", "bridge"),
        ("delete_channel", "Deck"),
        ("delete_role", "Crew"),
    ]
    role, channel = plan.steps[0], plan.steps[1]
    assert isinstance(role, RoleStep)
    assert role.payload == {"permissions": to_bitfield(["SEND_MESSAGES"])}
    assert isinstance(channel, ChannelStep)
    assert channel.payload == {"permission_overwrites": [], "topic": "Welcome"}


def test_objects_already_gone_or_already_restored_need_no_step():
    snapshot, after, created, updated = before_and_after()
    gone = after.model_copy(update={"channels": [c for c in after.channels if c.name != "bridge"]})

    plan = undo(gone, snapshot, created, {"role:member": updated["role:member"]})

    assert [(step.op, step.name) for step in plan.steps] == [
        ("update_role", "Member"),
        ("delete_channel", "Deck"),
        ("delete_role", "Crew"),
    ]
    restored = undo(snapshot_as_live(snapshot, after), snapshot, {}, updated)
    assert restored.steps == []


def snapshot_as_live(snapshot: GuildSnapshot, like):
    return like.model_copy(update={"roles": snapshot.roles, "channels": snapshot.channels})


def test_roles_the_deployment_moved_go_back_to_the_snapshots_order():
    guild = GuildBuilder()
    low = guild.role("Low")
    high = guild.role("High")
    before = guild.build()
    after = guild.build()
    for role in after.roles:  # the deployment swapped them
        if role.id == low:
            role.position = 2
        if role.id == high:
            role.position = 1

    plan = undo(after, GuildSnapshot.of(before, TAKEN), {}, {})

    (step,) = plan.steps
    assert isinstance(step, ReorderRoles)
    assert {entry.ref: entry.position for entry in step.positions} == {low: 1, high: 2}


def test_a_snapshot_survives_the_backup_store_as_roles_categories_and_channels():
    snapshot, *_ = before_and_after()

    data = snapshot.backup_data("dp_1")

    assert (data["kind"], data["deployment_id"]) == ("deployment-snapshot", "dp_1")
    assert [role["name"] for role in data["roles"]] == ["@everyone", "svc-bot", "Member"]
    assert [channel["name"] for channel in data["channels"]] == ["lobby"]
    assert data["categories"] == []
    assert GuildSnapshot.from_backup_data(data) == snapshot


def v2_before_and_after():
    """A guild holding the v2 configuration, and the same guild after a deployment changed its settings, the
    forum's tags and layout, the role's emoji and @everyone's permissions."""
    guild = holding_guild()
    before = guild.build()
    after = guild.build()
    after.settings.verification_level, after.settings.afk_channel_id = 4, None
    after.settings.description = "Changed"
    forum = next(channel for channel in after.channels if channel.name == "ideas")
    forum.available_tags, forum.default_forum_layout, forum.flags = (
        [ForumTag(id="1191000000000009909", name="New"), ForumTag(id="1191000000000009902", name="Idea")],
        1,
        0,
    )
    helper = next(role for role in after.roles if role.name == "Helper")
    helper.unicode_emoji = "🧯"
    after.roles[0].permissions = to_bitfield(["VIEW_CHANNEL"])
    updated = {"settings": GUILD_ID, "channel:category:hall:15:ideas": forum.id, "role:helper": helper.id}
    updated["role:@everyone"] = GUILD_ID
    return GuildSnapshot.of(before, TAKEN), before, after, updated


def test_rollback_restores_the_settings_first_in_one_guild_step_then_roles_and_forum_fields():
    snapshot, before, after, updated = v2_before_and_after()

    plan = undo(after, snapshot, {}, updated)

    settings = plan.steps[0]
    assert isinstance(settings, GuildStep)
    assert settings.payload == {
        "verification_level": 2,
        "afk_channel_id": before.settings.afk_channel_id,
        "description": "A server with everything",
    }
    assert settings.previous == {"verification_level": 4, "afk_channel_id": None, "description": "Changed"}
    by_name = {step.name: step for step in plan.steps[1:]}
    assert by_name["ideas"].payload == {
        "available_tags": [
            {"name": "Bug", "emoji_name": "🐛", "moderated": False},
            {"name": "Idea", "emoji_name": None, "moderated": False, "id": "1191000000000009902"},  # kept: its id
            {"name": "Staff pick", "emoji_name": None, "moderated": True},
        ],
        "default_forum_layout": 2,
        "flags": REQUIRE_TAG_FLAG,
    }
    assert by_name["Helper"].payload == {"unicode_emoji": "🛟"}
    assert by_name["@everyone"].payload == {"permissions": to_bitfield(["VIEW_CHANNEL", "SEND_MESSAGES"])}


def test_settings_already_restored_or_never_touched_need_no_step():
    snapshot, before, after, updated = v2_before_and_after()

    assert not any(isinstance(step, GuildStep) for step in undo(before, snapshot, {}, updated).steps)
    del updated["settings"]
    assert not any(isinstance(step, GuildStep) for step in undo(after, snapshot, {}, updated).steps)


def test_a_snapshot_records_the_settings_and_one_taken_before_they_were_recorded_restores_none():
    snapshot, _, after, updated = v2_before_and_after()

    data = snapshot.backup_data("dp_2")
    assert data["settings"]["verification_level"] == 2
    assert GuildSnapshot.from_backup_data(data) == snapshot
    old = GuildSnapshot.from_backup_data({key: value for key, value in data.items() if key != "settings"})
    assert not any(isinstance(step, GuildStep) for step in undo(after, old, {}, updated).steps)


def test_what_anyone_changed_since_the_deployment_is_left_as_it_is_and_named_and_the_rest_undone():
    snapshot, after, created, updated = before_and_after()
    now = after.model_copy(deep=True)
    for channel in now.channels:
        if channel.name == "bridge":
            channel.topic = "A person's topic"
    for role in now.roles:
        if role.name == "Member":
            role.permissions = to_bitfield(["SEND_MESSAGES", "ATTACH_FILES", "ADD_REACTIONS"])

    rollback = plan_rollback(now, snapshot, RollbackJournal(**journal_of(after, created, updated)))

    assert [(step.op, step.name) for step in rollback.plan.steps] == [
        ("update_channel", "lobby"),
        ("delete_role", "Crew"),
    ]
    assert [error.model_dump() for error in rollback.left] == [
        {"kind": "role", "name": "Member", "message": "changed since the deployment (permissions): left as it is"},
        {"kind": "channel", "name": "bridge", "message": "changed since the deployment (topic): left as it is"},
        {
            "kind": "category",
            "name": "Deck",
            "message": "kept: it holds 1 channel the deployment did not make or that changed since",
        },
    ]


def test_a_category_the_deployment_made_that_now_holds_a_persons_channel_is_kept_and_its_own_channels_go():
    guild = GuildBuilder()
    before = guild.build()
    deck = guild.category("Deck")
    bridge = guild.channel("bridge", parent=deck)
    after = guild.build()
    guild.channel("persons-chat", parent=deck)
    now = guild.build()
    created = {"category:deck": deck, "channel:category:deck:0:bridge": bridge}

    rollback = plan_rollback(now, GuildSnapshot.of(before, TAKEN), RollbackJournal(**journal_of(after, created, {})))

    assert [(step.op, step.name) for step in rollback.plan.steps] == [("delete_channel", "bridge")]
    assert [error.name for error in rollback.left] == ["Deck"]


def test_an_object_the_deployment_updated_that_is_gone_since_is_named_not_restored():
    snapshot, after, created, updated = before_and_after()
    now = after.model_copy(update={"channels": [c for c in after.channels if c.name != "lobby"]})

    rollback = plan_rollback(now, snapshot, RollbackJournal(**journal_of(after, created, updated)))

    assert "lobby" not in [step.name for step in rollback.plan.steps]
    assert [(e.name, e.message) for e in rollback.left] == [("lobby", "deleted since the deployment: not restored")]


def journal_of(left_by, created, updated) -> dict:
    objects = {o.id: o for o in [*left_by.roles, *left_by.channels]}
    after = {key: fingerprint_of(objects[object_id]) for key, object_id in {**created, **updated}.items()}
    return {"created": created, "updated": updated, "after": after}


def test_what_the_deployment_deleted_is_made_again_first_and_named_by_key_where_it_is_needed():
    guild = GuildBuilder()
    guests = guild.role("Guests", "ADD_REACTIONS")
    hall = guild.category("Hall")
    memes = guild.channel("memes", parent=hall, topic="Only the good ones")
    lobby = guild.channel("lobby", overwrites=[overwrite(guests, deny=("SEND_MESSAGES",))])
    before = guild.build()
    snapshot = GuildSnapshot.of(before, TAKEN).model_copy(deep=True)
    after = before.model_copy(
        update={
            "roles": [r for r in before.roles if r.id != guests],
            "channels": [c for c in before.channels if c.id not in (hall, memes)],
        }
    )
    for channel in after.channels:
        if channel.id == lobby:
            channel.permission_overwrites = []
    deleted = {f"delete:{guests}": guests, f"delete:{hall}": hall, f"delete:{memes}": memes}
    journal = RollbackJournal(updated={"channel:-:0:lobby": lobby}, deleted=deleted)

    rollback = plan_rollback(after, snapshot, journal)

    steps = rollback.plan.steps
    assert [(step.op, step.key) for step in steps] == [
        ("create_role", f"role:restore:{guests}"),
        ("create_channel", f"category:restore:{hall}"),
        ("create_channel", f"channel:restore:{memes}"),
        ("update_channel", "channel:-:0:lobby"),
    ]
    role, _, channel, restored = steps
    assert isinstance(role, RoleStep)
    assert role.payload["permissions"] == to_bitfield(["ADD_REACTIONS"])
    assert isinstance(channel, ChannelStep)
    assert (channel.parent, channel.payload["topic"]) == (f"category:restore:{hall}", "Only the good ones")
    assert isinstance(restored, ChannelStep)
    assert [(spec.target, spec.deny) for spec in restored.overwrites] == [
        (f"role:restore:{guests}", int(to_bitfield(["SEND_MESSAGES"])))
    ]
    resumed = RollbackJournal(**journal.model_dump() | {"done": {f"role:restore:{guests}": "1191000000000099999"}})
    again = plan_rollback(after, snapshot, resumed).plan
    assert "create_role" not in [step.op for step in again.steps]
    assert again.ids[f"role:restore:{guests}"] == "1191000000000099999"
    # and a lobby it restored already (the new role's overwrite in place of the old one's) needs no step
    restored = after.model_copy(deep=True)
    for channel in restored.channels:
        if channel.id == lobby:
            channel.permission_overwrites = [
                PermissionOverwrite(**overwrite("1191000000000099999", deny=("SEND_MESSAGES",)))
            ]
    done = plan_rollback(restored, snapshot, resumed).plan
    assert "channel:-:0:lobby" not in [step.key for step in done.steps]
    assert not [step for step in done.steps if step.key.startswith("overwrites:restore:")]
