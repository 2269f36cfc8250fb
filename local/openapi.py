"""Writes openapi.json from the handlers' models (`make openapi`), or checks it is current (`--check`).

The operations are the API functions of template.yaml; each handler's resolver describes itself, and
Powertools' OpenAPIMerge joins them into one document with both security schemes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OPENAPI_FILE = ROOT / "openapi.json"
TITLE = "Server Configuration Service"
VERSION = "1.0.0"
DESCRIPTION = (
    "Build, validate, deploy and back up the configuration of servers on the chat platform. "
    # Markdown: in a code span, and with braces, since Swagger UI drops `<operation>` as an HTML tag.
    "Every operation is `POST /functions/{operation}` with a JSON body; errors share one body "
    "(error, message, code, details on 400, requestId on 5xx), and every answer carries `x-request-id`."
)
TAGS = {
    "Sign-in": "Sign in with the chat platform and link the chat account to the web app's user.",
    "Servers": "The user's servers on the chat platform and its invitations.",
    "AI assistant": "Generate and change a server configuration in a conversation with the AI.",
    "Deployments": "Plan, deploy, read and roll back a configuration in a server.",
    "Bot": "What the chat platform's bot calls with its token: configurations by code, backups.",
    "Templates": "The template library the AI assistant suggests from.",
}
BASE_URL_DOC = (
    "Where the service runs: the local runner (`make run`, the default), or the API's invoke URL in AWS "
    "(the stack's output ApiBaseUrl, e.g. https://abc123.execute-api.us-east-1.amazonaws.com/dev)."
)


def generate() -> str:
    # Handlers read settings at import; none of these values is used to describe the API.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]

    from aws_lambda_powertools.event_handler.openapi import OpenAPIMerge
    from aws_lambda_powertools.event_handler.openapi.models import Contact, License, Server, ServerVariable, Tag

    from local.resources import api_functions
    from local.template import load_template
    from svcconf.api.responses import SECURITY_SCHEMES

    merge = OpenAPIMerge(
        title=TITLE,
        version=VERSION,
        description=DESCRIPTION,
        tags=[Tag(name=name, description=text) for name, text in TAGS.items()],
        servers=[
            Server(
                url="{base_url}",
                description="The service",
                variables={"base_url": ServerVariable(default="http://127.0.0.1:3000", description=BASE_URL_DOC)},
            )
        ],
        contact=Contact(name="Server Configuration Service maintainers"),
        license_info=License(name="Proprietary", identifier="LicenseRef-Proprietary"),
        security_schemes=SECURITY_SCHEMES,
        on_conflict="error",
    )
    for function in sorted(api_functions(load_template(ROOT / "template.yaml")), key=lambda f: f.operation):
        app = importlib.import_module(function.handler_module).app
        merge.add_schema(app.get_openapi_schema(title=TITLE, version=VERSION, security_schemes=SECURITY_SCHEMES))
    return json.dumps(_without_422(json.loads(merge.get_openapi_json_schema())), indent=2, sort_keys=True) + "\n"


def _without_422(document: dict[str, Any]) -> dict[str, Any]:
    """Powertools documents a 422 for every validating route; this API answers 400 with ErrorBody instead."""
    for operations in document["paths"].values():
        for operation in operations.values():
            operation["responses"].pop("422", None)
    schemas = document["components"]["schemas"]
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        if f'"#/components/schemas/{name}"' not in json.dumps({k: v for k, v in document.items() if k != "components"}):
            schemas.pop(name, None)
    return document


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when openapi.json differs from the handlers")
    args = parser.parse_args()
    document = generate()
    if args.check:
        if not OPENAPI_FILE.exists() or OPENAPI_FILE.read_text() != document:
            print("openapi.json is not what the handlers generate: run `make openapi` and commit it.", file=sys.stderr)
            return 1
        print("openapi.json is current.")
        return 0
    OPENAPI_FILE.write_text(document)
    print(f"wrote {OPENAPI_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
