"""template.yaml as data: the SAM template read once, short tags and all, with the names it shares.

Everything the local runner and the tests know about resources comes from the template, so nothing retypes
a table, queue, secret or path: local/resources.py makes its functions and resources typed records,
local/intrinsics.py resolves its intrinsics against the physical names `local.provision.provision` returns,
and local/function_environment.py gives a function the environment Lambda would.
"""

from __future__ import annotations

from dataclasses import dataclass
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
