"""A function's environment as Lambda would see it: template.yaml's variables resolved, and LoggingConfig's."""

from __future__ import annotations

from typing import Any

from local.intrinsics import NO_VALUE, IntrinsicResolver, as_text
from local.template import FUNCTION_TYPE, LOCAL_REGION, Template


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
