"""`make run`: the service on 127.0.0.1 without Docker, read from template.yaml.

local/runner.py starts the services, local/settings.py reads the variables, local/banner.py prints what is ready.
Top-level imports stay light: every sandbox process imports this module when it starts.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from local.banner import banner, print_settings, runner_state, write_state
from local.runner import Runner
from local.settings import DEFAULT_PORT, TEMPLATE_PATH, LocalSettings
from local.template import (
    load_template,
)

log = logging.getLogger("local.run")

# ---------------------------------------------------------------- entry point


def _loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise SystemExit(f"--host {host}: the local runner listens on IPv4 loopback addresses (127.x.x.x) only")
    return host


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.run", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=None, help=f"API port (default: $PORT or {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--state-file", type=Path, help="write URLs, tokens and the sample code here once ready")
    parser.add_argument("--template", type=Path, default=TEMPLATE_PATH, help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    log.setLevel(logging.INFO)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]

    port = args.port if args.port is not None else int(os.environ.get("PORT") or DEFAULT_PORT)
    settings = LocalSettings.from_environ(dict(os.environ))
    runner = Runner(
        tpl=load_template(args.template), settings=settings, host=_loopback(args.host), port=port, quiet=args.quiet
    )

    def request_stop(signum: int, _frame: Any) -> None:
        runner.stop_event.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        print(f"Starting the service of {args.template.name} without Docker:", flush=True)
        seeded = runner.start()
        print(f"PORT: {runner.port}" + (" (local default)" if args.port is None and not os.environ.get("PORT") else ""))
        print_settings(runner)
        state = runner_state(runner)
        state["sample_code"], state["sample_code_expires_at"] = seeded.sample_code, seeded.sample_code_expires_at
        for problem in seeded.problems:
            print(f"could not seed: {problem}", file=sys.stderr)
        print(banner(runner, state, seeded))
        if args.state_file:
            write_state(args.state_file, state)
        print(f"Ready on {runner.base_url}", flush=True)
        while not runner.stop_event.wait(0.5):
            pass
        print("Shutting down", flush=True)
    except OSError as exc:
        hint = (
            f" (is something else listening on {runner.host}:{port}? set PORT)" if exc.errno == errno.EADDRINUSE else ""
        )
        print(f"could not start: {exc}{hint}", file=sys.stderr)
        return 1
    finally:
        runner.shutdown()
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is stopped by now; the interpreter's teardown of moto and the layer would add a second or more.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
