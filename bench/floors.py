"""The floors a deploy's (or a restore's) wall time is measured against: the least time the platform's rate limits
allow for a plan's steps, one after another (sequential) and side by side (parallel).

Both are simulations of the plan's requests taking no time, each bucket a fixed window like the sandbox's (`limit`
requests per `window` seconds, the window starting at its first request), all within the bot's own global rate (a
sliding second). A step is one request on its bucket (`step_graph.lane_of`), two for a channel created with
`after_create` (the second on `PATCH /channels/{channel_id}` of the new channel, a bucket of its own). A restore's
member grants are one request each on the guild's member-role bucket, each after the last step that writes its role.

- sequential: every request after the one before it (the grants after the steps);
- parallel: one step at a time per bucket, buckets side by side, a step starting once the steps it waits for
  (`step_graph.dependencies`) are done, the busiest bucket first when two could go at once; the grants in whatever
  order their roles allow (the worker's grants go in member order, so this is a floor, not its schedule).

The first request goes at 0 s: a floor is the time from the first of these requests to the last.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from svcconf.deploy_engine.step_graph import Lane, dependencies, lane_of
from svcconf.deploy_engine.steps import ChannelStep, Step

GRANT = "PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}"
CHANNEL_MODIFY = "PATCH /channels/{channel_id}"


@dataclass(frozen=True)
class Limits:
    """The buckets' rates as the sandbox's `/_sandbox/stats` config states them, and the bot's global rate."""

    route_limits: Mapping[str, tuple[int, float]]
    bucket_limit: int
    bucket_window: float
    global_per_second: int  # the bot's own: the sandbox's per-caller limit less the users' share

    @classmethod
    def of(cls, config: Mapping[str, Any], own_rate: int) -> Limits:
        """From the sandbox's config and the bot's own global rate (the lower of the two is the one it meets)."""
        routes = {route: (int(limit), float(window)) for route, (limit, window) in config["route_limits"].items()}
        platform = int(config["global_limit_per_second"]) or own_rate
        return cls(routes, int(config["bucket_limit"]), float(config["bucket_window_seconds"]), min(platform, own_rate))

    def of_route(self, route: str) -> tuple[int, float]:
        return self.route_limits.get(route, (self.bucket_limit, self.bucket_window))


@dataclass(frozen=True)
class Floors:
    sequential: float  # seconds
    parallel: float
    requests: int  # the platform requests the steps and grants make: the writes' minimum


@dataclass
class _Task:
    """A step or a grant: its requests' buckets, in order, and the tasks it waits for."""

    requests: list[Lane]
    waits: set[int]


def floors(steps: Sequence[Step], guild_id: str, limits: Limits, grants: Sequence[str] = ()) -> Floors:
    """The floors of `steps` on `guild_id`, and of `grants` (one role key per grant) beside them."""
    steps = list(steps)
    requests = [_requests(step, guild_id) for step in steps]
    waits = dependencies(steps)
    last_of = {step.key: index for index, step in enumerate(steps)}
    grant_lane = Lane(GRANT, guild_id)
    parallel = [_Task(r, set(w)) for r, w in zip(requests, waits, strict=True)]
    parallel += [_Task([grant_lane], {last_of[key]} if key in last_of else set()) for key in grants]
    chain = [*requests, *([grant_lane] for _ in grants)]
    sequential = [_Task(r, {index - 1} if index else set()) for index, r in enumerate(chain)]
    return Floors(_simulate(sequential, limits), _simulate(parallel, limits), sum(map(len, chain)))


def _requests(step: Step, guild_id: str) -> list[Lane]:
    lanes = [lane_of(step, guild_id)]
    if isinstance(step, ChannelStep) and step.op == "create_channel" and step.after_create:
        lanes.append(Lane(CHANNEL_MODIFY, f"new {step.key}"))  # the new channel's own bucket
    return lanes


