"""ApiDocsFunction, the AWS side of /docs: off unless EnableApiDocs is true, and serving only its layer's files."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.apiDocs import app as docs_app
from svcconf.api.docs_page import ASSETS

ROOT = Path(__file__).resolve().parents[2]
SWAGGER_UI_DIST = ROOT / "node_modules" / "swagger-ui-dist"


class _Loader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags read as plain values."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def get(path: str) -> dict[str, Any]:
    event = copy.deepcopy(json.loads((ROOT / "events" / "getConfigByCode.json").read_text()))
    event |= {"httpMethod": "GET", "path": path, "resource": path, "body": None, "headers": {}}
    event["multiValueHeaders"] = {}
    return docs_app.lambda_handler(event, LambdaContext())


@pytest.fixture
def layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """/opt/api-docs as `make api-docs-layer` fills it: the page's assets and openapi.json."""
    assert SWAGGER_UI_DIST.is_dir(), "the npm tools are not installed: make node-tools (make test and integration do)"
    for name in ASSETS:
        shutil.copy(SWAGGER_UI_DIST / name, tmp_path)
    shutil.copy(ROOT / "openapi.json", tmp_path)
    monkeypatch.setattr(docs_app, "DOCS_DIR", tmp_path)
    return tmp_path


def test_the_docs_function_and_its_layer_exist_only_when_enable_api_docs_is_true() -> None:
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_Loader)  # noqa: S506 - SafeLoader's subclass
    assert template["Parameters"]["EnableApiDocs"]["Default"] == "false"
    assert "ApiDocsEnabled" in template["Conditions"]
    for name in ("ApiDocsFunction", "ApiDocsLayer"):
        assert template["Resources"][name]["Condition"] == "ApiDocsEnabled"


def test_the_page_its_assets_and_the_document_come_from_the_layer(layer: Path) -> None:
    page = get("/docs")
    assert page["statusCode"] == 200
    assert 'src="docs/swagger-ui-bundle.js"' in page["body"]
    for name in ASSETS:
        asset = get(f"/docs/{name}")
        assert asset["statusCode"] == 200
        assert asset["body"] == (layer / name).read_text()
    document = get("/openapi.json")
    assert json.loads(document["body"]) == json.loads((ROOT / "openapi.json").read_text())


def test_nothing_else_is_served(layer: Path) -> None:
    for path in ("/docs/package.json", "/docs/..%2Fopenapi.json"):
        answer = get(path)
        assert (answer["statusCode"], json.loads(answer["body"])) == (
            404,
            {"statusCode": 404, "message": "No such file."},
        )


def test_the_root_points_at_the_docs_and_the_document_of_its_stage() -> None:
    event_host = "abc123.execute-api.us-east-1.amazonaws.com"
    event = copy.deepcopy(json.loads((ROOT / "events" / "getConfigByCode.json").read_text()))
    event |= {"httpMethod": "GET", "path": "/", "resource": "/", "body": None, "headers": {"Host": event_host}}
    event["multiValueHeaders"] = {"Host": [event_host]}
    stage = event["requestContext"]["stage"]

    answer = docs_app.lambda_handler(event, LambdaContext())

    assert answer["statusCode"] == 200
    body = json.loads(answer["body"])
    assert body["docs"] == f"https://{event_host}/{stage}/docs"
    assert body["openapi"] == f"https://{event_host}/{stage}/openapi.json"
    assert "POST /functions/{operation}" in body["message"]
