"""svcAiChat with guild_id: the conversation starts from the live guild (the export) and every answer carries the
plan of its configuration against that guild; the guild's access checks come before any AI turn."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from local.ai_model.server import Step
from svcconf.settings import get_settings
from tests.helpers.ai_chat import turn, user
from tests.helpers.ai_provider import TEST_KEY
from tests.helpers.chat_sandbox import BOB_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import DEMO, USER, WORKSHOP, deploy_body, link, writes
from tests.helpers.handlers import bearer

FUNCTION = "SvcAiChatFunction"
# The sandbox's demo guild: ids of what the conversation renames, moves and removes.
GENERAL, INFORMATION, ANNOUNCEMENTS = "1191000000000003014", "1191000000000003011", "1191000000000003013"
MODERATOR, MEMBER = "1191000000000002012", "1191000000000002013"


@pytest.fixture
def chat(aws, invoke, platform, fake_provider, function_environment, monkeypatch):
    """svcAiChat's environment, the provider key in its secret, a user linked to alice's chat account."""
    function_environment(FUNCTION)
    secret_id = aws.environment_for(FUNCTION)["ANTHROPIC_API_KEY_SECRET_ID"]
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(SecretId=secret_id, SecretString=TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    get_settings.cache_clear()
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
            "id": MODERATOR,
            "changes": [{"field": "hoist", "old": True, "new": False}],
            "field": "roles[0]",
            "note": None,
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


def context_of(request) -> dict[str, Any]:
    """The service's context block of a request to the model (the last user turn's last block)."""
    text = request.body["messages"][-1]["content"][-1]["text"]
    return json.loads(text.split("<service_context>", 1)[1].rsplit("</service_context>", 1)[0])


def model_requests(chat) -> list[Any]:
    return [request for request in chat.requests if request.path == "/v1/messages"]


def test_the_model_is_told_what_the_bot_may_grant_and_change_on_the_server(invoke, chat):
    body = ask(invoke, {"messages": [{"role": "user", "content": "What can you change here?"}], "guild_id": DEMO}).body

    guild = context_of(model_requests(chat)[0])["guild"]
    assert guild["bot_highest_role"] == "svc-sandbox-bot"
    assert guild["roles_the_bot_cannot_change"] == ["svc-sandbox-bot"]  # managed, at the bot's own position
    assert "MANAGE_ROLES" in guild["bot_permissions"]
    assert "BAN_MEMBERS" not in guild["bot_permissions"]  # neither the bot's role nor @everyone holds it
    # A turn that changes nothing deploys as it is: no problem, one model call
    assert body["problems"] == []
    assert len(model_requests(chat)) == 1


def test_a_role_the_bot_cannot_grant_gets_the_repair_round_and_is_named_in_problems_and_the_reply(invoke, chat):
    message = {"role": "user", "content": "Add a role called Banner with BAN_MEMBERS."}

    body = ask(invoke, {"messages": [message], "guild_id": DEMO}).body

    # The answer went back to the model once with the reason; the local model insists, so the problem stays
    _, repair = model_requests(chat)
    asked = repair.body["messages"][-1]["content"]
    assert "A deploy to this server would refuse" in asked
    assert "roles[2].permissions: grants BAN_MEMBERS, which the bot does not hold" in asked
    assert body["problems"] == [
        {"field": "roles[2].permissions", "message": "grants BAN_MEMBERS, which the bot does not hold", "rule": None}
    ]
    assert "would refuse 1 thing in this configuration" in body["reply"]
    assert "grants BAN_MEMBERS, which the bot does not hold" in body["reply"]
    # The configuration is still the one the user asked for (valid; only this server's bot cannot deploy it)
    banner = body["config"]["roles"][2]
    assert (banner["name"], banner["permissions"]) == ("Banner", ["BAN_MEMBERS"])
    assert ("role", "Banner") in touched(body["plan"])["create"]


def test_a_repair_round_that_drops_what_the_bot_cannot_grant_answers_with_no_problems(invoke, chat):
    banner = {"op": "add", "kind": "role", "name": "Banner", "set": {"permissions": ["BAN_MEMBERS"]}}
    plain = {"op": "add", "kind": "role", "name": "Banner"}
    chat.script(
        Step(json=turn(reply="Added Banner with BAN_MEMBERS.", edits=[banner])),
        Step(json=turn(reply="Added Banner; the bot cannot grant BAN_MEMBERS here.", edits=[plain])),
    )

    body = ask(invoke, {"messages": [{"role": "user", "content": "A Banner role that can ban"}], "guild_id": DEMO}).body

    assert body["problems"] == []
    assert body["reply"] == "Added Banner; the bot cannot grant BAN_MEMBERS here."
    assert [role["name"] for role in body["config"]["roles"]] == ["Moderator", "Member", "Banner"]
    assert body["config"]["roles"][2]["permissions"] == []


def test_problems_the_configuration_had_before_the_turn_are_listed_but_cost_no_repair_round(invoke, chat):
    current = ask(invoke, {"messages": [{"role": "user", "content": "Show me."}], "guild_id": DEMO}).body["config"]
    current["roles"].append({"name": "Banner", "permissions": ["BAN_MEMBERS"]})
    chat.reset()
    # The model adds a role above it (so the problem's path moves) and a channel: neither brings a problem
    chat.script(
        Step(
            json=turn(
                edits=[
                    {"op": "add", "kind": "role", "name": "Greeter", "at": 0},
                    {"op": "add", "kind": "channel", "name": "Stage Door", "set": {"type": "voice"}},
                ]
            )
        )
    )

    body = ask(
        invoke, {"messages": [user("A greeter role and a voice room")], "guild_id": DEMO, "currentConfig": current}
    ).body

    assert len(model_requests(chat)) == 1
    assert body["problems"] == [
        {"field": "roles[3].permissions", "message": "grants BAN_MEMBERS, which the bot does not hold", "rule": None}
    ]
    assert "would refuse 1 thing in this configuration" in body["reply"]
    assert [role["name"] for role in body["config"]["roles"]] == ["Greeter", "Moderator", "Member", "Banner"]
    assert "Stage Door" in {channel["name"] for channel in body["config"]["channels"]}


def test_the_conversation_keeps_ids_through_renames_and_moves_and_never_shows_them_to_the_model(invoke, chat):
    message = {
        "role": "user",
        "content": "Rename the category Information to Start Here and rename the role Moderator to Mods. "
        "Move the channel general to Start Here.",
    }

    body = ask(invoke, {"messages": [message], "guild_id": DEMO}).body

    config = body["config"]
    assert (config["categories"][0]["name"], config["categories"][0]["id"]) == ("Start Here", INFORMATION)
    assert (config["categories"][0]["channels"][-1]["name"], config["categories"][0]["channels"][-1]["id"]) == (
        "general",
        GENERAL,
    )
    assert (config["roles"][0]["name"], config["roles"][0]["id"]) == ("Mods", MODERATOR)
    # So the plan changes those objects in place: a rename and a move are updates of the same id
    changed = {item["id"]: item for item in body["plan"] if item["action"] != "keep"}
    assert {change["field"] for change in changed[GENERAL]["changes"]} >= {"category"}
    assert changed[INFORMATION]["changes"] == [{"field": "name", "old": "Information", "new": "Start Here"}]
    assert not [item for item in body["plan"] if item["action"] in ("create", "delete")]
    # The model addresses by name: the export's ids stay with the service
    context = json.dumps(context_of(model_requests(chat)[0]))
    assert GENERAL not in context
    assert MODERATOR not in context


def test_asked_to_rename_and_remove_the_plan_updates_and_deletes_and_creates_nothing(
    invoke, chat, platform, function_environment
):
    message = {
        "role": "user",
        "content": "Rename the channel general to lobby and rename the role Moderator to Mods. "
        "Remove the channel announcements and remove the role Member.",
    }

    body = ask(invoke, {"messages": [message], "guild_id": DEMO}).body

    changed = {
        (item["kind"], item["action"], item["id"]): item["changes"] for item in body["plan"] if item["action"] != "keep"
    }
    assert changed == {
        ("channel", "update", GENERAL): [{"field": "name", "old": "general", "new": "lobby"}],
        ("role", "update", MODERATOR): [{"field": "name", "old": "Moderator", "new": "Mods"}],
        ("channel", "delete", ANNOUNCEMENTS): [],
        ("role", "delete", MEMBER): [],
    }
    assert body["problems"] == []
    # The dry run's warnings too: the messages that go, and who holds the role that goes (carol, in the sandbox)
    deleted = {warning["message"] for warning in body["warnings"] if warning["rule"] == "delete"}
    assert "1 channel and all their messages will be deleted: Information / announcements" in deleted
    assert any("Member" in message and "1 member" in message for message in deleted), deleted
    # The plan_id is the one a deploy checks its `confirm` against: the same server, the same plan
    function_environment("DeployToChatFunction")
    dry = invoke("deployToChat", deploy_body(DEMO, body["config"], dry_run=True, prune=True), headers=bearer(USER))
    assert dry.status == 200, dry.body
    assert dry.body["plan_id"] == body["plan_id"]
    queued = invoke(
        "deployToChat", deploy_body(DEMO, body["config"], prune=True, confirm=body["plan_id"]), headers=bearer(USER)
    )
    assert queued.status == 202, queued.body
    assert writes(platform) == []  # queued for the worker: the turn and the dry run wrote nothing


def test_a_dangerous_grant_to_everyone_is_a_problem_naming_the_rule_a_deploy_needs_acknowledged(invoke, chat):
    current = ask(invoke, {"messages": [user("Show me.")], "guild_id": DEMO}).body["config"]
    everyone = [*current["everyone_permissions"], "MANAGE_CHANNELS"]
    grant = {"op": "update", "kind": "server", "set": {"everyone_permissions": everyone}}
    chat.reset()
    chat.script(Step(json=turn(edits=[grant])), Step(json=turn(edits=[grant])))

    body = ask(invoke, {"messages": [user("Let everyone manage channels")], "guild_id": DEMO}).body

    assert len(model_requests(chat)) == 2  # the repair round was told, and the model kept it
    [problem] = body["problems"]
    assert (problem["field"], problem["rule"]) == ("everyone_permissions", "everyone-permissions-dangerous")
    assert "MANAGE_CHANNELS" in problem["message"]


def test_a_manager_is_told_what_they_may_change_and_problems_name_what_the_platform_would_refuse_them(
    invoke, chat, platform
):
    link(invoke, platform, user="web-user-bob", chat_user=BOB_ID)  # MANAGE_GUILD alone, in the rights lab
    message = user("Rename the role Members to Regulars.")

    response = invoke("svcAiChat", {"messages": [message], "guild_id": RIGHTS_LAB}, headers=bearer("web-user-bob"))

    body = response.body
    first, _ = model_requests(chat)
    guild = context_of(first)["guild"]
    assert guild["user_highest_role"] == "Managers"
    assert guild["roles_the_user_cannot_change"] == ["Managers", "Admins", "svc-sandbox-bot"]
    assert "MANAGE_ROLES" not in guild["user_permissions"]
    # A channel bob cannot view is nowhere in what the model was sent, nor in the plan
    assert "staff-secrets" not in json.dumps(first.body)
    assert "staff-secrets" not in json.dumps(body)
    assert "hidden-channels" in {warning["rule"] for warning in body["warnings"]}
    [problem] = body["problems"]
    assert problem["field"] == "roles[2]"
    assert "MANAGE_ROLES" in problem["message"]
    assert body["plan_id"].startswith("plan_")
