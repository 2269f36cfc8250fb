"""template.yaml as data: the SAM template read once, its functions and resources as small typed records.

Everything the local runner and the tests know about resources comes from here, so nothing retypes
a table, queue, secret or path. Intrinsics (Ref, GetAtt, Sub, If, ...) are resolved generically
against the physical names that `local.aws.provision` returns.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FUNCTION_TYPE = "AWS::Serverless::Function"
TABLE_TYPE = "AWS::DynamoDB::Table"
QUEUE_TYPE = "AWS::SQS::Queue"
SECRET_TYPE = "AWS::SecretsManager::Secret"  # noqa: S105 - a resource type
KMS_KEY_TYPE = "AWS::KMS::Key"
KMS_ALIAS_TYPE = "AWS::KMS::Alias"
SCHEDULE_GROUP_TYPE = "AWS::Scheduler::ScheduleGroup"
ROLE_TYPE = "AWS::IAM::Role"
BUCKET_TYPE = "AWS::S3::Bucket"

# Values CloudFormation gives its pseudo parameters locally (moto's default account).
LOCAL_ACCOUNT_ID = "123456789012"
LOCAL_REGION = "us-east-1"
LOCAL_STACK_NAME = "svc-local"
LOCAL_NAME_PREFIX = f"{LOCAL_STACK_NAME}-"  # of the physical name of a resource or function that sets none


# ---------------------------------------------------------------- loading


class _CloudFormationLoader(yaml.SafeLoader):
    """SafeLoader that turns the short tags (!Ref, !GetAtt, !Sub, ...) into their long forms."""


def _construct_short_tag(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:  # YAML has no fourth kind of node
        raise TypeError(f"!{tag_suffix} on a {type(node).__name__}")
    if tag_suffix == "Ref":
        return {"Ref": value}
    if tag_suffix == "Condition":
        return {"Condition": value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        logical_id, _, attribute = value.partition(".")
        return {"Fn::GetAtt": [logical_id, attribute]}
    return {f"Fn::{tag_suffix}": value}


_CloudFormationLoader.add_multi_constructor("!", _construct_short_tag)


@dataclass(frozen=True)
class Template:
    """A parsed template and the directory its relative paths (CodeUri, ContentUri) start from."""

    body: dict[str, Any]
    root: Path

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.body.get("Resources") or {}

    @property
    def parameters(self) -> dict[str, dict[str, Any]]:
        return self.body.get("Parameters") or {}

    @property
    def conditions(self) -> dict[str, Any]:
        return self.body.get("Conditions") or {}

    @property
    def function_globals(self) -> dict[str, Any]:
        return (self.body.get("Globals") or {}).get("Function") or {}

    def resource_type(self, logical_id: str) -> str | None:
        resource = self.resources.get(logical_id)
        return resource.get("Type") if resource else None


def parse_template(text: str, root: str | Path = ".") -> Template:
    body = yaml.load(text, Loader=_CloudFormationLoader)  # noqa: S506 - a SafeLoader subclass
    if not isinstance(body, dict):
        raise ValueError("template is not a mapping")
    return Template(body=body, root=Path(root).resolve())


def load_template(path: str | Path) -> Template:
    path = Path(path)
    return parse_template(path.read_text(encoding="utf-8"), root=path.resolve().parent)


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Resource:
    logical_id: str
    type: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class ApiRoute:
    path: str
    method: str  # lower case; "any" for every method


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    code_uri: str
    code_dir: Path
    handler_module: str  # importable with the template root on sys.path, e.g. functions.getConfigByCode.app
    handler_attr: str
    timeout: int
    memory_size: int
    runtime: str | None
    layers: tuple[Any, ...]
    function_name: str | None  # FunctionName property, if the template sets one


@dataclass(frozen=True)
class ApiFunction(FunctionSpec):
    operation: str = ""
    path: str = ""  # the POST event's path
    routes: tuple[ApiRoute, ...] = ()


@dataclass(frozen=True)
class WorkerFunction(FunctionSpec):
    event_name: str = ""
    queue_logical_id: str = ""
    batch_size: int = 10
    maximum_batching_window_seconds: int = 0
    function_response_types: tuple[str, ...] = ()
    maximum_concurrency: int | None = None


@dataclass(frozen=True)
class LayerSpec:
    logical_id: str
    content_dir: Path
    build_method: str | None
    import_dir: Path  # what lands on /opt/python: ContentUri itself with a BuildMethod, else its python/


# ---------------------------------------------------------------- resources


def resources_of_type(tpl: Template, resource_type: str) -> list[Resource]:
    return [
        Resource(logical_id=logical_id, type=resource_type, properties=resource.get("Properties") or {})
        for logical_id, resource in tpl.resources.items()
        if resource.get("Type") == resource_type
    ]


def tables(tpl: Template) -> list[Resource]:
    return resources_of_type(tpl, TABLE_TYPE)


def queues(tpl: Template) -> list[Resource]:
    return resources_of_type(tpl, QUEUE_TYPE)


def secrets(tpl: Template) -> list[Resource]:
    return resources_of_type(tpl, SECRET_TYPE)


def kms_keys(tpl: Template) -> list[Resource]:
    return resources_of_type(tpl, KMS_KEY_TYPE)


def kms_aliases(tpl: Template) -> list[Resource]:
    return resources_of_type(tpl, KMS_ALIAS_TYPE)


def layers(tpl: Template) -> list[LayerSpec]:
    found = []
    for logical_id, resource in tpl.resources.items():
        if resource.get("Type") != "AWS::Serverless::LayerVersion" or "Condition" in resource:
            continue  # a layer under a Condition belongs to an AWS-only function (see _functions)
        content_dir = tpl.root / str((resource.get("Properties") or {}).get("ContentUri", ""))
        build_method = (resource.get("Metadata") or {}).get("BuildMethod")
        import_dir = content_dir if build_method else content_dir / "python"
        found.append(LayerSpec(logical_id, content_dir.resolve(), build_method, import_dir.resolve()))
    return found


def function_layers(tpl: Template, spec: FunctionSpec) -> list[LayerSpec]:
    """The template's layers a function uses (those it names with Ref; ARNs of outside layers are skipped)."""
    by_id = {layer.logical_id: layer for layer in layers(tpl)}
    named = [entry.get("Ref") for entry in spec.layers if isinstance(entry, dict)]
    return [by_id[name] for name in named if name in by_id]


