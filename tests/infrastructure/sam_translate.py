"""template.yaml as CloudFormation receives it: SAM's own translator (samtranslator, the one `sam validate` and
`sam deploy` use), run offline with .venv-sam's Python, no AWS account or credentials.

    .venv-sam/bin/python tests/infrastructure/sam_translate.py [template.yaml] [Name=value ...] > translated.json

Parameters take their defaults unless given (`Stage=prod JwtIssuer=https://id.example ...`). The output is what
checkov reads (`make checkov`) and what tests/infrastructure/test_translated_template.py asserts on (one stage,
an alias per function, a deployment group per API function). This file imports nothing of the project: it runs
in SAM CLI's virtualenv, whose boto3 and pydantic are SAM's own.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class _NoIamLoader(ManagedPolicyLoader):
    """The template names no managed policy by name (its policies are statements and SAM policy templates), and
    SAM resolves the ones it adds itself from its bundled list: nothing is asked of IAM."""

    def __init__(self) -> None:
        pass

    def load(self) -> dict[str, str]:
        return {}


_ARTIFACTS = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}


def _as_packaged(template: dict[str, Any]) -> dict[str, Any]:
    """Local folders as `sam package` would leave them: an S3 URI each (a fixed one per folder, so the layer's
    version id that SAM derives from it does not change from one run to the next)."""
    for resource in (template.get("Resources") or {}).values():
        prop = _ARTIFACTS.get(resource.get("Type"))
        properties = resource.get("Properties") or {}
        if prop and isinstance(properties.get(prop), str) and not properties[prop].startswith("s3://"):
            properties[prop] = f"s3://packaged-artifacts/{properties[prop].strip('/')}"
    return template


def translate(template_path: Path, parameters: dict[str, Any]) -> dict[str, Any]:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # ARNs need a region; no call is made there
    template = yaml_parse(template_path.read_text(encoding="utf-8"))
    return transform(_as_packaged(template), parameters, _NoIamLoader())


def main(argv: list[str]) -> int:
    paths = [arg for arg in argv if "=" not in arg]
    parameters = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    template_path = Path(paths[0] if paths else Path(__file__).resolve().parents[2] / "template.yaml")
    json.dump(translate(template_path, parameters), sys.stdout, indent=1, sort_keys=True, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
