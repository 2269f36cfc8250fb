"""The sandbox on loopback HTTP: a threading server in the background, one keep-alive connection per client."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from local.chat_sandbox.dispatch import handle
from local.chat_sandbox.protocol import API_ROOT
from local.chat_sandbox.state import SandboxState


class _Handler(BaseHTTPRequestHandler):
    server: SandboxServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's session pools connections
    timeout = 30  # an idle keep-alive connection ends its thread after this
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms delayed-ACK stalls

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, headers, payload = handle(self.server.state, self.command, self.path, dict(self.headers.items()), body)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload and self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server's naming

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the state keeps a structured log; stderr stays quiet in tests


class SandboxServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: SandboxState):
        self.state = state
        super().__init__(address, _Handler)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.socket.getsockname()[:2]  # the stubs allow bytes in server_address
        return f"http://{host}:{port}{API_ROOT}"

    def start(self) -> SandboxServer:
        self._thread = threading.Thread(target=self.serve_forever, name="chat-sandbox", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop serving and release the port."""
        super().shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def start_sandbox(
    host: str = "127.0.0.1", port: int = 0, fixture: dict[str, Any] | str | Path | None = None, **config: Any
) -> tuple[SandboxServer, str]:
    """Start the sandbox in a background thread; returns the server and the API root URL."""
    server = SandboxServer((host, port), SandboxState(fixture, **config)).start()
    return server, server.base_url
