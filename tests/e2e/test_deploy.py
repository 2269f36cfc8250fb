"""A deploy end to end through `make run`: the API, the local queue feeding the worker as Lambda's event source
mapping does, moto, and the chat-platform sandbox holding the guild afterwards."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import pytest

from local.samples import large_community
from svcconf.config import to_bitfield
from tests.helpers.deploy_worker import structure
from tests.helpers.e2e_deployer import Deployer

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def deployer(local_service: LocalService) -> Deployer:
    deployer = Deployer(local_service)
    deployer.link()
    return deployer


def by_name(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    names = [item["name"] for item in objects]
    assert len(names) == len(set(names)), f"a name twice: {sorted(n for n in names if names.count(n) > 1)}"
    return {item["name"]: item for item in objects}


def overwrites_of(channel: dict[str, Any], role_ids: dict[str, str]) -> dict[str, tuple[str, str]]:
    names = {identifier: name for name, identifier in role_ids.items()}
    return {names[o["id"]]: (str(o["allow"]), str(o["deny"])) for o in channel["permission_overwrites"]}


def expected_overwrites(*layers: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    merged: dict[str, tuple[str, str]] = {}
    for overwrites in layers:
        merged |= {o["role"]: (to_bitfield(o.get("allow", [])), to_bitfield(o.get("deny", []))) for o in overwrites}
    return merged


def assert_guild_holds(guild: dict[str, Any], config: dict[str, Any]) -> None:
    """Every object of the configuration exactly once, with its attributes, parent, overwrites and permissions."""
    roles = by_name(guild["roles"])
    role_ids = {name: role["id"] for name, role in roles.items()}
    role_ids["@everyone"] = guild["id"]
    for role in config["roles"]:
        live = roles[role["name"]]
        assert str(live["permissions"]) == to_bitfield(role["permissions"])
        assert (live["color"], live["hoist"], live["mentionable"]) == (
            role["color"],
            role["hoist"],
            role["mentionable"],
        )
    configured = [roles[role["name"]]["position"] for role in config["roles"]]
    assert configured == sorted(configured, reverse=True), "roles stand in the configuration's order"
    categories = by_name([c for c in guild["channels"] if c["type"] == 4])
    channels = by_name([c for c in guild["channels"] if c["type"] != 4])
    for category in config["categories"]:
        live_category = categories[category["name"]]
        assert overwrites_of(live_category, role_ids) == expected_overwrites(category["overwrites"])
        for channel in category["channels"]:
            name = channel["name"].replace(" ", "-").lower() if channel["type"] == "text" else channel["name"]
            live = channels[name]
            assert live["parent_id"] == live_category["id"]
            assert live["type"] == (0 if channel["type"] == "text" else 2)
            assert live.get("topic") == channel.get("topic")
            assert (live.get("user_limit") or 0) == channel.get("user_limit", 0)
            own = channel.get("overwrites", [])
            assert overwrites_of(live, role_ids) == expected_overwrites(category["overwrites"], own)


def test_a_large_configuration_deploys_converges_updates_only_what_changed_and_rolls_back(deployer: Deployer) -> None:
    config = large_community(roles=40, categories=8, channels=120)

    # A fresh deploy: 40 roles, 8 categories, 120 channels with their overwrites.
    first = deployer.deploy(config)
    assert first["status"] == "succeeded", first
    created = {kind: first["steps"][kind]["created"] for kind in ("roles", "categories", "channels")}
    assert created == {"roles": 40, "categories": 8, "channels": 120}
    assert first["steps"]["errors"] == []
    assert_guild_holds(deployer.guild(), config)

    # The same deploy again sends no write request at all.
    before = deployer.log_size()
    again = deployer.deploy(config)
    assert again["status"] == "succeeded"
    assert deployer.writes_since(before) == []
    assert again["steps"]["roles"]["existing"] == 40

    # Three roles' permissions and two topics changed: exactly those five objects are updated.
    changed = copy.deepcopy(config)
    for role in changed["roles"][:3]:
        role["permissions"] = [*role["permissions"], "ADD_REACTIONS"]
    changed["categories"][0]["channels"][1]["topic"] = "A new topic"
    changed["categories"][5]["channels"][2]["topic"] = "Another new topic"
    before = deployer.log_size()
    updated = deployer.deploy(changed)
    assert updated["status"] == "succeeded"
    assert sorted(deployer.writes_since(before)) == [
        ("PATCH", "/channels/{channel_id}"),
        ("PATCH", "/channels/{channel_id}"),
        ("PATCH", "/guilds/{guild_id}/roles/{role_id}"),
        ("PATCH", "/guilds/{guild_id}/roles/{role_id}"),
        ("PATCH", "/guilds/{guild_id}/roles/{role_id}"),
    ]
    assert (updated["steps"]["roles"]["updated"], updated["steps"]["channels"]["updated"]) == (3, 2)
    assert_guild_holds(deployer.guild(), changed)

    # Rolling that update back returns the guild to its snapshot, taken before the update's first write.
    rolled_back = deployer.rollback()
    assert rolled_back["status"] == "succeeded", rolled_back
    assert rolled_back["kind"] == "rollback"
    assert (rolled_back["steps"]["roles"]["updated"], rolled_back["steps"]["channels"]["updated"]) == (3, 2)
    snapshot = deployer.backup(rolled_back["backup_id"])
    live = deployer.guild()
    assert structure(live["roles"], live["channels"]) == structure(
        snapshot["roles"], [*snapshot["categories"], *snapshot["channels"]]
    )
    assert_guild_holds(live, config)
