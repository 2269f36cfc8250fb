"""GET /docs, its assets and /openapi.json in AWS: deployed only when the stack parameter EnableApiDocs is true.

Swagger UI's files and openapi.json come from ApiDocsLayer (`make build` assembles it from node_modules and the
committed openapi.json), so the page loads nothing from a CDN. Locally, `make run` serves the same page itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from svcconf.api.docs_page import ASSETS, PAGE, root_answer

DOCS_DIR = Path("/opt/api-docs")  # where Lambda unpacks ApiDocsLayer's api-docs/ folder
OPENAPI_FILE = "openapi.json"

app = APIGatewayRestResolver()


@app.get("/", include_in_schema=False)
def root() -> Response[dict[str, str]]:
    host, stage = app.current_event.headers.get("Host", ""), app.current_event.request_context.stage
    return Response(200, content_types.APPLICATION_JSON, root_answer(f"https://{host}/{stage}"))


@app.get("/docs", include_in_schema=False)
def docs_page() -> Response[str]:
    return Response(200, "text/html; charset=utf-8", PAGE)


@app.get("/docs/<asset>", include_in_schema=False)
def docs_asset(asset: str) -> Response[str]:
    if asset not in ASSETS:
        raise NotFoundError("No such file.")
    return Response(200, ASSETS[asset], (DOCS_DIR / asset).read_text())


@app.get(f"/{OPENAPI_FILE}", include_in_schema=False)
def openapi_document() -> Response[str]:
    return Response(200, content_types.APPLICATION_JSON, (DOCS_DIR / OPENAPI_FILE).read_text())


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)
