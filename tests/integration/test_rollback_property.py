"""A property: whatever a user does to an exported configuration (renames, moves, reorders, additions, removals, the
server renamed), deployed with `prune` and its confirmed plan, a rollback by project alone returns the guild to
what it was before, as a person sees it (the same names, attributes, categories, positions and overwrites)."""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svcconf.settings import get_settings
from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import deploy_body, link
from tests.helpers.rollbacks import BASE, by_names, call, finished

# The suite's examples; SVC_PROPERTY_EXAMPLES=150 for a longer search (the closing run).
EXAMPLES = int(os.environ.get("SVC_PROPERTY_EXAMPLES", "10"))
EDITS = (
    "rename_role",
    "rename_channel",
    "move_channel",
    "reorder_roles",
    "reorder_categories",
    "reorder_channels",
    "add_role",
    "add_channel",
    "remove_role",
    "remove_channel",
    "rename_server",
)


@pytest.fixture
def linked(invoke, platform, function_environment, monkeypatch):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    monkeypatch.setenv("SVC_PLATFORM_READS_PER_MINUTE", "10000")  # one user, many examples within a minute
    get_settings.cache_clear()
    link(invoke, platform)
    # What is tested is what the guild ends as, not the pace of creations: the creation limits are lifted.
    platform.configure(route_limits={"POST /guilds/{guild_id}/roles": None, "POST /guilds/{guild_id}/channels": None})
    return platform


def apply(config: dict[str, Any], edit: str, data: st.DataObject, serial: int) -> None:
    """One user's edit of the configuration, kept valid (names unique, overwrites naming roles that exist)."""
    roles, categories = config["roles"], config["categories"]
    channels = [(category, channel) for category in categories for channel in category["channels"]]
    choice = data.draw(st.integers(min_value=0, max_value=10_000), label="which")  # one draw per edit, whatever

    def pick(items: list[Any]) -> Any:
        return items[choice % len(items)]

    if edit == "rename_role" and roles:
        role = pick(roles)
        renamed = f"{role['name']} {serial}"
        for _, channel in channels:
            for overwrite in channel.get("overwrites", []):
                overwrite["role"] = renamed if overwrite["role"] == role["name"] else overwrite["role"]
        for category in categories:
            for overwrite in category.get("overwrites", []):
                overwrite["role"] = renamed if overwrite["role"] == role["name"] else overwrite["role"]
        role["name"] = renamed
    elif edit == "rename_channel" and channels:
        pick(channels)[1]["name"] += f"-{serial}"
    elif edit == "move_channel" and channels and len(categories) > 1:
        source, channel = pick(channels)
        target = next(c for c in reversed(categories) if c is not source)
        source["channels"].remove(channel)
        target["channels"].append(channel)
    elif edit == "reorder_roles":
        roles.reverse()
    elif edit == "reorder_categories":
        categories.reverse()
    elif edit == "reorder_channels" and categories:
        pick(categories)["channels"].reverse()
    elif edit == "add_role":
        roles.append({"name": f"Added {serial}", "permissions": ["SEND_MESSAGES"]})
    elif edit == "add_channel" and categories:
        pick(categories)["channels"].append({"name": f"added-{serial}", "topic": f"Added by edit {serial}"})
    elif edit == "remove_role" and roles:
        gone = pick(roles)["name"]
        roles[:] = [role for role in roles if role["name"] != gone]
        for holder in [*categories, *(channel for _, channel in channels)]:
            holder["overwrites"] = [o for o in holder.get("overwrites", []) if o["role"] != gone]
    elif edit == "remove_channel" and channels:
        category, channel = pick(channels)
        category["channels"].remove(channel)
    elif edit == "rename_server":
        config["name"] = f"Build Lab {serial}"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_rollback_of_any_pruning_deploy_returns_the_guild_to_the_one_before(invoke, linked, aws, data):
    if not linked.guild(BUILD_GUILD)["channels"]:  # the first example builds the guild the others start from
        assert call(invoke, deploy_body(BUILD_GUILD, BASE)).status == 202
        assert finished(invoke, aws)["status"] == "succeeded"
    before = by_names(linked.guild(BUILD_GUILD))
    config = copy.deepcopy(call(invoke, {"action": "export", "guild_id": BUILD_GUILD}).body["config"])
    edits = data.draw(st.lists(st.sampled_from(EDITS), min_size=1, max_size=6), label="edits")
    for serial, edit in enumerate(edits):
        apply(config, edit, data, serial)

    planned = call(invoke, deploy_body(BUILD_GUILD, config, dry_run=True, prune=True))
    assert planned.status == 200, planned.body
    queued = call(invoke, deploy_body(BUILD_GUILD, config, prune=True, confirm=planned.body["plan_id"]))
    assert queued.status == 202, queued.body
    assert finished(invoke, aws)["status"] == "succeeded"
    assert call(invoke, {"action": "rollback", "project_id": "proj-1"}).status == 202
    undone = finished(invoke, aws)

    assert (undone["kind"], undone["status"], undone["steps"]["errors"]) == ("rollback", "succeeded", [])
    assert by_names(linked.guild(BUILD_GUILD)) == before
