"""Running a plan's steps side by side: one step at a time per bucket (`step_graph.Lane`), each once the steps it
waits for are done (`step_graph.dependencies`), the bucket with the most steps left first (it sets the floor).

How fast each bucket goes is the client's: its limiter waits on each bucket's `X-RateLimit-*` headers and on the
global rate, so the one step a lane has in flight is what keeps a bucket the platform has not described yet from
being overrun. A step's journaling after its request (what `execute` answers) runs once its bucket and the steps
waiting for it have been let go: the id it made is known, and the next request of the bucket need not wait for a
database write. When a step stops the run (the platform asks to wait past the call's time, the bot is gone, the
deployment is cancelled) or the time runs low, no step starts any more; the steps already sent end (and are
checkpointed by their caller), then the first exception is raised again.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor

from svcconf.deploy_engine.step_graph import Lane, dependencies, lane_of
from svcconf.deploy_engine.steps import Step

# Steps in flight at once: below the client's connection pool (16), which the member grants beside them share.
MAX_STEPS_IN_FLIGHT = 12


# Runs a step's request; what it answers (its journaling) runs after the step's bucket is free for the next.
Execute = Callable[[Step], Callable[[], None] | None]


class StepsStopped(Exception):
    """The run stopped before the step that makes what was asked for ran."""


class StepScheduler:
    def __init__(self, steps: list[Step], guild_id: str, *, in_flight: int = MAX_STEPS_IN_FLIGHT):
        self.steps = steps
        self.waits = dependencies(steps)
        self.lanes = [lane_of(step, guild_id) for step in steps]
        self.in_flight = in_flight
        self._changed = threading.Condition()
        self._done: set[int] = set()  # ended without raising, or skipped
        self._busy: set[Lane] = set()
        self._running = 0
        self._stopped = False  # by the time running low or a step's failure
        self._ended = False
        self._error: BaseException | None = None
        self._last_of: dict[str, int] = {step.key: index for index, step in enumerate(steps)}

    @property
    def stopped(self) -> bool:
        """Whether the run stopped before its last step (time ran low, a step failed the run)."""
        return self._stopped

    def run(self, execute: Execute, *, has_time: Callable[[], bool], skip: set[str]) -> bool:
        """Runs `execute` for each step not in `skip` (by key); False when the time ran out before the last one."""
        pending: dict[Lane, list[int]] = {}
        for index, step in enumerate(self.steps):
            if step.key in skip:
                self._done.add(index)
            else:
                pending.setdefault(self.lanes[index], []).append(index)
        with ThreadPoolExecutor(self.in_flight, thread_name_prefix="step") as pool, self._changed:
            while True:
                if not self._stopped:
                    self._start_ready(pool, pending, execute, has_time)
                if not self._running:
                    break
                self._changed.wait()
            self._ended = True  # nothing more runs: a member grant waiting for a step not reached learns it
            self._changed.notify_all()
        if self._error is not None:
            raise self._error
        return not any(pending.values())

    def has_run(self, key: str) -> bool:
        """Whether what the plan writes to `key` is done (True when no step of it writes `key`), without waiting."""
        index = self._last_of.get(key)
        return index is None or index in self._done

    def wait_any(self, keys: list[str]) -> None:
        """Returns once the step of one of `keys` has run, or the run stopped or ended."""
        with self._changed:
            self._changed.wait_for(lambda: self._stopped or self._ended or any(self.has_run(key) for key in keys))

    def wait_for(self, key: str) -> bool:
        """Waits until the last step that writes `key` has ended; False when the run stopped before it ran (True at
        once when no step of this plan writes it)."""
        index = self._last_of.get(key)
        if index is None:
            return True
        with self._changed:
            self._changed.wait_for(lambda: index in self._done or self._stopped or self._ended)
            return index in self._done

    # -- internals (called with the condition held) ------------------------------------------------------------

    def _start_ready(
        self,
        pool: ThreadPoolExecutor,
        pending: dict[Lane, list[int]],
        execute: Execute,
        has_time: Callable[[], bool],
    ) -> None:
        for lane in sorted((lane for lane in pending if lane not in self._busy), key=lambda lane: -len(pending[lane])):
            if self._running >= self.in_flight:
                return
            index = next(self._ready(pending[lane]), None)
            if index is None:
                continue
            if not has_time():
                self._stopped = True
                return
            pending[lane].remove(index)
            if not pending[lane]:
                del pending[lane]
            self._busy.add(lane)
            self._running += 1
            pool.submit(contextvars.copy_context().run, self._step, index, execute)

    def _ready(self, lane: list[int]) -> Iterator[int]:
        return (index for index in lane if self.waits[index] <= self._done)

    def _step(self, index: int, execute: Execute) -> None:
        then: Callable[[], None] | None = None
        try:
            then = execute(self.steps[index])
        except BaseException as raised:  # raised again by `run` once the other steps in flight end
            self._ended_step(index, raised, lane_only=False)
            return
        # Its bucket and what waits for it may go on while it is journaled (`then`): the id it made is known.
        self._ended_step(index, None, lane_only=then is not None)
        if then is not None:
            error: BaseException | None = None
            try:
                then()
            except BaseException as raised:
                error = raised
            with self._changed:
                self._failed(error)
                self._running -= 1
                self._changed.notify_all()

    def _ended_step(self, index: int, error: BaseException | None, *, lane_only: bool) -> None:
        with self._changed:
            if error is None:
                self._done.add(index)
            self._failed(error)
            self._busy.discard(self.lanes[index])
            if not lane_only:
                self._running -= 1
            self._changed.notify_all()

    def _failed(self, error: BaseException | None) -> None:
        if error is not None and self._error is None:
            self._error, self._stopped = error, True


class AwaitedIds(Mapping[str, str]):
    """The ids a plan's steps give their objects, each read once the step that makes it has ended: what the member
    grants beside the steps name. `StepsStopped` when the run stopped before that step ran."""

    def __init__(self, ids: Mapping[str, str], scheduler: StepScheduler):
        self._ids = ids
        self._scheduler = scheduler

    def made(self, key: str) -> bool:
        """Whether the object's id can be read without waiting (its step has run, or none of the plan makes it)."""
        return self._scheduler.has_run(key)

    def wait_any(self, keys: list[str]) -> None:
        self._scheduler.wait_any(keys)

    def __getitem__(self, key: str) -> str:
        if not self._scheduler.wait_for(key):
            raise StepsStopped(key)
        return self._ids[key]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._ids))

    def __len__(self) -> int:
        return len(self._ids)
