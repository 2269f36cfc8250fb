"""The step scheduler (`scheduler.StepScheduler`) over a real plan, its `execute` a recorder that sleeps a little and
notes each step's thread, lane, start and end: one step per lane at a time, lanes side by side, no step before what
it waits for has ended; when the time runs low or a step fails, nothing more starts and what is in flight ends; the
ids a step makes are read beside the run only once that step has ended (`AwaitedIds`)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from local.samples import large_community
from svcconf.config import ServerConfig
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.scheduler import AwaitedIds, StepScheduler, StepsStopped
from svcconf.deploy_engine.step_graph import Lane
from svcconf.deploy_engine.steps import Step
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder

STEP_SECONDS = 0.02
UPDATED = 4  # live channels whose topic the plan changes: a lane each


def plan_steps() -> list[Step]:
    """8 roles, 3 private categories and 12 channels to create (two lanes), and 4 live channels to update."""
    guild = GuildBuilder()
    for index in range(UPDATED):
        guild.channel(f"old-{index}", topic="Old")
    body: dict[str, Any] = large_community(roles=8, categories=3, channels=12)
    body["channels"] = [{"name": f"old-{index}", "topic": "New"} for index in range(UPDATED)]
    return plan_deployment(guild.build(), ServerConfig.model_validate(body)).steps


@dataclass
class Run:
    key: str
    lane: Lane
    thread: str
    start: float
    end: float


class Recorder:
    """A fake `execute`: each step sleeps (longer for the keys in `slow`), raises for `fail`, and is noted."""

    def __init__(
        self,
        scheduler: StepScheduler,
        *,
        slow: dict[str, float] | None = None,
        fail: dict[str, BaseException] | None = None,
    ):
        self.lanes = {step.key: lane for step, lane in zip(scheduler.steps, scheduler.lanes, strict=True)}
        self.slow, self.fail = slow or {}, fail or {}
        self.runs: list[Run] = []
        self.ids: dict[str, str] = {}  # what the steps made: filled as each ends, like PlanApplier.ids
        self.failed_at: float | None = None
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, step: Step) -> None:
        start = time.monotonic()
        self.calls.append(step.key)
        time.sleep(self.slow.get(step.key, STEP_SECONDS))
        if step.key in self.fail:
            self.failed_at = time.monotonic()
            raise self.fail[step.key]
        self.ids[step.key] = f"id-of-{step.key}"
        end = time.monotonic()
        with self._lock:
            self.runs.append(Run(step.key, self.lanes[step.key], threading.current_thread().name, start, end))

    def by_key(self) -> dict[str, Run]:
        return {run.key: run for run in self.runs}


def overlapping(runs: list[Run]) -> list[tuple[Run, Run]]:
    ordered = sorted(runs, key=lambda run: run.start)
    return [(a, b) for n, a in enumerate(ordered) for b in ordered[n + 1 :] if b.start < a.end]


def most_at_once(runs: list[Run]) -> int:
    edges = sorted([(run.start, 1) for run in runs] + [(run.end, -1) for run in runs])
    count = peak = 0
    for _, change in edges:
        count += change
        peak = max(peak, count)
    return peak


def test_lanes_run_side_by_side_one_step_each_and_no_step_starts_before_what_it_waits_for_has_ended():
    steps = plan_steps()
    scheduler = StepScheduler(steps, GUILD_ID, in_flight=4)
    record = Recorder(scheduler, slow={"role:team 02": 0.15})

    finished = scheduler.run(record, has_time=lambda: True, skip=set())

    assert finished is True
    assert sorted(run.key for run in record.runs) == sorted(step.key for step in steps), "each step once"
    assert len(set(scheduler.lanes)) >= 2 + UPDATED
    together = overlapping(record.runs)
    assert [(a.key, b.key) for a, b in together if a.lane == b.lane] == [], "two steps of one lane at once"
    assert {frozenset((a.lane, b.lane)) for a, b in together}, "no two lanes ever ran side by side"
    assert 2 < most_at_once(record.runs) <= 4, "side by side, within `in_flight`"
    assert all(run.thread.startswith("step") for run in record.runs)
    runs = record.by_key()
    for index, waits in enumerate(scheduler.waits):
        for earlier in waits:
            assert runs[steps[index].key].start >= runs[steps[earlier].key].end, (steps[index].key, steps[earlier].key)
    # A lane keeps the plan's order but for a step still waiting (Area 2, for its slow role): the next ready step of
    # its lane goes first. A step that waits for nothing is never overtaken.
    overtaken = [
        (steps[earlier].key, step.key)
        for later, step in enumerate(steps)
        for earlier in range(later)
        if scheduler.lanes[earlier] == scheduler.lanes[later] and runs[steps[earlier].key].start > runs[step.key].start
    ]
    assert ("category:area 2", "channel:category:area 1:0:area-1-room-1") in overtaken
    position = {step.key: index for index, step in enumerate(steps)}
    assert all(scheduler.waits[position[key]] for key, _ in overtaken)


def test_the_lane_with_the_most_steps_left_starts_first():
    # The plan lists its one role first; its six channels wait for nothing: their lane sets the floor
    body = {"name": "Community", "roles": [{"name": "Solo"}], "channels": [{"name": f"room-{n}"} for n in range(6)]}
    steps = plan_deployment(GuildBuilder().build(), ServerConfig.model_validate(body)).steps
    scheduler = StepScheduler(steps, GUILD_ID, in_flight=1)
    record = Recorder(scheduler, slow=dict.fromkeys((step.key for step in steps), 0.001))

    scheduler.run(record, has_time=lambda: True, skip=set())

    assert steps[0].op == "create_role"
    ordered = sorted(record.runs, key=lambda run: run.start)
    assert ordered[0].lane == Lane("POST /guilds/{guild_id}/channels", GUILD_ID)
    assert ordered[1].lane == Lane("POST /guilds/{guild_id}/channels", GUILD_ID), "still the busier one"
    assert most_at_once(record.runs) == 1


def test_skipped_steps_do_not_run_and_what_waits_for_them_does():
    steps = plan_steps()
    done = {step.key for step in steps if step.op == "create_role"}  # a resumed run: the roles were made
    scheduler = StepScheduler(steps, GUILD_ID)
    record = Recorder(scheduler)

    assert scheduler.run(record, has_time=lambda: True, skip=done) is True

    assert sorted(run.key for run in record.runs) == sorted(step.key for step in steps if step.key not in done)
    assert all(scheduler.wait_for(key) for key in done)


def test_when_the_time_runs_low_no_step_starts_those_in_flight_end_and_run_answers_false():
    steps = plan_steps()
    scheduler = StepScheduler(steps, GUILD_ID, in_flight=4)
    # The first round: a role and three channel updates (the busiest ready lanes); the updates take longer, so
    # they are in flight when the role ends and the time is found to run low
    updates = {step.key: 0.2 for step in steps if step.op == "update_channel"}
    record = Recorder(scheduler, slow=updates)
    answers: list[tuple[bool, float]] = []

    def has_time() -> bool:
        answers.append((len(answers) < 4, time.monotonic()))
        return answers[-1][0]

    finished = scheduler.run(record, has_time=has_time, skip=set())
    returned = time.monotonic()

    assert finished is False
    assert scheduler.stopped is True
    assert [answer for answer, _ in answers] == [True] * 4 + [False], "asked once per start, and no more once low"
    assert len(record.calls) == 4, "a step started only on a yes"
    low_at = answers[-1][1]
    in_flight = [run for run in record.runs if run.start < low_at < run.end]
    assert sorted(run.key for run in in_flight) == sorted(key for key in record.calls if key in updates)
    assert len(in_flight) == 3
    assert all(run.end <= returned for run in record.runs), "run returned before a step in flight ended"
    assert len(record.runs) == 4
    # What was not reached is not done: a grant waiting for it learns so, and does not wait forever
    unreached = next(step.key for step in steps if step.key not in record.by_key())
    assert scheduler.wait_for(unreached) is False
    with pytest.raises(StepsStopped):
        AwaitedIds(record.ids, scheduler)[unreached]


class PlatformDown(Exception):
    pass


def test_a_step_that_fails_stops_new_steps_lets_those_in_flight_end_and_is_raised_once():
    steps = plan_steps()
    scheduler = StepScheduler(steps, GUILD_ID, in_flight=6)
    failing = next(step.key for step in steps if step.op == "update_channel")
    # The failure comes early; the steps beside it are still in flight when it does
    slow = {step.key: 0.25 for step in steps if step.key != failing}
    error = PlatformDown("503")
    record = Recorder(scheduler, slow=slow | {failing: 0.05}, fail={failing: error})

    with pytest.raises(PlatformDown) as raised:
        scheduler.run(record, has_time=lambda: True, skip=set())
    returned = time.monotonic()

    assert raised.value is error
    assert raised.value.__context__ is None, "raised once, as it was: not while handling another"
    assert record.failed_at is not None
    assert [run.key for run in record.runs if run.start > record.failed_at] == []
    in_flight = [run for run in record.runs if run.start < record.failed_at]
    assert len(in_flight) >= 2, "steps of other lanes were in flight when it failed"
    assert all(record.failed_at < run.end <= returned for run in in_flight), "they ended, and run waited for them"
    assert failing not in record.by_key()
    assert record.calls.count(failing) == 1
    assert scheduler.stopped is True
    assert scheduler.wait_for(failing) is False


def test_awaited_ids_are_read_beside_the_run_only_once_the_step_that_makes_each_has_ended():
    steps = plan_steps()
    scheduler = StepScheduler(steps, GUILD_ID)
    record = Recorder(scheduler)
    wanted = [step.key for step in steps if step.op == "create_role"][::-1]  # the last role first
    reads: dict[str, tuple[str, float]] = {}
    ids = AwaitedIds(record.ids, scheduler)

    def beside() -> None:
        for key in wanted:
            reads[key] = (ids[key], time.monotonic())

    reader = threading.Thread(target=beside)
    reader.start()
    scheduler.run(record, has_time=lambda: True, skip=set())
    reader.join(timeout=10)

    runs = record.by_key()
    assert not reader.is_alive()
    assert {key: value for key, (value, _) in reads.items()} == {key: f"id-of-{key}" for key in wanted}
    assert all(read_at >= runs[key].end for key, (_, read_at) in reads.items())
    assert scheduler.wait_for("role:no step makes it") is True, "an id the plan does not make: no wait"
