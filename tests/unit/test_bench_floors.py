"""bench/floors.py: the sequential and parallel floors of small hand-made plans, each known by hand from the
sandbox's limits (role and channel creations 5 per 1 s per guild, member-role grants 10 per 1 s, other buckets 50 per
1 s, the bot's own global rate 25 per second)."""

from __future__ import annotations

import pytest

from bench.floors import Limits, floors
from local.chat_sandbox.config import DEFAULT_CONFIG
from svcconf.deploy_engine.steps import ChannelStep, OverwriteSpec, RoleStep, category_key, channel_key, role_key

GUILD = "900"
LIMITS = Limits.of(DEFAULT_CONFIG, own_rate=25)


def role(name: str) -> RoleStep:
    return RoleStep(op="create_role", key=role_key(name), name=name, field="roles", payload={"name": name})


def category(name: str, *roles: str) -> ChannelStep:
    return ChannelStep(
        op="create_channel",
        kind="category",
        key=category_key(name),
        name=name,
        field="categories",
        payload={"name": name, "type": 4},
        overwrites=[OverwriteSpec(target=role_key(r), allow=1024, deny=0, field="") for r in roles],
    )


def channel(name: str, *roles: str, parent: str | None = None, flags: bool = False) -> ChannelStep:
    return ChannelStep(
        op="create_channel",
        kind="channel",
        key=channel_key(parent, 0, name),
        name=name,
        field="channels",
        parent=category_key(parent) if parent else None,
        payload={"name": name, "type": 0},
        after_create={"flags": 16} if flags else {},
        overwrites=[OverwriteSpec(target=role_key(r), allow=1024, deny=0, field="") for r in roles],
    )


def update(channel_id: str) -> ChannelStep:
    return ChannelStep(
        op="update_channel",
        kind="channel",
        key=channel_key(None, 0, f"room-{channel_id}"),
        name=f"room-{channel_id}",
        field="channels",
        channel_id=channel_id,
        payload={"topic": "new"},
    )


def test_the_limits_are_the_sandboxs_with_the_bots_own_global_rate() -> None:
    assert LIMITS.of_route("POST /guilds/{guild_id}/roles") == (5, 1.0)
    assert LIMITS.of_route("PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}") == (10, 1.0)
    assert LIMITS.of_route("PATCH /channels/{channel_id}") == (50, 1.0)
    assert LIMITS.global_per_second == 25  # the sandbox's 50 per caller, less the users' share


def test_roles_and_channels_naming_no_role_go_side_by_side_max_not_sum() -> None:
    # roles: 5 at 0 s, 5 at 1 s; the channels the same on their own bucket, beside them
    steps = [*(role(f"r{n}") for n in range(10)), *(channel(f"c{n}") for n in range(10))]

    found = floors(steps, GUILD, LIMITS)

    assert found.parallel == 1.0
    assert found.sequential == 2.0  # the channels' first window opens when the last role is made
    assert found.requests == 20


def test_channels_naming_the_last_role_wait_for_it() -> None:
    # the tenth role is made at 1 s: the channels' 5 per second start then
    steps = [*(role(f"r{n}") for n in range(10)), *(channel(f"c{n}", "r9") for n in range(10))]

    found = floors(steps, GUILD, LIMITS)

    assert found.parallel == 2.0
    assert found.sequential == 2.0


def test_a_channel_waits_for_its_category_and_the_others_go_meanwhile() -> None:
    # the category names the sixth role (made at 1 s) and its channel waits for the category: 5 of the 9 others go
    # at 0 s meanwhile, the category and its channel in the 1 s window, the last of the others at 2 s
    steps = [
        *(role(f"r{n}") for n in range(6)),
        category("Staff", "r5"),
        channel("desk", parent="Staff"),
        *(channel(f"c{n}") for n in range(9)),
    ]

    found = floors(steps, GUILD, LIMITS)

    assert found.parallel == 2.0
    assert found.sequential == 3.0  # roles 0 s and 1 s, then 11 channel creations: 1 s, 2 s, 3 s


def test_a_channel_with_after_create_is_two_requests_the_second_on_its_own_bucket() -> None:
    found = floors([channel(f"c{n}", flags=True) for n in range(5)], GUILD, LIMITS)

    assert (found.parallel, found.sequential, found.requests) == (0.0, 0.0, 10)


def test_lanes_side_by_side_stay_within_the_bots_global_rate() -> None:
    # 30 updates of 30 channels: 30 buckets of 50 per second, but 25 requests a second in all
    found = floors([update(str(1000 + n)) for n in range(30)], GUILD, LIMITS)

    assert (found.parallel, found.sequential) == (1.0, 1.0)
    assert floors([update(str(1000 + n)) for n in range(25)], GUILD, LIMITS).parallel == 0.0


def test_member_grants_wait_for_their_role_on_the_member_role_bucket() -> None:
    # the sixth role is made at 1 s; its 25 grants go 10 a second from then: 1 s, 2 s, 3 s. Sequentially, after the
    # 10 channels (their window opens at 1 s, the last role's, and ends with 5 more at 2 s): 2 s, 3 s, 4 s
    steps = [*(role(f"r{n}") for n in range(6)), *(channel(f"c{n}") for n in range(10))]

    found = floors(steps, GUILD, LIMITS, grants=[role_key("r5")] * 25)

    assert found.parallel == 3.0
    assert found.sequential == 4.0
    assert found.requests == 41


def test_grants_of_roles_the_plan_does_not_make_start_at_once() -> None:
    found = floors([], GUILD, LIMITS, grants=[role_key("kept")] * 21)

    assert (found.parallel, found.sequential) == (2.0, 2.0)


def test_a_wait_that_never_ends_is_refused() -> None:
    from bench import floors as module

    task = module._Task([module.Lane("GET /x", GUILD)], {0})
    with pytest.raises(ValueError, match="never ends"):
        module._simulate([task], LIMITS)