# ---------------------------------------------------------------- functions


def _function_property(tpl: Template, properties: dict[str, Any], name: str, default: Any = None) -> Any:
    if name in properties:
        return properties[name]
    return tpl.function_globals.get(name, default)


def _function_spec_fields(tpl: Template, logical_id: str, properties: dict[str, Any]) -> dict[str, Any]:
    code_uri = str(_function_property(tpl, properties, "CodeUri", ""))
    handler = str(_function_property(tpl, properties, "Handler", ""))
    module, _, attr = handler.rpartition(".")
    package = ".".join(part for part in code_uri.strip("/").split("/") if part and part != ".")
    layers_value = _function_property(tpl, properties, "Layers", []) or []
    return {
        "logical_id": logical_id,
        "code_uri": code_uri,
        "code_dir": (tpl.root / code_uri).resolve(),
        "handler_module": f"{package}.{module}" if package else module,
        "handler_attr": attr,
        "timeout": int(_parameter_value(tpl, _function_property(tpl, properties, "Timeout", 3))),
        "memory_size": int(_parameter_value(tpl, _function_property(tpl, properties, "MemorySize", 128))),
        "runtime": _function_property(tpl, properties, "Runtime"),
        "layers": tuple(layers_value),
        "function_name": properties.get("FunctionName") if isinstance(properties.get("FunctionName"), str) else None,
    }


def _parameter_value(tpl: Template, value: Any) -> Any:
    """A value that may be an intrinsic over parameters (e.g. !Ref WorkerTimeout), with parameter defaults."""
    return IntrinsicResolver(tpl).resolve(value) if isinstance(value, dict) else value


