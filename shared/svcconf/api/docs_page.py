"""The interactive API documentation at /docs: Swagger UI on openapi.json, its assets served beside the page.

The local runner (`make run`) and the optional ApiDocsFunction in AWS (stack parameter EnableApiDocs) serve the
same page; both serve Swagger UI's files themselves, from npm's swagger-ui-dist (package.json pins it), never
from a CDN. The page points "Try it out" at the server that served it.
"""

from __future__ import annotations

# The files of swagger-ui-dist the page loads, with their media types: nothing else is served from it. All text,
# so API Gateway passes them through without binary media types.
ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
}


def root_answer(base_url: str) -> dict[str, str]:
    """GET / : where to start, rather than a bare 404."""
    return {
        "service": "Server Configuration Service",
        "message": "Every operation is POST /functions/{operation} with a JSON body: try them at docs, "
        "generate a client from openapi.",
        "docs": f"{base_url}/docs",
        "openapi": f"{base_url}/openapi.json",
    }


PAGE = """<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Server Configuration Service API</title>
    <link rel="stylesheet" type="text/css" href="docs/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script>
      // The API lives where this page does (the runner, or the API's stage in AWS): "Try it out" calls it.
      const base = window.location.href.split(/[?#]/)[0].replace(/\\/docs\\/?$/, "");
      fetch(base + "/openapi.json")
        .then((answer) => answer.json())
        .then((spec) => {
          spec.servers = [{url: base, description: "This server"}];
          window.ui = SwaggerUIBundle({spec, dom_id: "#swagger-ui", deepLinking: true, tryItOutEnabled: true});
        });
    </script>
  </body>
</html>
"""
