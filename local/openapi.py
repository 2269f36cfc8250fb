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
    "Every operation is POST /functions/<operation> with a JSON body; errors share one body "
    "(error, message, code, details on 400, requestId on 5xx)."
)


def generate() -> str:
    # Handlers read settings at import; none of these values is used to describe the API.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    sys.path[:0] = [str(ROOT / "shared"), str(ROOT)]

    from aws_lambda_powertools.event_handler.openapi import OpenAPIMerge

    from local.template import api_functions, load_template
    from svcconf.api import SECURITY_SCHEMES

    merge = OpenAPIMerge(
        title=TITLE,
        version=VERSION,
        description=DESCRIPTION,
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