def _events(properties: dict[str, Any], event_type: str) -> list[tuple[str, dict[str, Any]]]:
    events = properties.get("Events") or {}
    return [
        (name, event.get("Properties") or {})
        for name, event in events.items()
        if isinstance(event, dict) and event.get("Type") == event_type
    ]


def _functions(tpl: Template) -> list[tuple[str, dict[str, Any]]]:
    # Functions under a Condition are AWS's options (ApiDocsFunction: the runner serves /docs itself).
    return [
        (logical_id, resource.get("Properties") or {})
        for logical_id, resource in tpl.resources.items()
        if resource.get("Type") == FUNCTION_TYPE and "Condition" not in resource
    ]


def all_functions(tpl: Template) -> list[FunctionSpec]:
    return [FunctionSpec(**_function_spec_fields(tpl, lid, props)) for lid, props in _functions(tpl)]


def api_functions(tpl: Template) -> list[ApiFunction]:
    found = []
    for logical_id, properties in _functions(tpl):
        api_events = _events(properties, "Api")
        if not api_events:
            continue
        routes = tuple(
            ApiRoute(path=str(event["Path"]), method=str(event.get("Method", "any")).lower()) for _, event in api_events
        )
        post_paths = [route.path for route in routes if route.method == "post"]
        path = post_paths[0] if post_paths else routes[0].path
        found.append(
            ApiFunction(
                **_function_spec_fields(tpl, logical_id, properties),
                operation=path.rstrip("/").rsplit("/", 1)[-1],
                path=path,
                routes=routes,
            )
        )
    return found


def _queue_logical_id(queue: Any) -> str:
    if isinstance(queue, dict):
        if "Fn::GetAtt" in queue:
            return str(queue["Fn::GetAtt"][0])
        if "Ref" in queue:
            return str(queue["Ref"])
    raise ValueError(f"SQS event Queue must be !GetAtt <Queue>.Arn in this template, got {queue!r}")


def worker_functions(tpl: Template) -> list[WorkerFunction]:
    found = []
    for logical_id, properties in _functions(tpl):
        for event_name, event in _events(properties, "SQS"):
            scaling = event.get("ScalingConfig") or {}
            found.append(
                WorkerFunction(
                    **_function_spec_fields(tpl, logical_id, properties),
                    event_name=event_name,
                    queue_logical_id=_queue_logical_id(event.get("Queue")),
                    batch_size=int(_parameter_value(tpl, event.get("BatchSize", 10))),
                    maximum_batching_window_seconds=int(
                        _parameter_value(tpl, event.get("MaximumBatchingWindowInSeconds", 0))
                    ),
                    function_response_types=tuple(event.get("FunctionResponseTypes") or ()),
                    maximum_concurrency=_parameter_value(tpl, scaling.get("MaximumConcurrency")),
                )
            )
    return found


def function_spec(tpl: Template, logical_id: str) -> FunctionSpec:
    for spec in all_functions(tpl):
        if spec.logical_id == logical_id:
            return spec
    raise KeyError(f"no {FUNCTION_TYPE} named {logical_id} in the template")


# ---------------------------------------------------------------- intrinsics

NO_VALUE = object()  # AWS::NoValue: the key disappears


class UnresolvedReferenceError(LookupError):
    """An intrinsic names something the local environment does not have (e.g. a resource not provisioned)."""


