"""Configuration v4's caller rights through deployToChat, in the rights lab (a Community server): AutoMod rules and
onboarding need what the platform asks of a person (MANAGE_GUILD for both, MANAGE_ROLES for onboarding,
MODERATE_MEMBERS for a rule's timeout action, and an option hands out only roles below the caller's highest), each
refusal one detail per object, and nothing written."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.chat_sandbox import BOB_ID, CAROL_ID, DAVE_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link, writes
from tests.helpers.handlers import bearer

LAB_NAME = "Carol's Rights Lab"
# bob holds Managers (MANAGE_GUILD only); dave holds Helpers, the lab's lowest role (MANAGE_GUILD, MANAGE_ROLES,
# MANAGE_CHANNELS); carol owns the lab.
CALLERS = {"bob": BOB_ID, "dave": DAVE_ID, "carol": CAROL_ID}


@pytest.fixture
def lab(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    for web_user, chat_user in CALLERS.items():
        link(invoke, platform, user=f"web-{web_user}", chat_user=chat_user)
    platform.clear_log()
    return platform


def deploy(invoke, who: str, config: dict[str, Any]):
    return invoke("deployToChat", deploy_body(RIGHTS_LAB, config), headers=bearer(f"web-{who}"))


def invite_filter(*actions: dict[str, Any]) -> dict[str, Any]:
    return {"name": "Invite links", "trigger": "keyword", "keywords": ["discord.gg*"], "actions": list(actions)}


def region_question(role: str) -> dict[str, Any]:
    return {
        "enabled": False,
        "prompts": [{"title": "Where do you play?", "options": [{"title": "Anywhere", "roles": [role]}]}],
    }


def test_a_manage_guild_only_manager_is_refused_the_timeout_action_and_onboarding_per_object(invoke, lab):
    config = {
        "name": LAB_NAME,
        "roles": [{"name": "Members"}],
        "automod": [invite_filter({"type": "block"}, {"type": "timeout", "seconds": 600})],
        "onboarding": region_question("Members"),
    }

    refused = deploy(invoke, "bob", config)

    assert refused.status == 403, refused.body
    reasons = {detail["field"]: detail["message"] for detail in refused.body["details"]}
    assert reasons == {
        "automod[0].actions": "you need MODERATE_MEMBERS for a timeout action",
        "onboarding": "you need MANAGE_ROLES to change onboarding",
    }
    assert writes(lab) == []


def test_an_option_may_hand_out_only_roles_below_the_callers_highest(invoke, lab, aws):
    refused = deploy(
        invoke, "dave", {"name": LAB_NAME, "roles": [{"name": "Members"}], "onboarding": region_question("Members")}
    )

    assert refused.status == 403, refused.body
    assert [(d["field"], d["message"]) for d in refused.body["details"]] == [
        ("onboarding", "role 'Members' is not below your highest role: an option cannot hand it out")
    ]
    assert writes(lab) == []
    # The same rule without a timeout is dave's to make: he holds MANAGE_GUILD
    queued = deploy(invoke, "dave", {"name": LAB_NAME, "automod": [invite_filter({"type": "block"})]})
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    rules = [r for r in lab.guild(RIGHTS_LAB).get("automod_rules", {}).values() if r["name"] == "Invite links"]
    assert [rule["trigger_metadata"]["keyword_filter"] for rule in rules] == [["discord.gg*"]]
