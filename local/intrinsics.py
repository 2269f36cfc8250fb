"""CloudFormation's intrinsics (Ref, GetAtt, Sub, If, ...) resolved generically with local physical ids."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION, LOCAL_STACK_NAME, Template

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
