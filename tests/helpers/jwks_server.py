"""A JWKS document served over loopback HTTP, as an identity provider serves its public keys."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JwksServer:
    """Serves `jwks` at `url` on loopback, counting fetches; `shutdown()` when done."""

    def __init__(self, jwks: dict):
        outer = self
        self.fetches = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.fetches += 1
                payload = json.dumps(jwks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def shutdown(self) -> None:
        self.server.shutdown()
        self.server.server_close()
