"""Lambda's Python runtime, locally: each function scales out over sandbox processes, reused warm.

A sandbox (local/lambda_sandbox.py) imports its handler once, then answers invocations over a pipe; one that
crashes or times out is thrown away, as Lambda throws away the execution environment.

`make run`'s sandboxes are forked from a server process that has imported the third-party libraries every
function uses (PRELOADED_LIBRARIES): a sandbox then imports only the layer and its handler, under its own
environment, in a fifth of the CPU. `make invoke` starts a fresh interpreter instead (spawn), so the init
duration it reports is the whole of Lambda's, libraries included.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import multiprocessing
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from local.lambda_sandbox import sandbox_main
from local.resources import FunctionSpec
from local.template import LOCAL_ACCOUNT_ID, LOCAL_REGION

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, SpawnContext
    from multiprocessing.process import BaseProcess

DEFAULT_CONCURRENCY = 8  # sandboxes per function at most (about 110 MB each)
SANDBOX_INIT_TIMEOUT_SECONDS = 60
SANDBOX_IDLE_SECONDS = 300  # an idle sandbox is stopped after this; the last one of a function stays warm

log = logging.getLogger("local.run")  # one logger for the whole runner

# Third-party packages only: none reads the function's environment when imported. The layer (svcconf) and the
# handlers are never preloaded, since they may. A name that does not import is skipped by the fork server.
PRELOADED_LIBRARIES = (
    "anthropic",
    "aws_lambda_powertools.event_handler",
    "aws_lambda_powertools.logging",
    "aws_lambda_powertools.metrics",
    "aws_lambda_powertools.utilities.batch",
    "aws_lambda_powertools.utilities.idempotency",
    "aws_lambda_powertools.utilities.parameters",
    "boto3",
    "jwt",
    "pydantic",
    "requests",
    "local.lambda_sandbox",
)


# ---------------------------------------------------------------- the runner's side


def _sandbox_context(preload_libraries: bool) -> SpawnContext | ForkServerContext:
    """Neither start inherits the runner's moto or server threads: spawn starts a fresh interpreter; the fork
    server is a single-threaded process of its own that imported only PRELOADED_LIBRARIES."""
    if not preload_libraries:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOADED_LIBRARIES))
    return context


class InvocationError(Exception):
    """The function did not produce a result: it raised, crashed, timed out or failed to start."""

    def __init__(self, message: str, *, timed_out: bool = False, throttled: bool = False):
        super().__init__(message)
        self.timed_out = timed_out
        self.throttled = throttled
        self.at = time.monotonic()


@dataclass(eq=False)
class _Sandbox:
    process: BaseProcess
    conn: Connection
    idle_since: float = 0.0

    def stop(self) -> None:
        self.ask_to_stop()
        self.wait_stopped()

    def ask_to_stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)

    def wait_stopped(self, deadline: float | None = None) -> None:
        """Waits for the sandbox to end (until `deadline` on the monotonic clock, else 2 s), then kills it."""
        self.process.join(timeout=2 if deadline is None else max(0.0, deadline - time.monotonic()))
        self.kill()

    def kill(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if self.process.is_alive():
                self.process.kill()
                self.process.join(timeout=2)
        with contextlib.suppress(OSError):
            self.conn.close()


@dataclass(eq=False)
class _Waiter:
    """A caller waiting for a sandbox: handed one (or its start's failure) in arrival order."""

    ready: threading.Event = field(default_factory=threading.Event)
    sandbox: _Sandbox | None = None
    error: InvocationError | None = None


@dataclass
class FunctionRuntime:
    """A function's sandboxes, scaled like Lambda: a request that finds none free starts another, up to a cap.

    Free sandboxes are reused warm (the most recently used first); callers that find none wait in arrival order
    and take the first that becomes free, whether a busy one finishing or the one their arrival started. At the
    cap (`concurrency`, like a function's reserved concurrency) callers only wait, up to the caller's limit, and
    are then throttled. A sandbox idle for `idle_seconds` is stopped, as Lambda reclaims idle environments.
    """

    spec: FunctionSpec
    function_name: str
    environ: dict[str, str]
    sys_path: list[str]
    concurrency: int = DEFAULT_CONCURRENCY
    idle_seconds: float = SANDBOX_IDLE_SECONDS
    preload_libraries: bool = True  # forked from the libraries' server; False: a fresh interpreter (spawn)
    # The seconds the runner's clock is ahead of real time, sent with each invocation: the layer's now
    # (svcconf.clock) moves with it. None: real time, the layer's clock untouched.
    clock_offset: Callable[[], float] | None = None
    _idle: list[_Sandbox] = field(default_factory=list)
    _waiters: collections.deque[_Waiter] = field(default_factory=collections.deque)
    _count: int = 0  # sandboxes started or starting
    _starting: int = 0
    _peak: int = 0  # the most sandboxes this function ran at once
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _all: set[_Sandbox] = field(default_factory=set)
    _closed: bool = False

    @property
    def arn(self) -> str:
        return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:function:{self.function_name}"

    @property
    def sandboxes(self) -> int:
        return self._count

    @property
    def peak(self) -> int:
        return self._peak

    def prewarm(self) -> None:
        with self._lock:
            if self._count == 0:
                self._start_one()

    def start_cold(self, wait_seconds: float) -> None:
        """Starts a sandbox (a cold start: interpreter, imports, module setup) and leaves it idle for the next
        invocation, so that `make invoke` can time the init and the invocation apart, as Lambda reports them."""
        self._release(self._acquire(wait_seconds))

    def invoke(self, event: dict[str, Any], *, wait_cap_seconds: float | None = None) -> Any:
        """Run the handler on the event in a free sandbox; its JSON result, or InvocationError."""
        timeout = float(self.spec.timeout)
        wait = min(timeout, wait_cap_seconds) if wait_cap_seconds else timeout
        sandbox = self._acquire(wait_cap_seconds or timeout)
        context = {
            "function_name": self.function_name,
            "function_version": "$LATEST",
            "invoked_function_arn": self.arn,
            "memory_limit_in_mb": self.spec.memory_size,
            "aws_request_id": str(uuid.uuid4()),
            "log_group_name": f"/aws/lambda/{self.function_name}",
            "log_stream_name": f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{sandbox.process.pid}",
            "deadline_epoch": time.time() + timeout,
        }
        try:
            sandbox.conn.send((event, context, self.clock_offset() if self.clock_offset else 0.0))
            if not sandbox.conn.poll(wait + 1):  # one second for the pipe on top of the function's time
                self._discard(sandbox)  # like Lambda: a timed-out sandbox is not reused
                raise InvocationError(f"Task timed out after {wait:.2f} seconds", timed_out=True)
            status, payload = sandbox.conn.recv()
        except (EOFError, OSError) as exc:
            self._discard(sandbox)
            raise InvocationError("the sandbox process exited during the invocation") from exc
        self._release(sandbox)
        if status != "ok":
            raise InvocationError(f"{payload['errorType']}: {payload['errorMessage']}")
        return json.loads(payload)

    def close(self) -> None:
        """Refuses new work and asks every sandbox to stop; `wait_closed` waits for them. Two steps, so a runner
        stops all its functions' sandboxes at once: one at a time, each interpreter's exit adds up to seconds."""
        with self._lock:
            self._closed = True
            sandboxes = list(self._all)
            waiters = list(self._waiters)
            self._waiters.clear()
            for waiter in waiters:
                waiter.error = InvocationError("the runner is shutting down")
                waiter.ready.set()
        for sandbox in sandboxes:
            sandbox.ask_to_stop()

    def wait_closed(self, deadline: float) -> None:
        """Waits for the sandboxes `close` asked to stop until `deadline` (monotonic), then kills what is left."""
        with self._lock:
            sandboxes = list(self._all)
        for sandbox in sandboxes:
            sandbox.wait_stopped(deadline)

    def _start_one(self) -> None:  # called with the lock held
        self._count += 1
        self._starting += 1
        self._peak = max(self._peak, self._count)
        threading.Thread(target=self._start_sandbox, name=f"start-{self.function_name}", daemon=True).start()

    def _start_sandbox(self) -> None:
        context = _sandbox_context(self.preload_libraries)
        parent_conn, child_conn = context.Pipe()
        setup = {
            "environ": self.environ,
            "sys_path": self.sys_path,
            "module": self.spec.handler_module,
            "attr": self.spec.handler_attr,
            "moved_clock": self.clock_offset is not None,
        }
        process = context.Process(
            target=sandbox_main, args=(child_conn, setup), name=f"sandbox-{self.function_name}", daemon=True
        )
        sandbox = _Sandbox(process, parent_conn)
        with self._lock:
            self._all.add(sandbox)
        try:
            process.start()
            child_conn.close()
            if not parent_conn.poll(SANDBOX_INIT_TIMEOUT_SECONDS):
                raise InvocationError(f"init did not finish within {SANDBOX_INIT_TIMEOUT_SECONDS} s")
            status, detail = parent_conn.recv()
            if status != "ready":
                raise InvocationError(f"init failed: {detail}")
        except (InvocationError, EOFError, OSError) as exc:
            message = str(exc) if isinstance(exc, InvocationError) else "init failed: the sandbox process exited"
            if not self._closed:  # at shutdown, a sandbox still starting is stopped on purpose: no failure to report
                log.error("%s: %s", self.function_name, message)
            self._discard(sandbox)
            with self._lock:
                self._starting -= 1
                if self._waiters:  # the longest-waiting caller gets the failure, as its cold start would
                    waiter = self._waiters.popleft()
                    waiter.error = InvocationError(message)
                    waiter.ready.set()
                self._scale_out()  # the others are not left waiting on a start that is gone
            return
        with self._lock:
            self._starting -= 1
        self._release(sandbox)
        with self._lock:
            self._scale_out()  # callers still waiting: the next one

    def _scale_out(self) -> None:  # called with the lock held
        """One more sandbox while callers wait, one start at a time, up to the cap.

        Lambda also scales out at a bounded rate; here one start at a time keeps cold starts (about 1-2 s of CPU
        each) from starving the sandboxes that are serving, on a machine with few cores.
        """
        if self._waiters and self._starting == 0 and self._count < self.concurrency and not self._closed:
            self._start_one()

    def _release(self, sandbox: _Sandbox) -> None:
        """A free sandbox: to the longest-waiting caller, else back to the pool; idle ones past their time stop."""
        now = time.monotonic()
        stale: list[_Sandbox] = []
        with self._lock:
            if self._closed:
                stale = [sandbox]
            elif self._waiters:
                waiter = self._waiters.popleft()
                waiter.sandbox = sandbox
                waiter.ready.set()
            else:
                sandbox.idle_since = now
                self._idle.append(sandbox)
                stale = [s for s in self._idle[:-1] if now - s.idle_since > self.idle_seconds]
                for old in stale:
                    self._idle.remove(old)
                    self._all.discard(old)
                    self._count -= 1
        if stale:

            def reclaim() -> None:
                for old in stale:
                    old.stop()

            threading.Thread(target=reclaim, name="reclaim", daemon=True).start()

    def _discard(self, sandbox: _Sandbox) -> None:
        sandbox.kill()
        with self._lock:
            if sandbox in self._all:
                self._all.discard(sandbox)
                self._count -= 1

    def _acquire(self, wait_seconds: float) -> _Sandbox:
        while True:
            waiter: _Waiter | None = None
            with self._lock:
                if self._closed:
                    raise InvocationError("the runner is shutting down")
                if self._idle:
                    sandbox = self._idle.pop()  # the most recently used: the warmest
                else:
                    waiter = _Waiter()
                    self._waiters.append(waiter)
                    self._scale_out()
            if waiter is not None:
                sandbox = self._wait(waiter, wait_seconds)
            if sandbox.process.is_alive():
                return sandbox
            self._discard(sandbox)  # died while idle: take or start another

    def _wait(self, waiter: _Waiter, wait_seconds: float) -> _Sandbox:
        if not waiter.ready.wait(wait_seconds):
            with self._lock:  # handed a sandbox or an error under the lock, so is_set() decides here
                if not waiter.ready.is_set():
                    self._waiters.remove(waiter)
                    raise InvocationError(
                        f"no sandbox became free within {wait_seconds:g} s ({self._count} running)", throttled=True
                    )
        if waiter.error is not None:
            raise waiter.error
        assert waiter.sandbox is not None
        return waiter.sandbox
