"""template.yaml's resources as small typed records: functions (API and SQS-triggered), layers, tables, queues,
secrets and keys."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.intrinsics import IntrinsicResolver
from local.template import (
    FUNCTION_TYPE,
    KMS_ALIAS_TYPE,
    KMS_KEY_TYPE,
    QUEUE_TYPE,
    SECRET_TYPE,
    TABLE_TYPE,
    Template,
)

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
