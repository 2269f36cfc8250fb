"""A deployment's snapshot, stored by a real deploy (deployToChat and its worker against the sandbox and moto), read
back as a backup format (`platform`): every category with its channels, the settings and the v4 objects, equal to
the export taken just before that deploy."""

from __future__ import annotations

from typing import Any

import pytest

from svcconf.backups import archive
from svcconf.backups.formats import read_backup
from svcconf.config import ServerConfig
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link
from tests.helpers.handlers import bearer

USER = "web-user-1"
BUILD_LAB = "1191000000000001005"  # an empty guild of alice's, with COMMUNITY
ROOMS = ["general", "lfg", "clips"]


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    return platform


def call(invoke, body: dict[str, Any]) -> Any:
    return invoke("deployToChat", body, headers=bearer(USER))


def deploy(invoke, aws, config: dict[str, Any]) -> dict[str, Any]:
    queued = call(invoke, deploy_body(BUILD_LAB, config))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = call(invoke, {"action": "info", "project_id": "proj-1", "guild_id": BUILD_LAB})
    assert info.body["status"] == "succeeded", info.body
    return info.body


def server() -> dict[str, Any]:
    """Two categories (one private) with channels, a channel outside them, settings and the v4 objects."""
    return {
        "name": "Arcade",
        "settings": {"verification_level": "medium", "system_channel": "general"},
        "roles": [{"name": "Mods", "permissions": ["MANAGE_MESSAGES"]}],
        "categories": [
            {"name": "Play", "channels": [{"name": room} for room in ROOMS]},
            {
                "name": "Staff",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                ],
                "channels": [{"name": "mod-log"}, {"name": "Staff voice", "type": "voice"}],
            },
        ],
        "channels": [{"name": "rules"}],
        "automod": [
            {
                "name": "Invite links",
                "trigger": "keyword",
                "keywords": ["discord.gg*"],
                "actions": [{"type": "block"}, {"type": "alert", "channel": "mod-log"}],
                "exempt_channels": ["mod-log"],
            }
        ],
        "welcome_screen": {"description": "Hi", "channels": [{"channel": "general", "description": "Say hello"}]},
    }


def test_a_deployments_snapshot_reads_back_as_the_server_it_was(invoke, linked, aws):
    # Given a server with categories, channels, settings and v4 objects, and its export
    deploy(invoke, aws, server())
    exported = call(invoke, {"action": "export", "guild_id": BUILD_LAB})
    assert exported.status == 200, exported.body
    before = ServerConfig.model_validate(exported.body["config"]).model_dump(mode="json", exclude_none=True)
    # When the next deploy stores its snapshot of that server first
    changed = server()
    changed["channels"].append({"name": "announcements-2"})
    info = deploy(invoke, aws, changed)
    stored = archive.get_backup(info["backup_id"]).backup_data
    assert stored["kind"] == "deployment-snapshot"
    assert [c["name"] for c in stored["categories"]] == ["Play", "Staff"]
    # Then read as a backup format it is the platform's, restorable, and its configuration is the export: every
    # category with its channels and overwrites, the settings and the v4 objects
    reading = read_backup(stored)
    assert (reading.format, reading.restorable, reading.problems) == ("platform", True, [])
    assert reading.config is not None
    read = reading.config.model_dump(mode="json", exclude_none=True)
    assert {c["name"]: [ch["name"] for ch in c["channels"]] for c in read["categories"]} == {
        "Play": ROOMS,
        "Staff": ["mod-log", "Staff voice"],
    }
    assert read == before
