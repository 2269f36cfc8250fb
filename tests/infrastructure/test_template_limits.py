"""template.yaml's side of the limits per user: the usage table, who may update it, the parameters that reach the
functions' environment, and the AI functions' reserved concurrency."""

from __future__ import annotations

from typing import Any

import pytest

from local.function_environment import function_environment
from local.intrinsics import IntrinsicResolver
from local.template import Template, load_template
from tests.helpers.handlers import ROOT

LIMITED_FUNCTIONS = {"ValidateChatInviteFunction", "SvcAiChatFunction", "DeployToChatFunction"}
# The bot's own work (scheduled backups): no user's limits, but its requests take the bot's share of the platform.
SHARE_FUNCTIONS = {"BackupWorkerFunction"}
LIMIT_VARIABLES = {
    "SVC_AI_TURNS_PER_MINUTE": ("AiTurnsPerMinute", "10"),
    "SVC_AI_TOKENS_PER_DAY": ("AiTokensPerDay", "1000000"),
    "SVC_PLATFORM_READS_PER_MINUTE": ("PlatformReadsPerMinute", "30"),
    "SVC_AI_MAX_INPUT_TOKENS": ("AiMaxInputTokens", "60000"),
    "CHAT_USER_REQUESTS_PER_SECOND": ("ChatUserRequestsPerSecond", "25"),
}


@pytest.fixture(scope="module")
def tpl() -> Template:
    return load_template(ROOT / "template.yaml")


def statements_on(tpl: Template, logical_id: str, table: str) -> list[dict[str, Any]]:
    """The function's policy statements whose resource is `table`'s ARN."""
    found = []
    for policy in tpl.resources[logical_id]["Properties"].get("Policies") or []:
        for statement in policy.get("Statement", []) if isinstance(policy, dict) else []:
            if statement.get("Resource") == {"Fn::GetAtt": [table, "Arn"]}:
                found.append(statement)
    return found


def test_only_the_limited_functions_may_update_the_usage_table_and_nothing_else(tpl: Template) -> None:
    functions = [name for name, r in tpl.resources.items() if r["Type"] == "AWS::Serverless::Function"]
    granted = {name: statements_on(tpl, name, "UsageTable") for name in functions}
    assert {name for name, statements in granted.items() if statements} == LIMITED_FUNCTIONS | SHARE_FUNCTIONS
    for name in LIMITED_FUNCTIONS | SHARE_FUNCTIONS:
        assert [statement["Action"] for statement in granted[name]] == [["dynamodb:UpdateItem"]], name


def test_the_usage_table_expires_its_counters(tpl: Template) -> None:
    properties = tpl.resources["UsageTable"]["Properties"]
    assert properties["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert properties["KeySchema"] == [{"AttributeName": "key", "KeyType": "HASH"}]


def test_each_limit_is_a_parameter_that_reaches_every_limited_function(tpl: Template) -> None:
    refs = {logical_id: logical_id for logical_id in tpl.resources}
    for name in LIMITED_FUNCTIONS:
        environment = function_environment(tpl, name, refs)
        for variable, (parameter, default) in LIMIT_VARIABLES.items():
            assert str(tpl.parameters[parameter]["Default"]) == default
            assert environment[variable] == default, (name, variable)
        overridden = function_environment(tpl, name, refs, parameter_overrides={"AiTurnsPerMinute": 3})
        assert overridden["SVC_AI_TURNS_PER_MINUTE"] == "3"


@pytest.mark.parametrize(
    ("function", "parameter", "default"),
    [
        ("SvcAiChatFunction", "AiChatReservedConcurrency", 20),
        ("TemplateWorkerFunction", "TemplateWorkerReservedConcurrency", 5),
    ],
)
def test_the_ai_functions_reserve_their_concurrency_unless_the_parameter_is_0(
    tpl, function, parameter, default
) -> None:
    reserved = tpl.resources[function]["Properties"]["ReservedConcurrentExecutions"]
    assert IntrinsicResolver(tpl).resolve(reserved) == default
    assert tpl.parameters[parameter]["Default"] == default
    unset = IntrinsicResolver(tpl, parameter_overrides={parameter: 0}).resolve({"Value": reserved})
    assert unset == {}  # AWS::NoValue: no reservation


def test_make_run_passes_the_limits_of_its_own_environment_to_the_functions() -> None:
    from local.settings import LocalSettings

    settings = LocalSettings.from_environ(
        {
            "SVC_AI_TURNS_PER_MINUTE": "2",
            "SVC_PLATFORM_READS_PER_MINUTE": "4",
            "SVC_AI_MAX_INPUT_TOKENS": "8000",
            "CHAT_USER_REQUESTS_PER_SECOND": "5",
            "SVC_AI_TOKENS_PER_DAY": "900",
            "SVC_UNRELATED": "x",
        }
    )
    assert {name: settings.values[name] for name in LIMIT_VARIABLES} == {
        "SVC_AI_TURNS_PER_MINUTE": "2",
        "SVC_AI_TOKENS_PER_DAY": "900",
        "SVC_PLATFORM_READS_PER_MINUTE": "4",
        "SVC_AI_MAX_INPUT_TOKENS": "8000",
        "CHAT_USER_REQUESTS_PER_SECOND": "5",
    }
    assert "SVC_UNRELATED" not in settings.values
