"""openapi.json's v4 examples are what the handlers answer: the Community server's dry run (deployToChat, moto and
the sandbox) and the gaming community's first build (svcAiChat and the local model), re-run and compared, so the
examples cannot drift from the service (tests/unit/test_api_description.py holds them to their schemas)."""

from __future__ import annotations

from typing import Any

from svcconf.api.examples_ai_community import COMMUNITY_AI_CHAT_ANSWERS, COMMUNITY_AI_CHAT_REQUESTS
from svcconf.api.examples_community import COMMUNITY_DEPLOY_ANSWERS, COMMUNITY_DEPLOY_REQUESTS
from tests.helpers.ai_chat import ask
from tests.helpers.deploy_worker import link
from tests.helpers.handlers import bearer


def _without_nulls(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if value is not None}


def test_the_community_dry_run_example_is_the_handlers_answer(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)

    answer = invoke("deployToChat", COMMUNITY_DEPLOY_REQUESTS["dryRunCommunity"], headers=bearer("web-user-1"))

    assert answer.status == 200, answer.body
    body = _without_nulls(answer.body)
    body["steps"] = _without_nulls(body["steps"])
    body["plan"] = [_without_nulls(item) for item in body["plan"]]
    assert body == COMMUNITY_DEPLOY_ANSWERS["dryRunCommunity"]
    kinds = {item["kind"] for item in body["plan"]}
    assert {"automod_rule", "onboarding", "welcome_screen"} <= kinds


def test_the_community_first_build_example_is_the_handlers_answer(invoke, chat):
    answer = ask(invoke, COMMUNITY_AI_CHAT_REQUESTS["community"])

    assert answer.status == 200, answer.body
    example = COMMUNITY_AI_CHAT_ANSWERS["community"]
    assert answer.body["config"] == example["config"]
    assert {"onboarding", "automod"} <= set(example["config"])
    assert [(c["op"], c["path"]) for c in answer.body["changes"]] == [(c["op"], c["path"]) for c in example["changes"]]
    assert (answer.body["reply"], answer.body["quick_replies"]) == (example["reply"], example["quick_replies"])
