"""deployToChat: a role an onboarding option hands out counts as granted to @everyone (docs/05-deploy-engine.md):
anyone who joins may pick it. Its dangerous permissions need the same acknowledgement as giving them to @everyone,
compared per matched object (the server's onboarding already handing out the same role with them needs none), and it
must be strictly below the bot's highest role (the preflight's 409)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.deploy_worker import DeployQueue, deploy_body, link, writes
from tests.helpers.handlers import bearer
from tests.integration.test_deploy_v4 import BUILD_LAB, ROOMS

USER = "web-user-1"
RULE = "onboarding-dangerous-role"
FIELD = "onboarding.prompts[0].options[1].roles[0]"


def server(helpers: list[str], *, handed_out: bool = True) -> dict[str, Any]:
    """Seven open rooms, a harmless EU role and Helpers with `helpers`; onboarding offers EU, and Helpers if
    `handed_out`."""
    options = [{"title": "Europe", "roles": ["EU"]}]
    if handed_out:
        options.append({"title": "I want to help", "roles": ["Helpers"]})
    else:
        options.append({"title": "Just looking", "channels": ["general"]})
    return {
        "name": "Arcade",
        "roles": [{"name": "Helpers", "permissions": helpers}, {"name": "EU"}],
        "channels": [{"name": room} for room in ROOMS],
        "onboarding": {
            "enabled": True,
            "default_channels": ROOMS,
            "prompts": [{"title": "Who are you?", "options": options}],
        },
    }


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def call(invoke, body: dict[str, Any]):
    return invoke("deployToChat", body, headers=bearer(USER))


def deploy(invoke, aws, config: dict[str, Any], **extra: Any) -> None:
    queued = call(invoke, deploy_body(BUILD_LAB, config, **extra))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    info = call(invoke, {"action": "info", "project_id": "proj-1", "guild_id": BUILD_LAB})
    assert info.body["status"] == "succeeded", info.body


def handed_out(platform) -> list[str]:
    guild = platform.guild(BUILD_LAB)
    names = {role["id"]: role["name"] for role in guild["roles"].values()}
    options = [o for p in guild["onboarding"]["prompts"] for o in p["options"]]
    return sorted(names[r] for o in options for r in o["role_ids"])


def test_handing_out_a_role_with_a_dangerous_permission_needs_the_acknowledgement_everyone_would(invoke, linked, aws):
    config = server(["KICK_MEMBERS", "MANAGE_MESSAGES", "SEND_MESSAGES"])
    # The dry run says it as a warning
    dry = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True))
    assert dry.status == 200, dry.body
    assert {(w["field"], w["rule"]) for w in dry.body["warnings"]} >= {(FIELD, RULE)}
    # The deploy without acknowledge is a 409 naming the option's role and exactly its dangerous permissions
    refused = call(invoke, deploy_body(BUILD_LAB, config))
    assert refused.status == 409, refused.body
    assert [(d["field"], d["rule"]) for d in refused.body["details"]] == [(FIELD, RULE)]
    assert "KICK_MEMBERS and MANAGE_MESSAGES" in refused.body["details"][0]["message"]
    assert "SEND_MESSAGES" not in refused.body["details"][0]["message"]
    assert writes(linked) == []
    # With it, the deploy goes through and the onboarding hands the role out
    deploy(invoke, aws, config, acknowledge=[RULE])
    assert handed_out(linked) == ["EU", "Helpers"]
    # And deploying the same again needs none: the server's onboarding already hands it out with them
    again = call(invoke, deploy_body(BUILD_LAB, config))
    assert again.status == 202, again.body
    DeployQueue(aws).drain()


def test_a_new_dangerous_permission_on_a_role_already_handed_out_needs_it_and_names_only_what_is_new(
    invoke, linked, aws
):
    deploy(invoke, aws, server(["KICK_MEMBERS"]), acknowledge=[RULE])
    refused = call(invoke, deploy_body(BUILD_LAB, server(["KICK_MEMBERS", "BAN_MEMBERS"])))
    assert refused.status == 409, refused.body
    assert [d["field"] for d in refused.body["details"]] == [FIELD]
    message = refused.body["details"][0]["message"]
    assert "BAN_MEMBERS" in message
    assert "KICK_MEMBERS" not in message


def test_a_role_the_server_already_has_with_the_permission_is_a_new_grant_once_onboarding_hands_it_out(
    invoke, linked, aws
):
    # Given Helpers with KICK_MEMBERS on the server, handed out by no option (no acknowledgement needed for it)
    deploy(invoke, aws, server(["KICK_MEMBERS"], handed_out=False))
    linked.clear_log()
    # When onboarding starts handing it out, Then that is new for @everyone: 409 and no write
    refused = call(invoke, deploy_body(BUILD_LAB, server(["KICK_MEMBERS"])))
    assert refused.status == 409, refused.body
    assert [(d["field"], d["rule"]) for d in refused.body["details"]] == [(FIELD, RULE)]
    assert writes(linked) == []


def test_a_harmless_role_handed_out_needs_nothing(invoke, linked, aws):
    deploy(invoke, aws, server(["SEND_MESSAGES", "ATTACH_FILES"]))
    assert handed_out(linked) == ["EU", "Helpers"]


def test_a_role_at_or_above_the_bots_highest_cannot_be_handed_out_the_preflights_409_with_no_write(invoke, linked, aws):
    # Given Helpers deployed, then raised above the bot's role by a person
    deploy(invoke, aws, server([], handed_out=False))
    with linked.lock:
        roles = linked.guilds[BUILD_LAB]["roles"]
        helpers = next(role for role in roles.values() if role["name"] == "Helpers")
        helpers["position"] = max(role["position"] for role in roles.values()) + 1
    linked.clear_log()
    # When onboarding would hand it out, Then the preflight refuses before any write, naming onboarding
    refused = call(invoke, deploy_body(BUILD_LAB, server([])))
    assert refused.status == 409, refused.body
    messages = [d["message"] for d in refused.body["details"] if d["field"] == "onboarding"]
    assert any("'Helpers' is not below the bot's highest role" in m for m in messages), refused.body
    assert writes(linked) == []
