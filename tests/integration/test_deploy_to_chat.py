"""deployToChat against the sandbox and moto: who may deploy where, the preflight, the queued deployment, the
worker that applies it, the code it mints, info and rollback refusals."""

from __future__ import annotations

from typing import Any

import pytest

from svcconf.settings import get_settings
from svcconf.store.deployment_records import DeploymentRepository
from tests.helpers.deploy_worker import (
    ALICE,
    DEMO,
    LOCKED,
    QUIET,
    USER,
    WORKSHOP,
    DeployQueue,
    deploy_body,
    link,
    live_channels,
    live_roles,
    writes,
)
from tests.helpers.handlers import BOT_TOKEN, bearer

CONFIG: dict[str, Any] = {
    "name": "Demo",
    "roles": [
        {"name": "Helper", "color": "#2ECC71", "hoist": True, "permissions": ["SEND_MESSAGES", "CONNECT"]},
        {"name": "Guest", "permissions": ["VIEW_CHANNEL"]},
    ],
    "categories": [
        {
            "name": "Help Desk",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Helper", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": "Open Tickets", "topic": "One ticket per thread", "slowmode_seconds": 10}],
        }
    ],
    "channels": [{"name": "Voice Lobby", "type": "voice", "user_limit": 5}],
}


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def deploy(invoke, guild_id: str = DEMO, config: dict[str, Any] = CONFIG, user: str = USER, **extra: Any):
    return invoke("deployToChat", deploy_body(guild_id, config, **extra), headers=bearer(user))


def test_a_dry_run_answers_the_plan_counts_and_warnings_and_changes_nothing(invoke, linked, aws):
    response = deploy(invoke, dry_run=True)

    assert response.status == 200, response.body
    body = response.body
    assert (body["ok"], body["status"]) == (True, "planned")
    assert body["steps"]["roles"] == {
        "planned": 2,
        "created": 0,
        "updated": 0,
        "existing": 0,
        "deleted": 0,
        "failed": 0,
    }
    assert body["steps"]["channels"]["planned"] == 2
    assert body["steps"]["overwrites"]["planned"] == 4
    assert body["plan"][0] == {
        "kind": "role",
        "name": "Helper",
        "action": "create",
        "id": None,
        "changes": [],
        "field": "roles[0]",
        "note": None,
    }
    assert {(item["kind"], item["name"]) for item in body["plan"] if item["kind"] == "channel"} == {
        ("channel", "Help Desk / Open Tickets"),
        ("channel", "Voice Lobby"),
    }
    assert isinstance(body["warnings"], list)
    assert writes(linked) == []
    assert DeployQueue(aws).waiting() == 0
    assert "deployment_code" not in body


def test_a_deploy_is_queued_with_its_generation_and_a_code_then_the_worker_applies_it(invoke, linked, aws):
    response = deploy(invoke)

    assert response.status == 202, response.body
    body = response.body
    assert (body["ok"], body["status"], body["kind"]) == (True, "queued", "deploy")
    assert body["generation"]["project_id"] == "proj-1"
    assert body["generation"]["guild_name"] == "Svc Demo Guild"
    assert body["generation"]["status"] == "queued"
    assert body["steps"]["roles"]["planned"] == 2
    assert writes(linked) == [], "nothing is written before the worker runs"

    DeployQueue(aws).drain()

    roles, channels = live_roles(linked, DEMO), live_channels(linked, DEMO)
    assert roles["Helper"]["hoist"] is True
    assert roles["Helper"]["color"] == 0x2ECC71
    assert channels["open-tickets"]["topic"] == "One ticket per thread"
    assert channels["open-tickets"]["rate_limit_per_user"] == 10
    assert channels["open-tickets"]["parent_id"] == channels["Help Desk"]["id"]
    assert {o["id"] for o in channels["open-tickets"]["permission_overwrites"]} == {DEMO, roles["Helper"]["id"]}
    assert channels["Voice Lobby"]["user_limit"] == 5
    info = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body
    assert info["status"] == "succeeded"
    assert info["steps"]["roles"]["created"] == 2
    assert info["steps"]["categories"]["created"] == 1
    assert info["steps"]["channels"]["created"] == 2
    assert info["steps"]["overwrites"]["created"] == 4
    assert info["generation"]["result"].startswith("Created 2 roles, 1 category, 2 channels, 4 overwrites")
    assert info["backup_id"]
    assert info["deployment_code"] == body["deployment_code"]


