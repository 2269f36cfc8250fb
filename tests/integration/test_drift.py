"""deployToChat `info` with `drift: true`: after a second actor's three changes (a channel renamed, a role
recoloured, a channel added), the drift names exactly those three as plan items. It compares what the
deployment's configuration states (an attribute it left out is the server's to change)."""

from __future__ import annotations

import copy

import pytest

from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import deploy_body, link
from tests.helpers.rollbacks import BASE, call, finished


@pytest.fixture
def deployed(invoke, platform, function_environment, aws):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    assert call(invoke, deploy_body(BUILD_GUILD, BASE)).status == 202
    assert finished(invoke, aws)["status"] == "succeeded"
    return platform


def drift(invoke) -> list[dict]:
    answer = call(invoke, {"action": "info", "project_id": "proj-1", "drift": True})
    assert answer.status == 200, answer.body
    return answer.body["drift"]


def test_drift_names_a_second_actors_three_changes(invoke, deployed):
    guild = deployed.guilds[BUILD_GUILD]
    assert drift(invoke) == []
    with deployed.lock:
        next(c for c in guild["channels"].values() if c["name"] == "memes")["name"] = "dank-memes"
        next(r for r in guild["roles"].values() if r["name"] == "Mods")["color"] = 0x00FF00
        lobby = next(c for c in guild["channels"].values() if c["name"] == "Lobby")
        guild["channels"]["1191000000000009901"] = {
            **copy.deepcopy(lobby),
            "id": "1191000000000009901",
            "name": "side-room",
            "type": 0,
            "parent_id": lobby["id"],
            "position": 9,
        }
        deployed.channel_guild["1191000000000009901"] = BUILD_GUILD

    items = drift(invoke)

    summary = sorted((i["kind"], i["name"], i["action"], i["deployment_id"]) for i in items)
    assert summary == [
        ("channel", "Lobby / memes", "update", None),
        ("channel", "Lobby / side-room", "delete", None),
        ("role", "Mods", "update", None),
    ]
    memes = next(i for i in items if i["name"] == "Lobby / memes")
    assert {"field": "name", "old": "dank-memes", "new": "memes"} in memes["changes"]


def test_drift_is_of_the_deployment_info_answers_the_newest(invoke, deployed, aws):
    config = copy.deepcopy(BASE)
    config["roles"][1] = {**config["roles"][1], "color": 0x123456}
    first = call(invoke, {"action": "info", "project_id": "proj-1"}).body["deployment_id"]
    assert call(invoke, deploy_body(BUILD_GUILD, config)).status == 202
    later = finished(invoke, aws)["deployment_id"]

    answer = call(invoke, {"action": "info", "project_id": "proj-1", "drift": True})

    assert answer.body["deployment_id"] == later != first
    assert answer.body["drift"] == []  # the newest is the one `info` answers: nothing changed since it
