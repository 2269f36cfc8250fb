"""template.yaml's invariants: what cfn-lint and `sam validate` do not catch, read through local/template.py and
local/resources.py."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from local.function_environment import function_environment, raw_environment
from local.intrinsics import IntrinsicResolver
from local.provision import provision
from local.resources import (
    WorkerFunction,
    all_functions,
    api_functions,
    function_layers,
    layers,
    tables,
    worker_functions,
)
from local.template import FUNCTION_TYPE, QUEUE_TYPE, TABLE_TYPE, Template, load_template, parse_template

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = "python3.13"
LAMBDA_VISIBILITY_FACTOR = 6  # Lambda's advice: the queue's visibility timeout ≥ 6 × the function's timeout


@pytest.fixture(scope="module")
def tpl() -> Template:
    return load_template(ROOT / "template.yaml")


def _module_functions(path: Path) -> set[str]:
    """Top-level names a module defines with `def` or assigns (`lambda_handler = lambda_entry_point(app)`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assigned = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    return defined | assigned


def _environments(tpl: Template) -> dict[str, dict[str, Any]]:
    """Globals' variables and each function's own, unresolved, by where they are declared."""
    found = {"Globals": raw_environment(tpl, None)}
    for spec in all_functions(tpl):
        own = ((tpl.resources[spec.logical_id].get("Properties") or {}).get("Environment") or {}).get("Variables")
        found[spec.logical_id] = own or {}
    return found


def worker_queue_problems(tpl: Template, worker: WorkerFunction) -> list[str]:
    """What is wrong with an SQS-triggered function's wiring; empty when nothing is."""
    problems = []
    queue = tpl.resources.get(worker.queue_logical_id) or {}
    if queue.get("Type") != QUEUE_TYPE:
        return [f"{worker.logical_id}: its queue {worker.queue_logical_id} is not an {QUEUE_TYPE} of the template"]
    properties = IntrinsicResolver(tpl).resolve(
        {k: v for k, v in (queue.get("Properties") or {}).items() if k != "RedrivePolicy"}
    )
    visibility = int(properties.get("VisibilityTimeout", 30))
    if visibility < LAMBDA_VISIBILITY_FACTOR * worker.timeout:
        problems.append(
            f"{worker.queue_logical_id}: VisibilityTimeout {visibility} < {LAMBDA_VISIBILITY_FACTOR} × "
            f"{worker.logical_id}'s Timeout {worker.timeout}"
        )
    redrive = (queue.get("Properties") or {}).get("RedrivePolicy") or {}
    target = redrive.get("deadLetterTargetArn")
    dlq = target.get("Fn::GetAtt", [None])[0] if isinstance(target, dict) else None
    if tpl.resource_type(str(dlq)) != QUEUE_TYPE or "maxReceiveCount" not in redrive:
        problems.append(f"{worker.queue_logical_id}: no RedrivePolicy to a dead-letter queue of the template")
    if "ReportBatchItemFailures" not in worker.function_response_types:
        problems.append(f"{worker.logical_id}: FunctionResponseTypes lacks ReportBatchItemFailures")
    return problems


# ---------------------------------------------------------------- functions


def test_every_api_function_answers_post_at_functions_slash_its_operation(tpl: Template) -> None:
    functions = api_functions(tpl)

    assert functions, "the template has no API functions"
    for function in functions:
        assert function.path == f"/functions/{function.operation}", function.logical_id
        assert ("post", function.path) in {(route.method, route.path) for route in function.routes}
    operations = [function.operation for function in functions]
    assert len(operations) == len(set(operations)), "two functions claim the same operation"


def test_every_api_function_has_an_app_py_with_its_handler(tpl: Template) -> None:
    for function in api_functions(tpl):
        module_file = ROOT / (function.handler_module.replace(".", "/") + ".py")

        assert function.code_dir == module_file.parent, function.logical_id
        assert module_file.name == "app.py", function.logical_id
        assert module_file.is_file(), f"{function.logical_id}: {module_file} is missing"
        assert function.handler_attr == "lambda_handler"
        assert "lambda_handler" in _module_functions(module_file), f"{module_file} defines no lambda_handler"
        assert (function.code_dir / "__init__.py").is_file(), "function folders are packages (functions.<op>.app)"


def test_every_function_runs_python_3_13(tpl: Template) -> None:
    for spec in all_functions(tpl):
        assert spec.runtime == RUNTIME, spec.logical_id


def test_every_function_uses_the_shared_layer(tpl: Template) -> None:
    (shared_layer,) = [layer for layer in layers(tpl) if layer.content_dir == ROOT / "shared"]

    for spec in all_functions(tpl):
        assert shared_layer in function_layers(tpl, spec), spec.logical_id


def test_worker_functions_are_exactly_the_functions_with_sqs_events(tpl: Template) -> None:
    with_sqs_events = {
        logical_id
        for logical_id, resource in tpl.resources.items()
        if resource.get("Type") == FUNCTION_TYPE
        and any(
            event.get("Type") == "SQS" for event in ((resource.get("Properties") or {}).get("Events") or {}).values()
        )
    }

    assert {worker.logical_id for worker in worker_functions(tpl)} == with_sqs_events


def test_every_sqs_triggered_function_has_a_safe_queue(tpl: Template) -> None:
    problems = [problem for worker in worker_functions(tpl) for problem in worker_queue_problems(tpl, worker)]

    assert problems == []


BROKEN_WORKER_TEMPLATE = """
Parameters:
  WorkerTimeout: {Type: Number, Default: 60}
Globals:
  Function: {Runtime: python3.13, Timeout: 15}
Resources:
  JobQueue:
    Type: AWS::SQS::Queue
    Properties: {VisibilityTimeout: 90}
  JobWorker:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/jobWorker/
      Handler: app.lambda_handler
      Timeout: !Ref WorkerTimeout
      Events:
        Jobs: {Type: SQS, Properties: {Queue: !GetAtt JobQueue.Arn, BatchSize: 5}}
  SafeQueue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 360
      RedrivePolicy: {deadLetterTargetArn: !GetAtt SafeDeadLetters.Arn, maxReceiveCount: 5}
  SafeDeadLetters:
    Type: AWS::SQS::Queue
  SafeWorker:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/safeWorker/
      Handler: app.lambda_handler
      Timeout: 60
      Events:
        Jobs:
          Type: SQS
          Properties: {Queue: !GetAtt SafeQueue.Arn, FunctionResponseTypes: [ReportBatchItemFailures]}
"""


def test_the_queue_check_names_each_unsafe_setting_of_a_worker() -> None:
    # Given a worker whose queue is too short-lived, has no DLQ, and whose event reports no partial failures
    broken = parse_template(BROKEN_WORKER_TEMPLATE, root=ROOT)
    workers = {worker.logical_id: worker for worker in worker_functions(broken)}

    # When the check runs on it and on a correct worker
    problems = worker_queue_problems(broken, workers["JobWorker"])
    safe = worker_queue_problems(broken, workers["SafeWorker"])

    # Then each fault is named (the timeout comes through its parameter) and the correct worker passes
    assert workers["JobWorker"].timeout == 60
    assert workers["JobWorker"].batch_size == 5
    assert any("VisibilityTimeout 90 < 6 × JobWorker's Timeout 60" in p for p in problems)
    assert any("no RedrivePolicy" in p for p in problems)
    assert any("ReportBatchItemFailures" in p for p in problems)
    assert len(problems) == 3
    assert safe == []


# ---------------------------------------------------------------- environment


def test_every_table_and_queue_the_code_reads_exists_in_the_template(tpl: Template) -> None:
    expected_type = {"_TABLE_NAME": TABLE_TYPE, "_QUEUE_URL": QUEUE_TYPE, "_SECRET_ID": "AWS::SecretsManager::Secret"}
    checked = 0
    for where, variables in _environments(tpl).items():
        for name, value in variables.items():
            for suffix, resource_type in expected_type.items():
                if name.endswith(suffix):
                    checked += 1
                    target = value.get("Ref") if isinstance(value, dict) else None
                    assert target, f"{where}.{name} must be !Ref to a resource, not {value!r}"
                    assert tpl.resource_type(target) == resource_type, (
                        f"{where}.{name}: {target} is not a {resource_type}"
                    )
    assert checked >= 2


def test_every_reference_in_an_environment_names_a_parameter_or_resource(tpl: Template) -> None:
    for where, variables in _environments(tpl).items():
        for name, value in variables.items():
            if isinstance(value, dict) and "Ref" in value:
                assert value["Ref"] in tpl.parameters or value["Ref"] in tpl.resources, f"{where}.{name}"


def test_function_environment_resolves_parameters_resources_and_conditions() -> None:
    # Given a template using the intrinsics the service's templates use
    template = parse_template(
        """
Parameters:
  Stage: {Type: String, Default: dev}
  Ttl: {Type: Number, Default: 168}
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
Globals:
  Function:
    Environment:
      Variables:
        CODES_TABLE_NAME: !Ref Codes
        SVC_CODE_TTL_HOURS: !Ref Ttl
        MODE: !If [IsProd, strict, relaxed]
Resources:
  Codes: {Type: AWS::DynamoDB::Table}
  Jobs: {Type: AWS::SQS::Queue}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          JOBS_QUEUE_URL: !GetAtt Jobs.QueueUrl
          JOBS_ARN: !Sub "${Jobs.Arn}"
          REGION_NOTE: !Sub "in ${AWS::Region}, ${!literal}"
          MODE: !Join ["-", [!Select [0, [own, other]], mode]]
"""
    )

    # When it is resolved with local physical ids
    environment = function_environment(
        template,
        "Fn",
        {"Codes": "svc-local-Codes", "Jobs": "http://queue"},
        {"EXTRA": "1"},
        attrs={("Jobs", "QueueUrl"): "http://queue", ("Jobs", "Arn"): "arn:jobs"},
    )

    # Then every value is the string Lambda would see, the function's own winning over Globals
    assert environment == {
        "CODES_TABLE_NAME": "svc-local-Codes",
        "SVC_CODE_TTL_HOURS": "168",
        "MODE": "own-mode",
        "JOBS_QUEUE_URL": "http://queue",
        "JOBS_ARN": "arn:jobs",
        "REGION_NOTE": "in us-east-1, ${literal}",
        "EXTRA": "1",
    }


def test_short_tags_load_as_their_long_forms() -> None:
    loaded = parse_template("A: !Ref X\nB: !GetAtt T.Arn\nC: !GetAtt [T, Arn]\nD: !Sub 'a-${X}'\nE: !If [C, 1, 2]\n")

    assert loaded.body == {
        "A": {"Ref": "X"},
        "B": {"Fn::GetAtt": ["T", "Arn"]},
        "C": {"Fn::GetAtt": ["T", "Arn"]},
        "D": {"Fn::Sub": "a-${X}"},
        "E": {"Fn::If": ["C", 1, 2]},
    }


# ---------------------------------------------------------------- layer and data


def test_the_layer_is_built_from_shared_with_the_package_at_its_top(tpl: Template) -> None:
    (layer,) = layers(tpl)
    resource = tpl.resources[layer.logical_id]

    assert resource["Properties"]["ContentUri"] == "shared/"
    assert resource["Metadata"]["BuildMethod"] == RUNTIME
    assert (ROOT / "shared" / "svcconf" / "__init__.py").is_file()
    assert (ROOT / "shared" / "requirements.txt").is_file()
    assert not (ROOT / "shared" / "python").exists(), "BuildMethod copies shared/ into python/ itself"


def test_every_table_is_on_demand_and_encrypted(tpl: Template) -> None:
    resolver = IntrinsicResolver(tpl)
    for table in tables(tpl):
        properties = resolver.resolve(table.properties)

        assert properties.get("BillingMode") == "PAY_PER_REQUEST", table.logical_id
        assert (properties.get("SSESpecification") or {}).get("SSEEnabled") is True, table.logical_id


def test_deployment_codes_expire_through_ttl_on_expiration(tpl: Template) -> None:
    codes_table = raw_environment(tpl, None)["CODES_TABLE_NAME"]["Ref"]

    ttl = tpl.resources[codes_table]["Properties"]["TimeToLiveSpecification"]

    assert ttl == {"AttributeName": "expiration", "Enabled": True}


def test_provisioning_builds_the_tables_as_the_template_declares_them(tpl: Template) -> None:
    # Given the template, when its resources are created in moto
    with mock_aws():
        provisioned = provision(tpl, secret_values={"BotTokenSecret": "bot"})
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")

        # Then every table has the template's keys, indexes and TTL, and the environment names them
        for table in tables(tpl):
            name = provisioned.refs[table.logical_id]
            description = dynamodb.describe_table(TableName=name)["Table"]
            assert description["KeySchema"] == table.properties["KeySchema"]
            declared_indexes = {index["IndexName"] for index in table.properties.get("GlobalSecondaryIndexes", [])}
            assert {index["IndexName"] for index in description.get("GlobalSecondaryIndexes", [])} == declared_indexes
            ttl = dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            if "TimeToLiveSpecification" in table.properties:
                assert ttl["AttributeName"] == table.properties["TimeToLiveSpecification"]["AttributeName"]
        environment = provisioned.environment_for(None)
        assert environment["CODES_TABLE_NAME"] in {provisioned.refs[table.logical_id] for table in tables(tpl)}


def test_provisioning_creates_a_dead_letter_queue_before_the_queue_that_redrives_to_it() -> None:
    # Given a template whose queue is declared before its dead-letter queue
    template = parse_template(BROKEN_WORKER_TEMPLATE, root=ROOT)

    # When its resources are created in moto
    with mock_aws():
        provisioned = provision(template)
        sqs = boto3.client("sqs", region_name="us-east-1")
        attributes = sqs.get_queue_attributes(QueueUrl=provisioned.refs["SafeQueue"], AttributeNames=["All"])

    # Then the redrive policy names the dead-letter queue's ARN and the template's settings are applied
    redrive = json.loads(attributes["Attributes"]["RedrivePolicy"])
    assert redrive == {"deadLetterTargetArn": provisioned.attrs[("SafeDeadLetters", "Arn")], "maxReceiveCount": 5}
    assert attributes["Attributes"]["VisibilityTimeout"] == "360"
    assert provisioned.environment_for("JobWorker") == {}


def _failed_assertions(tpl: Template, **parameters: str) -> list[str]:
    """What CloudFormation's `Rules` would refuse for these parameter values: each failed assertion's description."""
    resolver = IntrinsicResolver(tpl, parameter_overrides=parameters)
    failed = []
    for rule in (tpl.body.get("Rules") or {}).values():
        if "RuleCondition" in rule and not resolver.resolve(rule["RuleCondition"]):
            continue
        failed += [a["AssertDescription"] for a in rule["Assertions"] if not resolver.resolve(a["Assert"])]
    return failed


def test_a_prod_stack_refuses_to_deploy_without_the_jwt_issuer_and_audience(tpl: Template) -> None:
    origin = {"CorsAllowOrigin": "https://app.example"}  # the other prod rule (test_production.py)
    failed = _failed_assertions(tpl, Stage="prod", JwtIssuer="", JwtAudience="", **origin)
    assert [text.split(" ")[0] for text in failed] == ["JwtIssuer", "JwtAudience"]
    assert _failed_assertions(tpl, Stage="prod", JwtIssuer="https://id.example", JwtAudience="", **origin) == [
        failed[1]
    ]
    assert _failed_assertions(tpl, Stage="prod", JwtIssuer="https://id.example", JwtAudience="svc", **origin) == []
    assert _failed_assertions(tpl, Stage="dev", JwtIssuer="", JwtAudience="") == []