def test_the_same_deploy_again_sends_no_write_request(invoke, linked, aws):
    deploy(invoke)
    DeployQueue(aws).drain()
    linked.clear_log()

    again = deploy(invoke)
    DeployQueue(aws).drain()

    assert again.status == 202
    assert writes(linked) == []
    info = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body
    assert info["status"] == "succeeded"
    assert info["steps"]["roles"] == {
        "planned": 0,
        "created": 0,
        "updated": 0,
        "existing": 2,
        "deleted": 0,
        "failed": 0,
    }


def test_the_deployment_code_is_bound_to_the_chat_user_and_works_once(invoke, linked, aws):
    code = deploy(invoke).body["deployment_code"]
    bot = {"x-bot-token": BOT_TOKEN}

    other_user = invoke("getConfigByCode", {"code": code, "user_id": "1191000000000000102"}, headers=bot)
    first = invoke("getConfigByCode", {"code": code, "user_id": ALICE, "consume": True}, headers=bot)
    second = invoke("getConfigByCode", {"code": code, "consume": True}, headers=bot)

    assert other_user.status == 403
    assert first.status == 200
    assert first.body["configuration"]["roles"][0]["name"] == "Helper"
    assert first.body["project_name"] == "Test project"
    assert second.status == 404


def test_a_second_deploy_while_one_is_queued_is_refused_409(invoke, linked, aws):
    first = deploy(invoke)
    second = deploy(invoke)

    assert first.status == 202
    assert second.status == 409
    assert second.body["error"] == "Conflict"
    assert "still running" in second.body["message"]
    assert DeployQueue(aws).waiting() == 1


def test_the_preflight_refuses_what_the_bot_cannot_grant_before_anything_is_queued(invoke, linked, aws):
    config = {**CONFIG, "roles": [{"name": "Bouncer", "permissions": ["KICK_MEMBERS", "BAN_MEMBERS"]}]}
    config["categories"] = []

    response = deploy(invoke, config=config)

    assert response.status == 409, response.body
    assert response.body["details"] == [
        {"field": "roles[0].permissions", "message": "grants KICK_MEMBERS, BAN_MEMBERS, which the bot does not hold"}
    ]
    assert writes(linked) == []
    assert DeployQueue(aws).waiting() == 0
    repository = DeploymentRepository(get_settings().deployments_table)
    assert repository.newest(USER, "proj-1") is None


def test_a_dry_run_shows_the_settings_that_differ_field_by_field_in_the_configurations_names(invoke, linked, aws):
    settings = {"verification_level": "high", "afk_timeout": 900, "preferred_locale": "de"}
    config = {"name": "Svc Demo Guild", "settings": settings}

    response = deploy(invoke, config=config, dry_run=True)

    assert response.status == 200, response.body
    assert response.body["plan"] == [
        {
            "kind": "settings",
            "name": "server settings",
            "action": "update",
            "changes": [
                {"field": "verification_level", "old": "low", "new": "high"},
                {"field": "preferred_locale", "old": "en-US", "new": "de"},
            ],
            "field": "settings",
            "id": None,
            "note": None,
        }
    ]
    assert response.body["steps"]["settings"]["planned"] == 1
    assert writes(linked) == []


def test_the_preflight_refuses_role_emoji_where_the_guild_lacks_role_icons(invoke, linked, aws):
    config = {"name": "Demo", "roles": [{"name": "Shiny", "emoji": "✨"}]}

    response = deploy(invoke, config=config)

    assert response.status == 409, response.body
    assert response.body["details"] == [
        {"field": "roles[0].emoji", "message": "role emoji need the server feature ROLE_ICONS"}
    ]
    assert writes(linked) == []