class _Clock:
    """The buckets' fixed windows and the global sliding second, as requests are sent in time order."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.now = 0.0
        self.windows: dict[Lane, list[float]] = {}  # lane -> [window start, requests in it]
        self.sent: deque[float] = deque(maxlen=limits.global_per_second or None)

    def earliest(self, lane: Lane) -> float:
        at = self.now
        limit, window = self.limits.of_route(lane.route)
        opened = self.windows.get(lane)
        if opened is not None and at < opened[0] + window and opened[1] >= limit:
            at = opened[0] + window
        if self.limits.global_per_second and len(self.sent) == self.limits.global_per_second:
            at = max(at, self.sent[0] + 1.0)
        return at

    def send(self, lane: Lane, at: float) -> None:
        self.now = at
        window = self.limits.of_route(lane.route)[1]
        opened = self.windows.setdefault(lane, [at, 0])
        if at >= opened[0] + window:
            opened[:] = [at, 0]
        opened[1] += 1
        self.sent.append(at)


def _simulate(tasks: list[_Task], limits: Limits) -> float:
    """The time of the last request when every request goes as early as its bucket, the global rate and its task's
    waits allow; one task in flight per bucket of its first request."""
    clock = _Clock(limits)
    blocked = [len(task.waits) for task in tasks]
    dependents: list[list[int]] = [[] for _ in tasks]
    for index, task in enumerate(tasks):
        for waited in task.waits:
            dependents[waited].append(index)
    ready: dict[Lane, list[int]] = {}  # lane -> a heap of the indexes of its tasks that may start
    left: dict[Lane, int] = {}  # lane -> its tasks not started
    for index, task in enumerate(tasks):
        left[task.requests[0]] = left.get(task.requests[0], 0) + 1
        if not blocked[index]:
            heapq.heappush(ready.setdefault(task.requests[0], []), index)
    in_flight: dict[Lane, tuple[int, int]] = {}  # lane -> (its task, the task's next request)
    last = 0.0
    for _ in range(sum(len(task.requests) for task in tasks)):
        choices = []
        for lane, (index, sent) in in_flight.items():  # a task's next request first: its lane waits for it
            choices.append((clock.earliest(tasks[index].requests[sent]), 0, 0, index, lane))
        for lane, heap in ready.items():
            if heap and lane not in in_flight:
                choices.append((clock.earliest(lane), 1, -left[lane], heap[0], lane))
        if not choices:
            raise ValueError("a task waits for one that never ends")
        at, fresh, _, index, lane = min(choices)
        if fresh:
            heapq.heappop(ready[lane])
            left[lane] -= 1
            sent = 0
        else:
            sent = in_flight.pop(lane)[1]
        clock.send(tasks[index].requests[sent], at)
        last = at
        if sent + 1 < len(tasks[index].requests):
            in_flight[lane] = (index, sent + 1)
            continue
        in_flight.pop(lane, None)
        for waiting in dependents[index]:
            blocked[waiting] -= 1
            if not blocked[waiting]:
                heapq.heappush(ready.setdefault(tasks[waiting].requests[0], []), waiting)
    return last


def own_rate(chat_user_requests_per_second: int) -> int:
    """The bot's own global rate, as the chat transport sets its limiter: the platform's 50 less the users' share."""
    from svcconf.chat.ratelimit import GLOBAL_REQUESTS_PER_SECOND

    return GLOBAL_REQUESTS_PER_SECOND - min(chat_user_requests_per_second, 40)


def report(found: Floors, wall: float, requests: int, minimum: int, limited: int) -> None:
    """Prints the floors beside the measured wall time (first to last platform request) and requests."""
    print(f"  sequential floor {found.sequential:6.1f} s   (the steps one after another, each at its bucket's rate)")
    print(f"  parallel floor   {found.parallel:6.1f} s   (the buckets side by side, each step after what it waits for)")
    ratios = [
        f"{wall / floor:.2f}x the {name}"
        for name, floor in (("parallel", found.parallel), ("sequential", found.sequential))
        if floor > 0
    ]
    shown = f": {', '.join(ratios)}" if ratios else ""
    print(f"  wall time        {wall:6.1f} s   (first to last platform request){shown}")
    print(f"  platform requests {requests}, minimum {minimum}: {requests - minimum:+d}; answered 429: {limited}")
