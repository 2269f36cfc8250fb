"""svcAiChat with guild_id: the conversation starts from the live guild (the export) and every answer carries the
plan of its configuration against that guild; the guild's access checks come before any AI turn."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters

from svcconf.settings import get_settings
from tests.helpers.ai_provider import TEST_KEY
from tests.helpers.deploy_worker import DEMO, USER, WORKSHOP, link, writes
from tests.helpers.handlers import bearer

FUNCTION = "SvcAiChatFunction"


@pytest.fixture
def chat(aws, invoke, platform, fake_provider, function_environment, monkeypatch):
    """svcAiChat's environment, the provider key in its secret, a user linked to alice's chat account."""
    function_environment(FUNCTION)
    secret_id = aws.environment_for(FUNCTION)["ANTHROPIC_API_KEY_SECRET_ID"]
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(SecretId=secret_id, SecretString=TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    get_settings.cache_clear()
    parameters.clear_caches()
    link(invoke, platform)
    platform.clear_log()
    return fake_provider


def ask(invoke, body: dict[str, Any]):
    return invoke("svcAiChat", body, headers=bearer(USER))


def touched(plan: list[dict[str, Any]]) -> dict[str, set[tuple[str, str]]]:
    actions: dict[str, set[tuple[str, str]]] = {}
    for item in plan:
        actions.setdefault(item["action"], set()).add((item["kind"], item["name"]))
    return actions


def test_a_conversation_about_a_live_guild_starts_from_it_and_plans_only_what_it_changed(invoke, chat, platform):
    message = {"role": "user", "content": "Add a voice channel called Study Room, and add a role called Helper."}

    response = ask(invoke, {"messages": [message], "guild_id": DEMO})

    assert response.status == 200, response.body
    body = response.body
    # The model was given the live guild as the configuration so far
    context = chat.requests[-1].body["messages"][-1]["content"][-1]["text"]
    assert '"Svc Demo Guild"' in context
    assert '"Moderator"' in context
    config = body["config"]
    assert config["name"] == "Svc Demo Guild"
    assert [role["name"] for role in config["roles"]] == ["Moderator", "Member", "Helper"]
    # The plan names exactly what the turn added, as create; everything the guild already had is kept
    actions = touched(body["plan"])
    assert actions.pop("create") == {("role", "Helper"), ("channel", "Study Room")}
    assert set(actions) == {"keep"}
    kept_roles = {name for kind, name in actions["keep"] if kind == "role"} - {"@everyone"}  # v2 plans @everyone too
    assert kept_roles == {"Moderator", "Member"}
    assert ("channel", "Information / welcome") in actions["keep"]
    # The plan's objects are exactly the ones the turn's changes touched
    planned = {item["field"] for item in body["plan"] if item["action"] != "keep"}
    touched_paths = {change["path"] for change in body["changes"]}
    assert touched_paths
    assert all(any(path.startswith(field) for field in planned) for path in touched_paths)
    assert all(any(path.startswith(field) for path in touched_paths) for field in planned)
    assert writes(platform) == []  # a plan, not a deploy


def test_a_given_configuration_is_planned_against_the_guild_with_its_changed_fields(invoke, chat):
    current = ask(invoke, {"messages": [{"role": "user", "content": "Show me."}], "guild_id": DEMO}).body["config"]
    moderator = next(role for role in current["roles"] if role["name"] == "Moderator")
    moderator["hoist"] = False

    body = ask(
        invoke, {"messages": [{"role": "user", "content": "Show me."}], "guild_id": DEMO, "currentConfig": current}
    ).body

    assert next(role for role in body["config"]["roles"] if role["name"] == "Moderator")["hoist"] is False
    updates = [item for item in body["plan"] if item["action"] != "keep"]
    assert updates == [
        {
            "kind": "role",
            "name": "Moderator",
            "action": "update",
            "changes": [{"field": "hoist", "old": True, "new": False}],
            "field": "roles[0]",
        }
    ]


def test_without_guild_id_there_is_no_plan(invoke, chat):
    body = ask(invoke, {"messages": [{"role": "user", "content": "A server for our gaming clan"}]}).body

    assert body["plan"] is None


def test_a_guild_the_caller_does_not_manage_is_403_before_any_ai_turn(invoke, chat):
    response = ask(invoke, {"messages": [{"role": "user", "content": "Hi"}], "guild_id": WORKSHOP})

    assert response.status == 403, response.body
    assert chat.requests == []


def test_a_guild_id_that_is_no_snowflake_is_400_naming_it(invoke, chat):
    response = ask(invoke, {"messages": [{"role": "user", "content": "Hi"}], "guild_id": "my-server"})

    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == ["guild_id"]
