"""A caller's deploy keeps the v4 objects' references to channels they cannot view (docs/05-deploy-engine.md),
through deployToChat against the sandbox's rights lab: the owner (carol) sets up an AutoMod rule exempting and
alerting staff-secrets, onboarding with staff-secrets as a default and an option's channel, and a welcome screen
showing it; dave manages the server but cannot view staff-secrets. His export leaves it out; his deploy of that
export with one rule's keywords changed keeps every reference to it on the platform, and his dry run never names it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers.chat_sandbox import CAROL_ID, DAVE_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link, writes
from tests.helpers.handlers import bearer

LOUNGE, STAFF_SECRETS = "1191000000000003063", "1191000000000003064"
CALLERS = {"carol": CAROL_ID, "dave": DAVE_ID}


@pytest.fixture
def lab(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    for web_user, chat_user in CALLERS.items():
        link(invoke, platform, user=f"web-{web_user}", chat_user=chat_user)
    platform.clear_log()
    return platform


def call(invoke, who: str, body: dict[str, Any]) -> Any:
    return invoke("deployToChat", body, headers=bearer(f"web-{who}"))


def export(invoke, who: str) -> dict[str, Any]:
    answer = call(invoke, who, {"action": "export", "guild_id": RIGHTS_LAB})
    assert answer.status == 200, answer.body
    return answer.body["config"]


def deploy(invoke, aws, who: str, config: dict[str, Any]) -> None:
    queued = call(invoke, who, deploy_body(RIGHTS_LAB, config))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = call(invoke, who, {"action": "info", "project_id": "proj-1", "guild_id": RIGHTS_LAB})
    assert info.body["status"] == "succeeded", info.body


def owners_community(config: dict[str, Any]) -> dict[str, Any]:
    """The owner's export with a rule, onboarding and a welcome screen naming lounge and staff-secrets."""
    return {
        **config,
        "automod": [
            {
                "name": "Invite links",
                "trigger": "keyword",
                "keywords": ["discord.gg*"],
                "actions": [{"type": "block"}, {"type": "alert", "channel": "staff-secrets"}],
                "exempt_channels": ["lounge", "staff-secrets"],
            }
        ],
        "onboarding": {
            "enabled": False,
            "default_channels": ["lounge", "staff-secrets"],
            "prompts": [
                {
                    "title": "What brings you here?",
                    "options": [{"title": "Helping out", "channels": ["staff-secrets", "lounge"]}],
                }
            ],
        },
        "welcome_screen": {
            "description": "Welcome to the lab",
            "channels": [
                {"channel": "staff-secrets", "description": "Read the raise list"},
                {"channel": "lounge", "description": "Say hello"},
            ],
        },
    }


def test_a_deploy_by_a_caller_keeps_the_references_to_channels_they_cannot_view(invoke, lab, aws):
    # Given the owner's rule, onboarding and welcome screen naming staff-secrets, which dave cannot view
    deploy(invoke, aws, "carol", owners_community(export(invoke, "carol")))
    before = copy.deepcopy(lab.guild(RIGHTS_LAB))
    [rule] = before["automod_rules"].values()
    assert STAFF_SECRETS in rule["exempt_channels"]
    assert STAFF_SECRETS in before["onboarding"]["default_channel_ids"]

    # When dave exports the server: staff-secrets and every reference to it are left out
    seen = export(invoke, "dave")
    assert "staff-secrets" not in str(seen)
    assert STAFF_SECRETS not in str(seen)
    assert seen["automod"][0]["exempt_channels"] == ["lounge"]
    assert seen["automod"][0]["actions"] == [{"type": "block"}]
    assert seen["onboarding"]["default_channels"] == ["lounge"]

    # And he changes the rule's keywords: his dry run changes the keywords alone and names no hidden channel
    seen["automod"][0]["keywords"] = ["discord.gg*", "dsc.gg*"]
    dry = call(invoke, "dave", deploy_body(RIGHTS_LAB, seen, dry_run=True))
    assert dry.status == 200, dry.body
    changed = [item for item in dry.body["plan"] if item["action"] != "keep"]
    assert [(i["kind"], i["name"], [c["field"] for c in i["changes"]]) for i in changed] == [
        ("automod_rule", "Invite links", ["keywords"])
    ]
    assert "staff-secrets" not in str(dry.body)
    assert STAFF_SECRETS not in str(dry.body)

    # And he deploys it
    lab.clear_log()
    deploy(invoke, aws, "dave", seen)

    # Then the platform's rule has the new keywords and still exempts and alerts staff-secrets, in their places
    after = lab.guild(RIGHTS_LAB)
    [rule_after] = after["automod_rules"].values()
    assert rule_after["trigger_metadata"]["keyword_filter"] == ["discord.gg*", "dsc.gg*"]
    assert sorted(rule_after["exempt_channels"]) == sorted([LOUNGE, STAFF_SECRETS])
    assert rule_after["actions"] == rule["actions"]
    # And onboarding and the welcome screen were not written: they are as the owner left them
    assert after["onboarding"] == before["onboarding"]
    assert after["welcome_screen"] == before["welcome_screen"]
    assert [method for method, _ in writes(lab)] == ["PATCH"]  # the rule's one update


def test_a_callers_onboarding_and_welcome_screen_changes_keep_the_hidden_channels_where_they_were(invoke, lab, aws):
    # Given the owner's community naming staff-secrets
    deploy(invoke, aws, "carol", owners_community(export(invoke, "carol")))
    before = copy.deepcopy(lab.guild(RIGHTS_LAB))
    # When dave, who cannot view it, changes onboarding's prompt and the welcome screen's description
    seen = export(invoke, "dave")
    seen["onboarding"]["prompts"][0]["options"].append({"title": "Just looking", "channels": ["lounge"]})
    seen["welcome_screen"]["description"] = "Welcome, all"
    dry = call(invoke, "dave", deploy_body(RIGHTS_LAB, seen, dry_run=True))
    assert dry.status == 200, dry.body
    assert "staff-secrets" not in str(dry.body)
    assert STAFF_SECRETS not in str(dry.body)
    changes = {i["kind"]: [c["field"] for c in i["changes"]] for i in dry.body["plan"] if i["action"] != "keep"}
    assert changes == {"onboarding": ["prompts"], "welcome_screen": ["description"]}
    deploy(invoke, aws, "dave", seen)
    # Then staff-secrets stays a default channel, an option's channel and the welcome screen's first channel
    after = lab.guild(RIGHTS_LAB)
    assert after["onboarding"]["default_channel_ids"] == before["onboarding"]["default_channel_ids"]
    options = {o["title"]: sorted(o["channel_ids"]) for o in after["onboarding"]["prompts"][0]["options"]}
    assert options == {"Helping out": sorted([STAFF_SECRETS, LOUNGE]), "Just looking": [LOUNGE]}
    assert after["welcome_screen"]["description"] == "Welcome, all"
    assert after["welcome_screen"]["welcome_channels"] == before["welcome_screen"]["welcome_channels"]
