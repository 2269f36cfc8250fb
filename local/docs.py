"""/docs on the local runner: Swagger UI's page (svcconf.api.docs_page), its assets from node_modules
(make node-tools)."""

from __future__ import annotations

from pathlib import Path

SWAGGER_UI_DIST = Path(__file__).resolve().parents[1] / "node_modules" / "swagger-ui-dist"
MISSING = "Swagger UI's assets are not installed: run `make node-tools` (npm ci)."


def root_answer(base_url: str) -> dict[str, str]:
    """GET / : a pointer to /docs and /openapi.json (svcconf.api.docs_page, as in AWS)."""
    from svcconf.api.docs_page import root_answer as pointer

    return pointer(base_url)


def is_docs_path(path: str) -> bool:
    return path == "/docs" or path.startswith("/docs/")


def docs_answer(path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) for a GET of /docs or of one of its assets."""
    # The layer is importable once the runner has started its functions (as the seeding does).
    from svcconf.api.docs_page import ASSETS, PAGE

    if path == "/docs":
        return 200, "text/html; charset=utf-8", PAGE.encode()
    name = path.removeprefix("/docs/")
    if name not in ASSETS:
        return 404, "text/plain; charset=utf-8", b"No such file."
    asset = SWAGGER_UI_DIST / name
    if not asset.is_file():
        return 404, "text/plain; charset=utf-8", MISSING.encode()
    return 200, ASSETS[name], asset.read_bytes()
