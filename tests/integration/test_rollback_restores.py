"""A rollback of a deploy that renamed, moved, reordered, deleted and renamed the server: by project alone, the guild
is again what it was before, the deleted role and channel back with their permissions, topic, category and
position (new ids: the platform cannot bring an id back)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from svcconf.config import to_bitfield
from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import deploy_body, link, writes
from tests.helpers.rollbacks import BASE, by_names, call, finished

# What `announcements` had from Staff and leaves there on its move to Lobby (an access change, shown as one).
LEFT_BEHIND = ("@everyone", "Mods")


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    return platform


def edited(exported: dict[str, Any]) -> dict[str, Any]:
    """A user's edits of the exported configuration: a channel and a role renamed, a channel moved, the orders
    reversed, a channel and a role removed, the server renamed."""
    config = copy.deepcopy(exported)
    config["name"] = "Build Lab (renamed)"
    config["roles"] = [role for role in config["roles"] if role["name"] != "Guests"]
    for role in config["roles"]:
        if role["name"] == "Mods":
            role["name"] = "Moderators"
    for category in config["categories"]:
        for channel in category["channels"]:
            channel["overwrites"] = [o for o in channel.get("overwrites", []) if o["role"] != "Guests"]
    config["roles"].reverse()
    lobby, staff = config["categories"]
    general = next(c for c in lobby["channels"] if c["name"] == "general")
    general["name"] = "lobby-chat"
    lobby["channels"] = [c for c in lobby["channels"] if c["name"] != "memes"]
    moved = next(c for c in staff["channels"] if c["name"] == "announcements")
    staff["channels"].remove(moved)
    lobby["channels"].append(moved)
    for category in config["categories"]:
        category["channels"].reverse()
        for channel in category["channels"]:
            for overwrite in channel.get("overwrites", []):
                overwrite["role"] = "Moderators" if overwrite["role"] == "Mods" else overwrite["role"]
        for overwrite in category.get("overwrites", []):
            overwrite["role"] = "Moderators" if overwrite["role"] == "Mods" else overwrite["role"]
    config["categories"].reverse()
    return config


def test_a_rollback_by_project_alone_returns_the_guild_to_what_it_was_before_the_pruning_deploy(invoke, linked, aws):
    assert call(invoke, deploy_body(BUILD_GUILD, BASE)).status == 202
    assert finished(invoke, aws)["status"] == "succeeded"
    before = by_names(linked.guild(BUILD_GUILD))
    exported = call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"]
    config = edited(exported)
    planned = call(invoke, deploy_body(BUILD_GUILD, config, dry_run=True, prune=True)).body
    assert sorted((i["kind"], i["name"]) for i in planned["plan"] if i["action"] == "delete") == [
        ("channel", "Lobby / memes"),
        *sorted(("overwrite", f"Lobby / announcements → {role}") for role in LEFT_BEHIND),
        ("role", "Guests"),
    ]
    deployed = call(invoke, deploy_body(BUILD_GUILD, config, prune=True, confirm=planned["plan_id"]))
    assert deployed.status == 202, deployed.body
    assert finished(invoke, aws)["status"] == "succeeded"
    assert by_names(linked.guild(BUILD_GUILD)) != before

    linked.clear_log()
    queued = call(invoke, {"action": "rollback", "project_id": "proj-1"})
    assert queued.status == 202, queued.body
    undone = finished(invoke, aws)

    assert (undone["kind"], undone["status"], undone["steps"]["errors"]) == ("rollback", "succeeded", [])
    assert by_names(linked.guild(BUILD_GUILD)) == before
    guests = next(r for r in linked.guild(BUILD_GUILD)["roles"].values() if r["name"] == "Guests")
    assert str(guests["permissions"]) == to_bitfield(["ADD_REACTIONS"])
    assert ("POST", "/guilds/{guild_id}/roles") in writes(linked)
    assert ("POST", "/guilds/{guild_id}/channels") in writes(linked)
