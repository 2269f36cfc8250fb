"""deployToChat `import` and configuration v4: what a native template or a backup format cannot hold (AutoMod rules,
onboarding, the welcome screen; discord-backup also gradient colours) is one warning per kind, naming the field, and
deploying the import leaves the server's own as they are, with `prune` too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.deploy_worker import DeployQueue, deploy_body, link
from tests.helpers.handlers import bearer
from tests.integration.test_deploy_v4 import BUILD_LAB, community, with_feature

USER = "web-user-1"
DATA = Path(__file__).parents[1] / "data" / "backups"
COMMUNITY_FIELDS = ["automod", "onboarding", "welcome_screen"]


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def call(invoke, body: dict[str, Any]):
    return invoke("deployToChat", body, headers=bearer(USER))


def not_carried(answer: dict[str, Any]) -> list[str]:
    return [w["field"] for w in answer["warnings"] if w["rule"] == "not-carried"]


def test_a_template_import_says_once_each_what_a_template_cannot_hold(invoke, linked):
    answer = call(invoke, {"action": "import", "template": "discord.new/svcGameNight"})

    assert answer.status == 200, answer.body
    assert not_carried(answer.body) == COMMUNITY_FIELDS
    assert not set(COMMUNITY_FIELDS) & set(answer.body["config"])
    automod = next(w for w in answer.body["warnings"] if w["field"] == "automod")
    assert "leaves the server's AutoMod rules as they are, with `prune` too" in automod["message"]


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("configuration", []),
        ("discord-backup", [*COMMUNITY_FIELDS, "roles"]),
        ("template", COMMUNITY_FIELDS),
        ("platform", COMMUNITY_FIELDS),
    ],
)
def test_each_data_format_says_once_each_what_it_cannot_hold(invoke, linked, name: str, fields: list[str]):
    data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))

    answer = call(invoke, {"action": "import", "data": data})

    assert answer.status == 200, answer.body
    assert not_carried(answer.body) == fields


def test_deploying_an_import_with_prune_leaves_the_servers_automod_onboarding_and_welcome_screen(invoke, linked, aws):
    # Given a Community guild with AutoMod rules, onboarding, a welcome screen and a scratch channel
    with_feature(linked, "ENHANCED_ROLE_COLORS", True)
    queued = call(
        invoke, deploy_body(BUILD_LAB, {**community(), "channels": [*community()["channels"], {"name": "scratch"}]})
    )
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    before = linked.guild(BUILD_LAB)
    # When a template's import, beside the roles and channels the community's v4 objects name (a prune deleting
    # those is another matter), is deployed to it with prune, confirmed
    imported = call(invoke, {"action": "import", "template": "discord.new/svcGameNight"}).body["config"]
    imported["roles"] += community()["roles"]
    ours = community()["channels"]
    taken = {channel["name"] for channel in ours}
    for holder in [imported, *imported["categories"]]:
        holder["channels"] = [channel for channel in holder["channels"] if channel["name"] not in taken]
    imported["channels"] += ours
    dry = call(invoke, deploy_body(BUILD_LAB, imported, dry_run=True, prune=True, project_id="proj-2"))
    assert dry.status == 200, dry.body
    kinds = {item["kind"] for item in dry.body["plan"] if item["action"] != "keep"}
    deleted = [item["name"] for item in dry.body["plan"] if item["action"] == "delete"]
    queued = call(
        invoke, deploy_body(BUILD_LAB, imported, prune=True, confirm=dry.body["plan_id"], project_id="proj-2")
    )
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    # Then the plan touched none of them, and the server holds its own as they were
    assert not kinds & {"automod_rule", "onboarding", "welcome_screen"}
    after = linked.guild(BUILD_LAB)
    assert after["automod_rules"] == before["automod_rules"]
    assert after["onboarding"] == before["onboarding"]
    assert after["welcome_screen"] == before["welcome_screen"]
    # while the prune deleted the channel the configuration left out, and the template's roles were made
    assert deleted == ["scratch"]
    assert "scratch" not in {channel["name"] for channel in after["channels"].values()}
    assert {"Squad Lead", "Mods"} <= {role["name"] for role in after["roles"].values()}
