"""Inside a Lambda sandbox process: the function's environment, its handler imported once, then invocations.

The runner's side (local/lambda_runtime.py) starts these processes and talks to them over a pipe. This module is the
whole of what a sandbox imports from `local/` before its handler: the standard library only (and, when the runner
moves the clock, the layer's `svcconf.clock`).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection


@dataclass
class LambdaContext:
    """The attributes and method of the Lambda Python runtime's context object that handlers use."""

    function_name: str
    function_version: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str
    log_group_name: str
    log_stream_name: str
    deadline_epoch: float
    identity: Any = None
    client_context: Any = None
    tenant_id: str | None = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline_epoch - time.time()) * 1000))


def _exit_now() -> None:
    """Ends the sandbox without the interpreter's teardown, as Lambda ends an environment: a function that
    imported boto3, pydantic and Powertools takes a quarter of a second to tear down, times every sandbox."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)


def _move_the_layers_clock(offset: list[float]) -> None:
    """The layer's now (svcconf.clock.utc_now) `offset[0]` seconds ahead of real time, set before the handler's
    modules import it by name; a function without the layer keeps real time."""
    try:
        clock: Any = importlib.import_module("svcconf.clock")
    except ImportError:
        return
    real_now = clock.utc_now
    clock.utc_now = lambda: real_now() + timedelta(seconds=offset[0])


def sandbox_main(conn: Connection, setup: dict[str, Any]) -> None:
    """One Lambda sandbox: the function's environment, its handler imported once, then invocations."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the runner shuts us down
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    os.environ.clear()
    os.environ.update(setup["environ"])
    # Metrics are disabled locally; Powertools still warns on each invocation that it has none to publish.
    warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)
    sys.path[:0] = [p for p in setup["sys_path"] if p not in sys.path]
    clock_offset = [0.0]  # seconds ahead of real time, as the runner sent with the invocation
    try:
        if setup.get("moved_clock"):
            _move_the_layers_clock(clock_offset)
        handler = getattr(importlib.import_module(setup["module"]), setup["attr"])
    except BaseException as exc:
        traceback.print_exc()
        with contextlib.suppress(OSError):
            conn.send(("init_error", f"{type(exc).__name__}: {exc}"))
        return
    try:
        conn.send(("ready", os.getpid()))
    except OSError:
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the runner is gone
        if message is None:
            _exit_now()
        event, context_fields, clock_offset[0] = message
        try:
            result = handler(event, LambdaContext(**context_fields))
            reply: tuple[str, Any] = ("ok", json.dumps(result))
        except Exception as exc:
            traceback.print_exc()
            reply = ("error", {"errorType": type(exc).__name__, "errorMessage": str(exc)})
        try:
            conn.send(reply)
        except OSError:
            return
