"""What an operator gets from template.yaml in production (docs/11-production.md): every function watched and
logged, every API function on a canary that its alarms roll back, one stage, the prod rules, and the checkov
baseline judged entry by entry."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from local.intrinsics import IntrinsicResolver
from local.resources import api_functions, worker_functions
from local.template import Template, load_template
from tests.infrastructure.checkov_gate import Skip, baseline_problems, judge, load_baseline

ROOT = Path(__file__).resolve().parents[2]
SAM_PYTHON = ROOT / ".venv-sam" / "bin" / "python"
ALARM_TYPE = "AWS::CloudWatch::Alarm"
LOG_GROUP_TYPE = "AWS::Logs::LogGroup"


@pytest.fixture(scope="module")
def tpl() -> Template:
    return load_template(ROOT / "template.yaml")


def _all_api_functions(tpl: Template) -> list[str]:
    """Every function API Gateway invokes, those under a Condition included (the runner leaves them out)."""
    return [
        logical_id
        for logical_id, resource in tpl.resources.items()
        if resource.get("Type") == "AWS::Serverless::Function"
        and any(e.get("Type") == "Api" for e in ((resource.get("Properties") or {}).get("Events") or {}).values())
    ]


def _alarms_on(tpl: Template, logical_id: str) -> dict[str, str]:
    """metric name -> alarm logical id, of the alarms whose FunctionName dimension is this function."""
    found = {}
    for alarm_id, resource in tpl.resources.items():
        if resource.get("Type") != ALARM_TYPE:
            continue
        properties = resource["Properties"]
        dimensions = {d["Name"]: d["Value"] for d in properties.get("Dimensions") or []}
        if dimensions.get("FunctionName") == {"Ref": logical_id}:
            found[properties["MetricName"]] = alarm_id
            assert properties["AlarmActions"] == [{"Ref": "AlarmTopic"}], alarm_id
            assert resource.get("Condition") == tpl.resources[logical_id].get("Condition"), alarm_id
    return found


def _log_group_of(tpl: Template, logical_id: str) -> dict[str, Any]:
    properties = tpl.resources[logical_id]["Properties"]
    reference = (properties.get("LoggingConfig") or {}).get("LogGroup") or {}
    group = tpl.resources.get(reference.get("Ref", ""), {})
    assert group.get("Type") == LOG_GROUP_TYPE, f"{logical_id}: LoggingConfig.LogGroup is no log group of the template"
    return group


def test_every_function_the_api_serves_has_its_alarms_and_its_log_group(tpl: Template) -> None:
    functions = _all_api_functions(tpl)

    assert {f.logical_id for f in api_functions(tpl)} <= set(functions)
    assert len(functions) >= 9
    for logical_id in functions:
        assert set(_alarms_on(tpl, logical_id)) == {"Errors", "Throttles"}, logical_id
        group = _log_group_of(tpl, logical_id)
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, logical_id
        assert group.get("Condition") == tpl.resources[logical_id].get("Condition"), logical_id


def test_every_worker_has_its_alarms_its_log_group_and_an_alarmed_dead_letter_queue(tpl: Template) -> None:
    for worker in worker_functions(tpl):
        assert set(_alarms_on(tpl, worker.logical_id)) == {"Errors", "Throttles"}, worker.logical_id
        _log_group_of(tpl, worker.logical_id)
        redrive = tpl.resources[worker.queue_logical_id]["Properties"]["RedrivePolicy"]
        dlq = redrive["deadLetterTargetArn"]["Fn::GetAtt"][0]
        watched = [
            alarm_id
            for alarm_id, r in tpl.resources.items()
            if r.get("Type") == ALARM_TYPE
            and r["Properties"]["Namespace"] == "AWS/SQS"
            and r["Properties"]["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq, "QueueName"]}}]
        ]
        assert watched, f"{dlq} has no alarm"


def test_each_api_function_runs_a_canary_its_own_errors_and_the_api_5xx_roll_back(tpl: Template) -> None:
    assert tpl.function_globals["AutoPublishAlias"] == "live"
    for function in api_functions(tpl):
        preference = tpl.resources[function.logical_id]["Properties"]["DeploymentPreference"]
        errors_alarm = _alarms_on(tpl, function.logical_id)["Errors"]

        assert preference["Type"] == {"Ref": "ApiDeploymentType"}, function.logical_id
        assert preference["Alarms"] == [{"Ref": errors_alarm}, {"Ref": "ApiErrorsAlarm"}], function.logical_id
        dimensions = {d["Name"]: d["Value"] for d in tpl.resources[errors_alarm]["Properties"]["Dimensions"]}
        assert dimensions["ExecutedVersion"] == {"Fn::GetAtt": [function.logical_id, "Version.Version"]}
    assert tpl.parameters["ApiDeploymentType"]["Default"].startswith("Canary")
    assert "AllAtOnce" in tpl.parameters["ApiDeploymentType"]["AllowedValues"]


def test_the_domain_metrics_alarm_in_the_namespace_and_service_the_code_emits_them(tpl: Template) -> None:
    environment = tpl.function_globals["Environment"]["Variables"]
    alarms = {r["Properties"]["MetricName"]: r["Properties"] for r in tpl.resources.values() if r["Type"] == ALARM_TYPE}
    for metric in ("DeploymentFailed", "LimitReached", "BotShareFull"):
        assert alarms[metric]["Namespace"] == environment["POWERTOOLS_METRICS_NAMESPACE"], metric
        assert alarms[metric]["Dimensions"] == [{"Name": "service", "Value": environment["POWERTOOLS_SERVICE_NAME"]}]
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "shared" / "svcconf").rglob("*.py"))
    assert '"LimitReached"' in source
    assert '"BotShareFull"' in source
    assert 'f"Deployment{status.capitalize()}"' in source  # DeploymentFailed


@pytest.mark.parametrize(
    ("reserved", "concurrency"),
    [
        ("DeployWorkerReservedConcurrency", "DeployWorkerConcurrency"),
        ("TemplateWorkerReservedConcurrency", "TemplateWorkerConcurrency"),
    ],
)
def test_a_workers_reservation_may_be_0_and_by_default_covers_its_queues_concurrency(
    tpl: Template, reserved: str, concurrency: str
) -> None:
    # A reservation below the event source's MaximumConcurrency throttles its polls: messages come back, and
    # reach the dead-letter queue, without the worker ever failing.
    assert tpl.parameters[reserved]["MinValue"] == 0
    assert tpl.parameters[reserved]["Default"] >= tpl.parameters[concurrency]["Default"]
    workers = {w.logical_id: w for w in worker_functions(tpl)}
    assert any(w.maximum_concurrency == tpl.parameters[concurrency]["Default"] for w in workers.values())


def test_every_reserved_concurrency_is_a_parameter_that_0_turns_off(tpl: Template) -> None:
    reserved = {
        logical_id: r["Properties"]["ReservedConcurrentExecutions"]
        for logical_id, r in tpl.resources.items()
        if r["Type"] == "AWS::Serverless::Function" and "ReservedConcurrentExecutions" in r["Properties"]
    }
    assert set(reserved) == {"SvcAiChatFunction", "DeployWorkerFunction", "TemplateWorkerFunction"}
    for logical_id, value in reserved.items():
        condition, (when_set, when_unset) = value["Fn::If"][0], value["Fn::If"][1:]
        parameter = when_set["Ref"]
        assert when_unset == {"Ref": "AWS::NoValue"}, logical_id
        assert tpl.conditions[condition] == {"Fn::Not": [{"Fn::Equals": [{"Ref": parameter}, 0]}]}, logical_id
        assert IntrinsicResolver(tpl, parameter_overrides={parameter: 0}).resolve({"v": value}) == {}


def _failed_assertions(tpl: Template, **parameters: str) -> list[str]:
    resolver = IntrinsicResolver(tpl, parameter_overrides=parameters)
    failed = []
    for rule in (tpl.body.get("Rules") or {}).values():
        if "RuleCondition" in rule and not resolver.resolve(rule["RuleCondition"]):
            continue
        failed += [a["AssertDescription"] for a in rule["Assertions"] if not resolver.resolve(a["Assert"])]
    return failed


def test_a_prod_stack_refuses_to_deploy_with_any_cors_origin(tpl: Template) -> None:
    jwt = {"JwtIssuer": "https://id.example", "JwtAudience": "svc"}
    for origin in ("*", ""):
        (failed,) = _failed_assertions(tpl, Stage="prod", CorsAllowOrigin=origin, **jwt)
        assert failed.startswith("CorsAllowOrigin"), origin
    assert _failed_assertions(tpl, Stage="prod", CorsAllowOrigin="https://app.example", **jwt) == []
    assert _failed_assertions(tpl, Stage="dev", CorsAllowOrigin="*") == []


def test_every_gateway_answer_carries_the_cors_origin(tpl: Template) -> None:
    responses = tpl.resources["ServiceApi"]["Properties"]["GatewayResponses"]
    assert {"THROTTLED", "DEFAULT_4XX", "DEFAULT_5XX", "INTEGRATION_FAILURE", "INTEGRATION_TIMEOUT"} <= set(responses)
    for name, response in responses.items():
        headers = response["ResponseParameters"]["Headers"]
        assert headers["Access-Control-Allow-Origin"] == {"Fn::Sub": "'${CorsAllowOrigin}'"}, name


def test_make_runs_gateway_answers_with_the_origin_the_template_resolves_to(tpl: Template) -> None:
    from local.gateway import gateway_responses

    for name, response in gateway_responses(tpl).items():
        assert response["ResponseParameters"]["Headers"] == {"Access-Control-Allow-Origin": "'*'"}, name


def test_prod_keeps_its_tables_and_every_stack_keeps_its_secrets(tpl: Template) -> None:
    for logical_id, resource in tpl.resources.items():
        if resource["Type"] == "AWS::DynamoDB::Table":
            protection = resource["Properties"]["DeletionProtectionEnabled"]
            assert IntrinsicResolver(tpl, parameter_overrides={"Stage": "prod"}).resolve(protection) is True
        if resource["Type"] == "AWS::SecretsManager::Secret":
            assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain", logical_id
            assert any(o["Value"] == {"Ref": logical_id} for o in tpl.body["Outputs"].values()), logical_id


def test_the_documents_bucket_is_versioned_and_noncurrent_versions_expire(tpl: Template) -> None:
    properties = tpl.resources["DocumentsBucket"]["Properties"]
    rules = {rule["Id"]: rule for rule in properties["LifecycleConfiguration"]["Rules"]}
    assert properties["VersioningConfiguration"] == {"Status": "Enabled"}
    assert rules["noncurrent-versions-for-30-days"]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30}
    assert rules["finished-deployments-to-infrequent-access"]["Prefix"] == "deployments/"


# ---------------------------------------------------------------- checkov's baseline


def test_every_skip_of_the_checkov_baseline_has_its_reason() -> None:
    skips = load_baseline()
    assert skips
    assert baseline_problems(skips) == []


def test_the_checkov_gate_names_new_findings_and_stale_skips() -> None:
    skips = [
        Skip("CKV_AWS_1", ("*",), "a reason long enough to be a sentence of its own, really"),
        Skip("CKV_AWS_2", ("A",), "x"),
    ]
    new, stale = judge([("CKV_AWS_1", "Anything"), ("CKV_AWS_3", "B")], skips)
    assert new == ["CKV_AWS_3 on B"]
    assert stale == ["CKV_AWS_2 (A)"]
    assert baseline_problems(skips) == ["CKV_AWS_2: a skip needs its reason (a sentence or more), got 'x'"]


# ---------------------------------------------------------------- the translated template (SAM's translator)


@pytest.fixture(scope="module")
def translated() -> dict[str, Any]:
    if not SAM_PYTHON.exists():
        pytest.skip(".venv-sam is missing: make sam-venv (make test and make lint install it)")
    result = subprocess.run(
        [str(SAM_PYTHON), str(ROOT / "tests" / "infrastructure" / "sam_translate.py"), str(ROOT / "template.yaml")],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


@pytest.mark.starts
def test_the_translated_template_has_one_stage_and_an_alias_per_function(
    tpl: Template, translated: dict[str, Any]
) -> None:
    resources = translated["Resources"]
    by_type: dict[str, list[str]] = {}
    for logical_id, resource in resources.items():
        by_type.setdefault(resource["Type"], []).append(logical_id)

    (stage,) = by_type["AWS::ApiGateway::Stage"]
    assert resources[stage]["Properties"]["StageName"] == {"Ref": "Stage"}
    for deployment in by_type["AWS::ApiGateway::Deployment"]:
        assert "StageName" not in resources[deployment]["Properties"], "SAM's extra stage `Stage` is back"
    assert len(by_type["AWS::Lambda::Alias"]) == len(by_type["AWS::Lambda::Function"])
    # A deployment group (a canary) per API function but apiDocs; the workers (an SQS queue's) have none
    groups = by_type["AWS::CodeDeploy::DeploymentGroup"]
    workers = {worker.logical_id for worker in worker_functions(tpl)}
    api = set(_all_api_functions(tpl)) - {"ApiDocsFunction"}
    assert workers >= {"DeployWorkerFunction", "TemplateWorkerFunction", "BackupWorkerFunction"}
    assert set(by_type["AWS::Lambda::Function"]) == api | workers | {"ApiDocsFunction"}
    assert sorted(groups) == sorted(f"{function}DeploymentGroup" for function in api)
    snapstart = [f for f in by_type["AWS::Lambda::Function"] if resources[f]["Properties"].get("SnapStart")]
    assert snapstart
    for function in snapstart:
        alias = resources[f"{function}Aliaslive"]
        assert alias["Properties"]["FunctionVersion"]["Fn::GetAtt"][1] == "Version"
