"""Configurations in answers leave out null fields (null and absent mean "as the server has it"): svcAiChat, export,
import and getConfigByCode; what a request sends with nulls is still accepted (docs/05-deploy-engine.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from svcconf import codes
from svcconf.config import ServerConfig
from tests.helpers.ai_chat import ask, user
from tests.helpers.deploy_worker import DEMO, USER, DeployQueue, deploy_body, link
from tests.helpers.handlers import bearer

WITH_NULLS = {
    "name": "Study Hall",
    "description": None,
    "settings": None,
    "roles": [{"name": "Tutors", "emoji": None}],
    "categories": [{"name": "Rooms", "channels": [{"name": "maths", "topic": None, "user_limit": None}]}],
    "channels": [{"name": "Lounge", "type": "voice", "user_limit": 5, "bitrate": None}],
}


def nulls(value: Any, path: str = "") -> Iterator[str]:
    """The path of every null member of an object, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None:
                yield f"{path}.{key}"
            yield from nulls(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nulls(item, f"{path}[{index}]")


BUILD_LAB = "1191000000000001005"  # an empty guild of alice's


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    return platform


def test_an_export_leaves_out_null_fields_and_keeps_every_value(invoke, linked) -> None:
    response = invoke("deployToChat", {"action": "export", "guild_id": DEMO}, headers=bearer(USER))

    assert response.status == 200, response.body
    config = response.body["config"]
    assert list(nulls(config)) == []
    # Nothing but nulls went: the schema reads it back to the same configuration.
    assert ServerConfig.model_validate(config).model_dump(mode="json", exclude_none=True) == config
    channels = [*(c for category in config["categories"] for c in category["channels"]), *config["channels"]]
    assert channels, "the demo guild has channels"
    assert all("user_limit" not in channel for channel in channels if channel["type"] == "text")


def test_an_import_leaves_out_null_fields(invoke, linked) -> None:
    from local.chat_sandbox.routes.templates import templates as sandbox_templates

    code = next(iter(sandbox_templates()))
    response = invoke("deployToChat", {"action": "import", "template": code}, headers=bearer(USER))

    assert response.status == 200, response.body
    assert response.body["config"]["name"]
    assert list(nulls(response.body["config"])) == []


def test_get_config_by_code_answers_a_stored_configuration_without_its_nulls(invoke) -> None:
    minted = codes.mint_code("proj-1", "Study Hall", ServerConfig.model_validate(WITH_NULLS))

    response = invoke("getConfigByCode", {"code": minted.code})

    assert response.status == 200
    assert response.body["configuration"] == {
        "name": "Study Hall",
        "roles": [{"name": "Tutors", "color": 0, "hoist": False, "mentionable": False, "permissions": []}],
        "categories": [
            {
                "name": "Rooms",
                "overwrites": [],
                "channels": [{"name": "maths", "type": "text", "nsfw": False, "overwrites": []}],
            }
        ],
        "channels": [{"name": "Lounge", "type": "voice", "nsfw": False, "user_limit": 5, "overwrites": []}],
    }


def test_svc_ai_chat_takes_a_configuration_with_nulls_and_answers_it_without(invoke, chat) -> None:
    response = ask(invoke, {"messages": [user("Add a voice channel named Raid Night.")], "currentConfig": WITH_NULLS})

    assert response.status == 200, response.body
    config = response.body["config"]
    assert config["name"] == "Study Hall"
    assert list(nulls(config)) == []
    for change in response.body["changes"]:
        assert list(nulls(change["old"])) == list(nulls(change["new"])) == []


def test_info_answers_the_deployed_configuration_without_its_nulls(invoke, linked, aws) -> None:
    queued = invoke("deployToChat", deploy_body(BUILD_LAB, WITH_NULLS), headers=bearer(USER))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()

    info = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER))

    assert info.body["status"] == "succeeded", info.body
    config = info.body["config"]
    assert [channel["name"] for channel in config["channels"]] == ["Lounge"]
    assert config["channels"][0]["user_limit"] == 5
    assert list(nulls(config)) == []
