"""A deploy of 40 roles, 8 private categories and 56 channels, its steps side by side across the platform's buckets,
read back from the sandbox's request log (each request's arrival and answer): buckets of different routes busy at
once, never two requests of one bucket in flight, each channel made after the roles its overwrites name and its
category, the orders after what they order, no 429; and a journal that names each object once."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import boto3
import pytest

from local.samples import large_community
from local.template import LOCAL_REGION
from svcconf.chat import get_chat_client
from svcconf.settings import get_settings
from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import USER, DeployQueue, deploy_body, link
from tests.helpers.handlers import bearer

CONFIG = large_community(roles=40, categories=8, channels=60)  # 7 channels a category: 56
LATENCY_SECONDS = 0.1  # each answer takes this long: requests sent side by side overlap in the log, busy machine too
ROLE_CREATE, CHANNEL_CREATE = "/guilds/{guild_id}/roles", "/guilds/{guild_id}/channels"
ORDERS = (("PATCH", "/guilds/{guild_id}/channels"), ("PATCH", "/guilds/{guild_id}/roles"))
SETTINGS = ("PATCH", "/guilds/{guild_id}")


@pytest.fixture
def linked(invoke, platform, function_environment):
    """The guild already holds two of the roles and two of the categories, each pair in the other order (made by
    the bot over HTTP): the deploy updates them and orders roles and channels after its creations."""
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    client = get_chat_client()
    for name in ("Team 40", "Team 01"):
        client.create_role(BUILD_GUILD, {"name": name, "permissions": "0"}, reason="made before the deploy")
    for name in ("Area 8", "Area 1"):
        client.create_channel(BUILD_GUILD, {"name": name, "type": 4}, reason="made before the deploy")
    return platform


def bucket(entry: dict[str, Any]) -> tuple[str, str, str]:
    """A request's platform bucket: its route and major parameter (the guild or the channel its path names)."""
    parts = entry["path"].strip("/").split("/")
    major = parts[1] if len(parts) > 1 and parts[0] in ("guilds", "channels") else ""
    return entry["method"], entry["route"], major


def in_flight_together(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["time"] < b["answered"] and b["time"] < a["answered"]


def creations(log: list[dict[str, Any]], route: str, made: list[str]) -> dict[str, dict[str, Any]]:
    """The object each successful creation of `route` made: the sandbox hands out ids in increasing order and
    answers its requests one at a time (its state's lock), so the n-th creation logged made the n-th new id."""
    sent = [entry for entry in log if (entry["method"], entry["route"]) == ("POST", route) and entry["status"] < 300]
    assert len(sent) == len(made), f"{len(sent)} creations of {route} for {len(made)} new objects"
    return dict(zip(sorted(made, key=int), sent, strict=True))


def deployment_item() -> dict[str, Any]:
    table = boto3.resource("dynamodb", region_name=LOCAL_REGION).Table(get_settings().deployments_table)
    items = table.query(KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": f"USER#{USER}"})["Items"]
    (item,) = items
    return item


def test_a_large_deploy_keeps_buckets_busy_side_by_side_one_request_each_in_the_order_it_needs(invoke, linked, aws):
    before = linked.guild(BUILD_GUILD)
    queued = invoke("deployToChat", deploy_body(BUILD_GUILD, CONFIG), headers=bearer(USER))
    assert queued.status == 202, queued.body
    linked.configure(latency_seconds=LATENCY_SECONDS)
    linked.clear_log()

    DeployQueue(aws).drain()

    log = linked.request_log
    guild = linked.guild(BUILD_GUILD)
    new_roles = {i: r for i, r in guild["roles"].items() if i not in before["roles"]}
    new_channels = {i: c for i, c in guild["channels"].items() if i not in before["channels"]}
    assert (len(new_roles), len(new_channels)) == (38, 6 + 56)
    assert Counter(entry["status"] for entry in log)[429] == 0

    # Never two requests of one bucket in flight; requests of different buckets were
    by_bucket: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for entry in log:
        by_bucket.setdefault(bucket(entry), []).append(entry)
    for key, entries in by_bucket.items():
        ordered = sorted(entries, key=lambda entry: entry["time"])
        assert all(a["answered"] <= b["time"] for a, b in itertools.pairwise(ordered)), key
    roles_made = creations(log, ROLE_CREATE, list(new_roles))
    made = roles_made | creations(log, CHANNEL_CREATE, list(new_channels))
    beside = [
        (role, channel)
        for role in roles_made.values()
        for channel in made.values()
        if channel["route"] == CHANNEL_CREATE and in_flight_together(role, channel)
    ]
    assert len(beside) >= 5, "role and channel creations side by side"
    assert len(by_bucket) >= 3

    # Each channel after the creations of the roles its overwrites name and of its category
    checked = 0
    for channel_id, channel in new_channels.items():
        named = [o["id"] for o in channel["permission_overwrites"] if o["id"] in new_roles]
        parent = [channel["parent_id"]] if channel.get("parent_id") in new_channels else []
        for earlier in [*named, *parent]:
            assert made[earlier]["answered"] <= made[channel_id]["time"], (channel["name"], earlier)
            checked += 1
    assert checked >= 56 + 6 + 56 // 3, "every channel has its category, every category and some channels a role"

    # The channel order after every creation and update, then the server's name (a setting: the plan's next step),
    # and the role order after all of them
    writes = [entry for entry in log if entry["method"] in ("POST", "PATCH", "PUT", "DELETE")]
    (channel_order,) = [entry for entry in writes if (entry["method"], entry["route"]) == ORDERS[0]]
    (settings,) = [entry for entry in writes if (entry["method"], entry["route"]) == SETTINGS]
    (role_order,) = [entry for entry in writes if (entry["method"], entry["route"]) == ORDERS[1]]
    objects = [entry for entry in writes if entry not in (channel_order, settings, role_order)]
    assert max(entry["answered"] for entry in objects) <= channel_order["time"]
    assert channel_order["answered"] <= settings["time"]
    assert settings["answered"] <= role_order["time"]

    # The journal names each object once, and the counts are the plan's
    item = deployment_item()
    assert item["status"] == "succeeded"
    created = item["journal_created"]
    assert sorted(created.values()) == sorted([*new_roles, *new_channels]), "each new object journaled, once"
    assert Counter(key.split(":", 1)[0] for key in created) == {"role": 38, "category": 6, "channel": 56}
    updated = {key for key in item["journal_updated"] if not key.startswith("reorder:")}  # the orders: no intent
    assert {"role:team 40", "role:team 01", "category:area 8", "category:area 1"} <= updated
    assert set(item["journal_intents"]) == set(created) | updated, "an intent for each write, and only those"
    steps = item["steps"]
    counts = {
        kind: (steps[kind]["planned"], steps[kind]["created"], steps[kind].get("updated", 0))
        for kind in ("roles", "categories", "channels")
    }
    assert counts == {"roles": (40, 38, 2), "categories": (8, 6, 2), "channels": (56, 56, 0)}
    names = {role["name"] for role in new_roles.values()} | {channel["name"] for channel in new_channels.values()}
    assert len(names) == len(new_roles) + len(new_channels), "no object twice"