@dataclass
class IntrinsicResolver:
    """Evaluates CloudFormation intrinsics with local physical ids.

    refs: what `Ref` yields per logical id (table name, queue URL, secret ARN, key id).
    attrs: what `Fn::GetAtt` yields per (logical id, attribute).
    """

    tpl: Template
    refs: dict[str, str] = field(default_factory=dict)
    attrs: dict[tuple[str, str], str] = field(default_factory=dict)
    parameter_overrides: dict[str, Any] = field(default_factory=dict)
    region: str = LOCAL_REGION

    def parameter_values(self) -> dict[str, Any]:
        values = {name: spec.get("Default") for name, spec in self.tpl.parameters.items()}
        values.update(self.parameter_overrides)
        return values

    def pseudo_parameters(self) -> dict[str, Any]:
        return {
            "AWS::Region": self.region,
            "AWS::AccountId": LOCAL_ACCOUNT_ID,
            "AWS::StackName": LOCAL_STACK_NAME,
            "AWS::StackId": f"arn:aws:cloudformation:{self.region}:{LOCAL_ACCOUNT_ID}:stack/{LOCAL_STACK_NAME}/local",
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::NotificationARNs": [],
            "AWS::NoValue": NO_VALUE,
        }

    def ref(self, name: str) -> Any:
        pseudo = self.pseudo_parameters()
        if name in pseudo:
            return pseudo[name]
        parameters = self.parameter_values()
        if name in parameters:
            if parameters[name] is None:
                raise UnresolvedReferenceError(f"parameter {name} has no Default and no override")
            return parameters[name]
        if name in self.refs:
            return self.refs[name]
        where = "a resource that is not provisioned locally" if name in self.tpl.resources else "nothing known"
        raise UnresolvedReferenceError(f"Ref {name}: {where}")

    def get_att(self, logical_id: str, attribute: str) -> Any:
        try:
            return self.attrs[(logical_id, attribute)]
        except KeyError:
            raise UnresolvedReferenceError(f"Fn::GetAtt {logical_id}.{attribute} is not known locally") from None

    def condition(self, name: str) -> bool:
        if name not in self.tpl.conditions:
            raise UnresolvedReferenceError(f"Condition {name} is not defined")
        return bool(self.resolve(self.tpl.conditions[name]))

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [item for item in (self.resolve(v) for v in value) if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            handler = _INTRINSICS.get(key)
            if handler is not None:
                return handler(self, arg)
        return {k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not NO_VALUE}

    def sub(self, arg: Any) -> str:
        template, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1] if len(arg) > 1 else {})
        resolved_vars = {name: self.resolve(v) for name, v in variables.items()}

        def replace(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression.startswith("!"):
                return "${" + expression[1:] + "}"
            if expression in resolved_vars:
                return as_text(resolved_vars[expression])
            if "." in expression and not expression.startswith("AWS::"):
                logical_id, _, attribute = expression.partition(".")
                return as_text(self.get_att(logical_id, attribute))
            return as_text(self.ref(expression))

        return re.sub(r"\$\{([^}]+)\}", replace, template)


def as_text(value: Any) -> str:
    """A resolved value as CloudFormation writes it into a string (an environment variable, an attribute)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _get_att(resolver: IntrinsicResolver, arg: Any) -> Any:
    logical_id, attribute = arg if isinstance(arg, list) else str(arg).split(".", 1)
    return resolver.get_att(str(resolver.resolve(logical_id)), str(resolver.resolve(attribute)))


def _if(resolver: IntrinsicResolver, arg: Any) -> Any:
    name, when_true, when_false = arg
    return resolver.resolve(when_true if resolver.condition(name) else when_false)


def _equals(resolver: IntrinsicResolver, arg: Any) -> bool:
    left, right = (resolver.resolve(v) for v in arg)
    return as_text(left) == as_text(right)


def _select(resolver: IntrinsicResolver, arg: Any) -> Any:
    index, items = resolver.resolve(arg[0]), resolver.resolve(arg[1])
    return items[int(index)]


def _find_in_map(resolver: IntrinsicResolver, arg: Any) -> Any:
    map_name, top, second = (resolver.resolve(v) for v in arg[:3])
    return (resolver.tpl.body.get("Mappings") or {})[map_name][top][second]


_INTRINSICS: dict[str, Any] = {
    "Ref": lambda r, arg: r.ref(str(r.resolve(arg))),
    "Condition": lambda r, arg: r.condition(str(arg)),
    "Fn::GetAtt": _get_att,
    "Fn::Sub": lambda r, arg: r.sub(arg),
    "Fn::If": _if,
    "Fn::Equals": _equals,
    "Fn::Not": lambda r, arg: not r.resolve(arg[0]),
    "Fn::And": lambda r, arg: all(r.resolve(v) for v in arg),
    "Fn::Or": lambda r, arg: any(r.resolve(v) for v in arg),
    "Fn::Join": lambda r, arg: str(r.resolve(arg[0])).join(as_text(v) for v in r.resolve(arg[1])),
    "Fn::Select": _select,
    "Fn::Split": lambda r, arg: str(r.resolve(arg[1])).split(str(r.resolve(arg[0]))),
    "Fn::FindInMap": _find_in_map,
    "Fn::ToJsonString": lambda r, arg: json.dumps(r.resolve(arg)),
}


def referenced_logical_ids(value: Any) -> set[str]:
    """Logical ids a (raw) value refers to through Ref, GetAtt or Sub; parameters and pseudo names included."""
    found: set[str] = set()
    if isinstance(value, list):
        for item in value:
            found |= referenced_logical_ids(item)
    elif isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref" and isinstance(arg, str):
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add(str(arg[0] if isinstance(arg, list) else str(arg).split(".", 1)[0]))
            elif key == "Fn::Sub":
                text = arg if isinstance(arg, str) else arg[0]
                for expression in re.findall(r"\$\{([^}!][^}]*)\}", text):
                    found.add(expression.split(".", 1)[0])
                if isinstance(arg, list) and len(arg) > 1:
                    found |= referenced_logical_ids(arg[1])
            else:
                found |= referenced_logical_ids(arg)
    return found


# ---------------------------------------------------------------- environment


def raw_environment(tpl: Template, logical_id: str | None) -> dict[str, Any]:
    """Globals' variables overlaid with the function's own (logical_id None: Globals only), unresolved."""
    variables = dict(((tpl.function_globals.get("Environment") or {}).get("Variables")) or {})
    if logical_id is not None:
        resource = tpl.resources.get(logical_id)
        if resource is None or resource.get("Type") != FUNCTION_TYPE:
            raise KeyError(f"no {FUNCTION_TYPE} named {logical_id} in the template")
        properties = resource.get("Properties") or {}
        variables.update(((properties.get("Environment") or {}).get("Variables")) or {})
    return variables


def function_environment(
    tpl: Template,
    logical_id: str | None,
    refs: dict[str, str],
    overrides: dict[str, str] | None = None,
    *,
    attrs: dict[tuple[str, str], str] | None = None,
    parameter_overrides: dict[str, Any] | None = None,
    region: str = LOCAL_REGION,
) -> dict[str, str]:
    """The function's environment as Lambda would see it: intrinsics resolved, every value a string."""
    resolver = IntrinsicResolver(tpl, refs, attrs or {}, parameter_overrides or {}, region)
    environment = {}
    for name, value in raw_environment(tpl, logical_id).items():
        resolved = resolver.resolve(value)
        if resolved is not NO_VALUE:
            environment[name] = as_text(resolved)
    environment.update(overrides or {})
    return environment


def logging_environment(tpl: Template, logical_id: str | None) -> dict[str, str]:
    """What Lambda itself sets from LoggingConfig (AWS_LAMBDA_LOG_FORMAT, AWS_LAMBDA_LOG_LEVEL)."""
    config = dict(tpl.function_globals.get("LoggingConfig") or {})
    if logical_id is not None:
        config.update((tpl.resources[logical_id].get("Properties") or {}).get("LoggingConfig") or {})
    resolver = IntrinsicResolver(tpl)
    environment = {}
    if config.get("LogFormat"):
        environment["AWS_LAMBDA_LOG_FORMAT"] = as_text(resolver.resolve(config["LogFormat"]))
    if config.get("LogFormat") == "JSON" and config.get("ApplicationLogLevel"):
        environment["AWS_LAMBDA_LOG_LEVEL"] = as_text(resolver.resolve(config["ApplicationLogLevel"]))
    return environment
