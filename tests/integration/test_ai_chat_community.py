"""svcAiChat's configuration v4 through the handler and the local model over loopback HTTP: a gaming community's first
build carries onboarding and AutoMod (listed in `changes` as added), the model was told their shape, and "turn off the
invite-link filter" is one edit of that rule (the e2e through `make run`: tests/e2e/test_ai_community_local_run.py)."""

from __future__ import annotations

from svcconf.config import ServerConfig
from tests.helpers.ai_chat import ask, user


def test_a_gaming_first_build_adds_onboarding_and_automod_and_an_edit_switches_one_rule(invoke, chat):
    first = ask(invoke, {"questionnaire_data": {"purpose": "gaming community", "server_name": "Night Raiders"}})

    assert first.status == 200, first.body
    config = ServerConfig.model_validate(first.body["config"])
    assert config.onboarding is not None
    assert [rule.name for rule in config.automod or []] == ["Spam", "Mention spam", "Slurs", "Invite links"]
    added = [change["path"] for change in first.body["changes"] if change["op"] == "add"]
    assert {"automod[0]", "automod[3]", "onboarding"} <= set(added)
    assert first.body["warnings"] == []
    [request] = [r for r in chat.requests if r.path == "/v1/messages"]
    system = "".join(block["text"] for block in request.body["system"])
    assert "onboarding: {enabled, mode (default|advanced), default_channels" in system
    assert '{"op":"update","kind":"automod","name":"Invite links","set":{"enabled":false}}' in system

    second = ask(
        invoke,
        {
            "messages": [user("Turn off the invite-link filter")],
            "currentConfig": first.body["config"],
        },
    )

    assert second.status == 200, second.body
    assert second.body["changes"] == [{"op": "update", "path": "automod[3].enabled", "old": True, "new": False}]
    rules = {rule["name"]: rule.get("enabled", True) for rule in second.body["config"]["automod"]}
    assert rules == {"Spam": True, "Mention spam": True, "Slurs": True, "Invite links": False}
