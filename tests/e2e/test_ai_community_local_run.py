"""The AI builds configuration v4 through `make run` (the local model at a real model's pace, the sandbox, the deploy
worker): a gaming community's first build from a questionnaire proposes onboarding and AutoMod, is valid, deploys to
a Community sandbox guild and exports back equal; "turn off the invite-link filter" is one edit that changes that
rule alone, at an edit's output tokens (printed beside today's one-line edit, bench/ai_turns.py's figure); and a
rollback brings the rule back on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.samples import large_community
from svcconf.config import ServerConfig
from tests.helpers.e2e_deployer import BUILD_GUILD, Deployer
from tests.helpers.local_service import ai_chat, local_ai_runner

pytestmark = pytest.mark.e2e

QUESTIONNAIRE = {"server_name": "Night Raiders", "purpose": "a gaming community for our clan", "size": "200 members"}
EDIT_GOAL_TOKENS = 300  # bench/ai_turns.py's goal for an edit at every size
PROJECT = "ai-community"


@pytest.fixture(scope="module")
def deployer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployer]:
    with local_ai_runner(tmp_path_factory.mktemp("ai-community")) as service:
        web = Deployer(service)
        web.link()
        yield web


def output_tokens(deployer: Deployer) -> int:
    """The output tokens of the function's last AI call, from its `ai call` log line."""
    calls = [
        json.loads(line)
        for line in deployer.service.log_path.read_text().splitlines()
        if line.startswith("{") and '"ai call"' in line
    ]
    return int(calls[-1]["ai_usage"]["output_tokens"])


def platform(deployer: Deployer, route: str) -> Any:
    """What the platform answers the bot for the build guild's `route` (its AutoMod rules, its onboarding)."""
    state = deployer.service.state
    headers = {"Authorization": f"Bot {state['bot_token']}"}
    url = f"{state['chat_api_base_url']}/guilds/{BUILD_GUILD}/{route}"
    answer = requests.get(url, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def rules_enabled(deployer: Deployer) -> dict[str, bool]:
    return {rule["name"]: rule["enabled"] for rule in platform(deployer, "auto-moderation/rules")}


def as_configured(config: dict[str, Any]) -> dict[str, Any]:
    """A configuration as the schema reads it, without the platform's ids (an export carries them)."""
    data = ServerConfig.model_validate(config).model_dump(mode="json", exclude_none=True)
    for item in [*data["roles"], *data["categories"], *data["channels"]]:
        item.pop("id", None)
        for channel in item.get("channels", []):
            channel.pop("id", None)
    return data


def stated(value: Any, like: Any = None) -> Any:
    """`value` narrowed to what `like` states (an export also says what a configuration leaves to the server: the
    settings, slowmode 0, bitrates), lists of names sorted (the platform orders permissions by bit)."""
    like = value if like is None else like
    if isinstance(like, dict) and isinstance(value, dict):
        return {key: stated(value.get(key), like[key]) for key in like}
    if isinstance(like, list) and isinstance(value, list):
        if all(isinstance(item, str) for item in [*like, *value]):
            return sorted(value)
        return [stated(item, model) for item, model in zip(value, like, strict=False)] + value[len(like) :]
    return value


def test_a_gaming_communitys_first_build_deploys_exports_back_equal_and_an_automod_edit_costs_an_edit(
    deployer: Deployer,
) -> None:
    # Given a first build from a gaming community's questionnaire
    first = ai_chat(deployer.service, {"questionnaire_data": QUESTIONNAIRE})
    assert first.status_code == 200, first.text
    build = first.json()["config"]
    build_tokens = output_tokens(deployer)
    built = ServerConfig.model_validate(build)
    assert built.onboarding is not None
    assert built.onboarding.enabled
    assert [option.roles for option in built.onboarding.prompts[0].options] == [
        ["Minecraft"],
        ["Valorant"],
        ["Fortnite"],
    ]
    rules = {rule.name: rule for rule in built.automod or []}
    assert {rule.trigger for rule in rules.values()} == {"spam", "mention_spam", "keyword_preset", "keyword"}
    assert ("alert", "mod-log") in [(a.type, a.channel) for a in rules["Invite links"].actions]
    assert first.json()["warnings"] == []
    # When it is deployed to the sandbox's Community guild (the preflight passes: 7 default channels, 5 open)
    info = deployer.deploy(build, PROJECT)
    assert info["status"] == "succeeded", info
    assert rules_enabled(deployer) == dict.fromkeys(rules, True)
    onboarding = platform(deployer, "onboarding")
    assert onboarding["enabled"] is True
    assert len(onboarding["default_channel_ids"]) == 7
    # Then the export is the build, as deployed
    exported = deployer.call("deployToChat", {"action": "export", "guild_id": BUILD_GUILD}).json()["config"]
    # (but the configuration's own description: a note of the project's that no deploy writes to the server)
    mine = {key: value for key, value in as_configured(build).items() if key != "description"}
    assert stated(as_configured(exported), mine) == stated(mine)
    assert as_configured(exported)["automod"] == as_configured(build)["automod"]
    assert as_configured(exported)["onboarding"] == as_configured(build)["onboarding"]
    # And a dry run of the build there plans nothing but keeps
    dry = deployer.call(
        "deployToChat",
        {
            "action": "deploy",
            "guild_id": BUILD_GUILD,
            "project_id": PROJECT,
            "project_name": "E2E",
            "config": build,
            "dry_run": True,
        },
    )
    assert dry.status_code == 200, dry.text
    assert [item for item in dry.json()["plan"] if item["action"] != "keep"] == []

    # When the user turns the invite-link filter off (and, for comparison, a one-line edit of today's bench)
    conversation = [
        {"role": "assistant", "content": first.json()["reply"]},
        {"role": "user", "content": "Turn off the invite-link filter"},
    ]
    edit = ai_chat(deployer.service, {"messages": conversation, "currentConfig": build})
    assert edit.status_code == 200, edit.text
    edit_tokens = output_tokens(deployer)
    bench_body = {
        "messages": [{"role": "user", "content": "Add a text channel named memes-corner to Area 1"}],
        "currentConfig": large_community(10, 5, 25),
    }
    assert ai_chat(deployer.service, bench_body).status_code == 200
    bench_tokens = output_tokens(deployer)
    print(
        f"\nAutoMod edit turn: {edit_tokens} output tokens; today's one-line edit (bench/ai_turns.py, 10/25): "
        f"{bench_tokens}; the first build with onboarding and AutoMod: {build_tokens}"
    )
    # Then it changed exactly that rule, at an edit's cost
    assert edit.json()["changes"] == [
        {"op": "update", "path": f"automod[{list(rules).index('Invite links')}].enabled", "old": True, "new": False}
    ]
    after = as_configured(edit.json()["config"])
    before = as_configured(build)
    assert next(r for r in after["automod"] if r["name"] == "Invite links")["enabled"] is False
    next(r for r in after["automod"] if r["name"] == "Invite links")["enabled"] = True
    assert after == before
    assert edit_tokens <= EDIT_GOAL_TOKENS
    assert edit_tokens <= 2 * bench_tokens

    # When the edit is deployed, the platform's rule is off; a rollback brings the previous rules back
    assert deployer.deploy(edit.json()["config"], PROJECT)["status"] == "succeeded"
    assert rules_enabled(deployer) == {name: name != "Invite links" for name in rules}
    assert deployer.rollback(PROJECT)["status"] == "succeeded"
    assert rules_enabled(deployer) == dict.fromkeys(rules, True)
    assert platform(deployer, "onboarding") == onboarding
