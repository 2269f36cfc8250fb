"""The rollback plan on its own: delete what a deployment created, restore what it updated, from the snapshot."""

from __future__ import annotations

from datetime import UTC, datetime

from svcconf.chat import PermissionOverwrite
from svcconf.config import to_bitfield
from svcconf.deploy.plan import ChannelStep, ReorderRoles, RoleStep
from svcconf.deploy.rollback import GuildSnapshot, plan_rollback
from tests.unit.deploy_guilds import GuildBuilder, overwrite

TAKEN = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


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


def test_rollback_deletes_channels_then_categories_then_roles_and_restores_updated_objects():
    snapshot, after, created, updated = before_and_after()

    plan = plan_rollback(after, snapshot, created, updated)

    assert [(step.op, step.name) for step in plan.steps] == [
        ("delete_channel", "bridge"),
        ("delete_channel", "Deck"),
        ("delete_role", "Crew"),
        ("update_role", "Member"),
        ("update_channel", "lobby"),
    ]
    role, channel = plan.steps[3], plan.steps[4]
    assert isinstance(role, RoleStep)
    assert role.payload == {"permissions": to_bitfield(["SEND_MESSAGES"])}
    assert isinstance(channel, ChannelStep)
    assert channel.payload == {"permission_overwrites": [], "topic": "Welcome"}


def test_objects_already_gone_or_already_restored_need_no_step():
    snapshot, after, created, updated = before_and_after()
    gone = after.model_copy(update={"channels": [c for c in after.channels if c.name != "bridge"]})

    plan = plan_rollback(gone, snapshot, created, {"role:member": updated["role:member"]})

    assert [(step.op, step.name) for step in plan.steps] == [
        ("delete_channel", "Deck"),
        ("delete_role", "Crew"),
        ("update_role", "Member"),
    ]
    restored = plan_rollback(snapshot_as_live(snapshot, after), snapshot, {}, updated)
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

    plan = plan_rollback(after, GuildSnapshot.of(before, TAKEN), {}, {})

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
