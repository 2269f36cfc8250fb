"""A property of the deploy engine against the sandbox: any sequence of renames, moves, reorders, additions and
removals, each deployed with `prune` and the plan a dry run confirmed, leaves a server that reads back as its
configuration (objects kept by id, order as configured), and a second plan of it writes nothing."""

from __future__ import annotations

import copy
import itertools
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local.chat_sandbox import SandboxServer
from svcconf.config import ServerConfig
from svcconf.deploy_engine.apply import PlanApplier, StepOutcome
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import read_live_guild
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from tests.helpers.chat_sandbox import BUILD_GUILD, chat_settings_for, new_chat_client

UNLIMITED = (100_000, 1.0)
START: dict[str, Any] = {
    "name": "Property Lab",
    "roles": [{"name": "Role 1"}, {"name": "Role 2"}],
    "categories": [
        {"name": "Cat 1", "channels": [{"name": "ch-1"}, {"name": "ch-2"}, {"name": "Voice 1", "type": "voice"}]},
        {"name": "Cat 2", "channels": [{"name": "ch-3"}]},
    ],
    "channels": [{"name": "ch-4"}],
}
# The suite's examples; SVC_PROPERTY_EXAMPLES=150 for a longer search (the closing run).
EXAMPLES = int(os.environ.get("SVC_PROPERTY_EXAMPLES", "15"))
EDITS = ("rename_role", "rename_channel", "move", "reorder", "add_channel", "add_role", "add_category", "remove")


def places(config: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Every list a channel can stand in: each category's, then the one outside any."""
    return [category["channels"] for category in config["categories"]] + [config["channels"]]


def as_shown(channels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text-like channels above voice-like ones, as the platform shows (and export reads) them."""
    return [c for c in channels if c.get("type") != "voice"] + [c for c in channels if c.get("type") == "voice"]


def edit(config: dict[str, Any], data: st.DataObject, fresh: itertools.count[int]) -> dict[str, Any]:
    config = copy.deepcopy(config)
    kind = data.draw(st.sampled_from(EDITS))
    channels = [c for place in places(config) for c in place]
    if kind == "rename_role" and config["roles"]:
        data.draw(st.sampled_from(config["roles"]))["name"] = f"Role {next(fresh)}"
    elif kind == "rename_channel" and channels:
        channel = data.draw(st.sampled_from(channels))
        channel["name"] = f"Voice {next(fresh)}" if channel.get("type") == "voice" else f"ch-{next(fresh)}"
    elif kind == "move" and channels:
        channel = data.draw(st.sampled_from(channels))
        next(place for place in places(config) if channel in place).remove(channel)
        target = data.draw(st.sampled_from(places(config)))
        target.insert(data.draw(st.integers(0, len(target))), channel)
    elif kind == "reorder":
        for items in [config["roles"], config["categories"], *places(config)]:
            items[:] = data.draw(st.permutations(items))
    elif kind == "add_channel":
        voice = data.draw(st.booleans())
        target = data.draw(st.sampled_from(places(config)))
        new = {"name": f"Voice {next(fresh)}", "type": "voice"} if voice else {"name": f"ch-{next(fresh)}"}
        target.insert(data.draw(st.integers(0, len(target))), new)
    elif kind == "add_role":
        config["roles"].insert(data.draw(st.integers(0, len(config["roles"]))), {"name": f"Role {next(fresh)}"})
    elif kind == "add_category":
        config["categories"].append({"name": f"Cat {next(fresh)}", "channels": [{"name": f"ch-{next(fresh)}"}]})
    elif kind == "remove":
        lists = [items for items in [config["roles"], config["categories"], *places(config)] if items]
        items = data.draw(st.sampled_from(lists))
        items.remove(data.draw(st.sampled_from(items)))
    for place in places(config):
        place[:] = as_shown(place)
    return config


def shape(config: dict[str, Any]) -> dict[str, Any]:
    """What a person sees of the server: names and order, and the ids the configuration carries."""

    def channels(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(c["name"], c.get("type", "text"), c.get("id")) for c in items]

    return {
        "name": config["name"],
        "roles": [(role["name"], role.get("id")) for role in config["roles"]],
        "categories": [(c["name"], c.get("id"), channels(c["channels"])) for c in config["categories"]],
        "channels": channels(config["channels"]),
    }


def without_new_ids(read: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The server's shape with the ids of what this deploy created blanked: the configuration cannot know them."""
    known = {role.get("id") for role in wanted["roles"]} | {c.get("id") for c in wanted["categories"]}
    known |= {channel.get("id") for place in places(wanted) for channel in place}
    blank = shape(read)

    def keep(entry: tuple[Any, ...]) -> tuple[Any, ...]:
        return (*entry[:-1], entry[-1] if entry[-1] in known else None)

    blank["roles"] = [keep(role) for role in blank["roles"]]
    blank["categories"] = [
        (name, object_id if object_id in known else None, [keep(c) for c in chans])
        for name, object_id, chans in blank["categories"]
    ]
    blank["channels"] = [keep(c) for c in blank["channels"]]
    return blank


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_sequence_of_edits_deployed_with_a_confirmed_prune_reads_back_as_configured(
    chat_sandbox: SandboxServer, data: st.DataObject
):
    chat_sandbox.state.reset(config=True)
    chat_sandbox.state.configure(
        route_limits={"POST /guilds/{guild_id}/roles": UNLIMITED, "POST /guilds/{guild_id}/channels": UNLIMITED}
    )
    client = new_chat_client(chat_settings_for(chat_sandbox.base_url))
    fresh = itertools.count(100)
    wanted = START
    try:
        for _ in range(data.draw(st.integers(1, 5))):
            read = deploy_confirmed(client, wanted)
            assert without_new_ids(read, wanted) == shape(wanted)
            wanted = edit(read, data, fresh)
        read = deploy_confirmed(client, wanted)
        assert without_new_ids(read, wanted) == shape(wanted)
    finally:
        client.session.close()


def deploy_confirmed(client: Any, wanted: dict[str, Any]) -> dict[str, Any]:
    """Dry run with prune, deploy with that plan's deletions only, and the server read back as a configuration."""
    config = ServerConfig.model_validate(wanted)
    dry = plan_deployment(read_live_guild(client, BUILD_GUILD), config, prune=True)
    live = read_live_guild(client, BUILD_GUILD)
    plan = plan_deployment(live, config, prune=True, confirmed_deletes=[item.id for item in dry.deletes() if item.id])
    assert plan.plan_id == dry.plan_id
    assert preflight_problems(live, plan) == []
    outcomes: list[StepOutcome] = []
    PlanApplier(client, BUILD_GUILD, plan, audit_reason="property").run(
        skip=set(), checkpoint=outcomes.append, has_time=lambda: True
    )
    assert [outcome.errors for outcome in outcomes if outcome.errors] == []
    live = read_live_guild(client, BUILD_GUILD)
    assert plan_deployment(live, config, prune=True).steps == []  # converged: the same deploy writes nothing
    return export_config(live, live.settings).config.model_dump(mode="json", exclude_none=True)
