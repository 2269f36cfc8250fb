"""A field that differs from a known one only in case or `_` is refused with the right name, on every operation;
other unknown fields are still ignored (docs/03-api.md, Transport)."""

from __future__ import annotations

import pytest

from tests.helpers.handlers import BOT_TOKEN, bearer

ADMIN = bearer("admin-1", role="admin")
BOT = {"x-bot-token": BOT_TOKEN}


def test_svc_ai_chat_with_current_config_is_refused_naming_current_config(invoke) -> None:
    design = {"name": "Our Guild", "roles": [{"name": "Mods"}]}

    response = invoke(
        "svcAiChat",
        {"messages": [{"role": "user", "content": "Add a rules channel"}], "current_config": design},
        headers=bearer(),
    )

    assert response.status == 400
    assert response.body["details"] == [
        {"field": "current_config", "message": "is not a field; did you mean `currentConfig`?"}
    ]
    assert response.body["message"] == "Invalid request: current_config: is not a field; did you mean `currentConfig`?"


def test_a_near_miss_inside_svc_ai_chats_current_config_names_the_schemas_field(invoke) -> None:
    design = {"name": "Our Guild", "channels": [{"name": "Lounge", "type": "voice", "userLimit": 5}]}

    response = invoke(
        "svcAiChat",
        {"messages": [{"role": "user", "content": "Add a rules channel"}], "currentConfig": design},
        headers=bearer(),
    )

    assert response.status == 400
    assert response.body["details"] == [
        {"field": "currentConfig.channels[0].userLimit", "message": "is not a field; did you mean `user_limit`?"}
    ]


@pytest.mark.parametrize(
    ("operation", "headers", "body", "field", "meant"),
    [
        ("validateChatInvite", bearer(), {"Invite": "abc"}, "Invite", "invite"),
        ("deployToChat", bearer(), {"action": "info", "project_id": "p", "Guild_ID": "1" * 18}, "Guild_ID", "guild_id"),
        ("deployToChat", bearer(), {"action": "import", "TEMPLATE": "abc"}, "TEMPLATE", "template"),
        ("deployToChat", bearer(), {"Action": "info", "project_id": "p1"}, "Action", "action"),
        ("seedTemplates", ADMIN, {"Count": 5}, "Count", "count"),
        ("getConfigByCode", BOT, {"code": "SVC-AAAA-BBBB", "userId": "42"}, "userId", "user_id"),
        ("manageBackup", BOT, {"action": "list", "guildId": "1" * 18}, "guildId", "guild_id"),
        ("chatAuth", {}, {"code": "c", "redirectUri": "http://x"}, "redirectUri", "redirect_uri"),
    ],
)
def test_every_operation_refuses_a_near_miss_naming_the_right_field(invoke, operation, headers, body, field, meant):
    # chatAuth takes no credentials (its example event's optional bearer is dropped)
    response = invoke(operation, body, headers=headers, drop_headers=() if headers else ("Authorization",))

    assert response.status == 400
    assert {"field": field, "message": f"is not a field; did you mean `{meant}`?"} in response.body["details"]


def test_a_near_miss_in_a_deployed_configuration_names_the_field_at_its_path(invoke) -> None:
    config = {"name": "G", "categories": [{"name": "Talk", "channels": [{"name": "general", "Slowmode_Seconds": 5}]}]}
    body = {"action": "deploy", "guild_id": "1" * 18, "project_id": "p1", "project_name": "P", "config": config}

    response = invoke("deployToChat", body, headers=bearer())

    assert response.status == 400
    assert response.body["details"] == [
        {
            "field": "config.categories[0].channels[0].Slowmode_Seconds",
            "message": "is not a field; did you mean `slowmode_seconds`?",
        }
    ]


def test_a_field_another_action_knows_is_ignored_like_any_unknown_field(invoke) -> None:
    # `guild_id` belongs to other actions of deployToChat: for import it is an unknown field, not a near miss.
    response = invoke("deployToChat", {"action": "import", "template": "!", "guild_id": "1" * 18}, headers=bearer())

    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == ["template"]


def test_a_near_miss_is_refused_only_after_the_caller_is_authenticated(invoke) -> None:
    response = invoke("svcAiChat", {"current_config": {}}, drop_headers=("Authorization", "authorization"))

    assert response.status == 401
    assert "details" not in response.body