def test_the_preflight_refuses_a_configuration_past_the_role_cap(invoke, linked, aws):
    config = {"name": "Too many", "roles": [{"name": f"role-{index}"} for index in range(247)]}

    response = deploy(invoke, config=config)

    assert response.status == 409
    assert [detail["field"] for detail in response.body["details"]] == ["roles"]
    assert "at most 250" in response.body["details"][0]["message"]
    assert writes(linked) == []


def test_a_user_who_does_not_manage_the_guild_is_refused_403(invoke, linked):
    response = deploy(invoke, guild_id=WORKSHOP)

    assert response.status == 403
    assert "MANAGE_GUILD" in response.body["message"]


def test_a_user_without_a_linked_chat_account_is_refused_403(invoke, platform):
    response = deploy(invoke)

    assert response.status == 403
    assert "chatAuth" in response.body["message"]


def test_a_guild_without_the_bot_is_409_with_an_install_link(invoke, linked):
    response = deploy(invoke, guild_id=QUIET)

    assert response.status == 409
    url = response.body["install_url"]
    assert url.startswith(get_settings().chat_authorize_url + "?")
    assert f"guild_id={QUIET}" in url
    assert "scope=bot" in url
    assert f"client_id={get_settings().chat_client_id}" in url


def test_a_bot_without_manage_roles_is_named_in_the_preflight(invoke, linked):
    response = deploy(invoke, guild_id=LOCKED)

    assert response.status == 409
    assert [detail["field"] for detail in response.body["details"]] == ["roles[0]", "categories[0]"]


def test_an_invalid_configuration_is_400_naming_each_field(invoke, linked):
    config = {
        "name": "",
        "roles": [{"name": "A", "permissions": ["FLY"]}],
        "categories": [{"name": "C", "channels": [{"name": "x", "type": "sofa"}]}],
    }

    response = deploy(invoke, config=config)

    assert response.status == 400
    fields = [detail["field"] for detail in response.body["details"]]
    assert fields == ["config.name", "config.roles[0].permissions[0]", "config.categories[0].channels[0].type"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "info"}, "project_id"),
        ({"action": "rollback", "guild_id": DEMO}, "project_id"),
        ({"action": "deploy", "guild_id": DEMO, "project_id": "p", "project_name": "n"}, "config"),
        ({"action": "undo", "project_id": "p"}, "action"),
        ({"action": "info", "project_id": "has space"}, "project_id"),
    ],
)
def test_each_action_names_the_fields_it_needs(invoke, linked, body, field):
    response = invoke("deployToChat", body, headers=bearer(USER))

    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == [field]


def test_info_shows_only_the_callers_own_deployments(invoke, linked, aws):
    deploy(invoke)

    mine = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER))
    theirs = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer("someone-else"))
    other_guild = invoke(
        "deployToChat", {"action": "info", "project_id": "proj-1", "guild_id": WORKSHOP}, headers=bearer(USER)
    )

    assert mine.status == 200
    assert mine.body["status"] == "queued"
    assert theirs.status == 404
    assert other_guild.status == 404


def test_rollback_without_a_finished_deployment_is_404_and_409_naming_the_queued_one(invoke, linked, aws):
    nothing = invoke(
        "deployToChat", {"action": "rollback", "project_id": "proj-1", "guild_id": DEMO}, headers=bearer(USER)
    )
    queued = deploy(invoke)
    still_queued = invoke(
        "deployToChat", {"action": "rollback", "project_id": "proj-1", "guild_id": DEMO}, headers=bearer(USER)
    )

    assert nothing.status == 404
    assert (nothing.body["error"], nothing.body["code"]) == ("Not Found", 404)
    # v4: a queued deployment refuses other writes to its guild, naming it (it may be cancelled)
    assert still_queued.status == 409, still_queued.body
    assert still_queued.body["deployment_id"] == queued.body["deployment_id"]


def test_without_a_bearer_token_nothing_about_the_body_is_told(invoke, platform):
    response = invoke("deployToChat", {"action": "nonsense"}, drop_headers=("Authorization",))

    assert response.status == 401
    assert "details" not in response.body
