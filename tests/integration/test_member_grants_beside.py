"""A restore's member grants beside its steps (`member_grants.grant_members` with `making`): a role still being made
does not hold up the members after, the cursor never passes a member with a grant still to make, and a run stopped
mid-way resumes from its cursor with nothing granted twice. Over HTTP to the sandbox; the roles "being made" are
real roles of the guild whose `made` turns true when the test says so."""

from __future__ import annotations

import threading
import time

from local.chat_sandbox import SandboxState
from local.chat_sandbox.actors import add_members
from svcconf.chat import ChatClient
from svcconf.deploy_engine.member_grants import GrantProgress, MemberWants, WantedRole, grant_members
from tests.helpers.chat_sandbox import BOB_GUILD

REGULAR = "1191000000000002022"  # BOB_GUILD's plain role: there already
GRANT = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"
MEMBERS = 40


class Making:
    """Roles the steps are making: `made` is false for the late role until `finish` is called."""

    def __init__(self, late: str):
        self.late = late
        self.finished = threading.Event()
        self.stopped = False  # the steps stopped (their time ran low): waiting returns at once
        self.waited = 0

    def made(self, key: str) -> bool:
        return key != self.late or self.finished.is_set()

    def wait_any(self, keys: list[str]) -> None:
        self.waited += 1
        if not self.stopped:
            self.finished.wait(timeout=30)


def _late_role(state: SandboxState) -> str:
    """A second plain role of the guild, below the bot's: the one 'still being made'."""
    with state.lock:
        roles = state.guilds[BOB_GUILD]["roles"]
        roles["1191000000000002999"] = {**roles[REGULAR], "id": "1191000000000002999", "name": "Late", "position": 1}
    return "1191000000000002999"


def _wants(members: list[str]) -> list[MemberWants]:
    """Every member wants the late role; every third the regular one as well (first in their list)."""
    late, regular = WantedRole(key="role:late", name="Late"), WantedRole(key="role:regular", name="Regular")
    return [MemberWants(user_id=m, roles=[regular, late] if n % 3 == 0 else [late]) for n, m in enumerate(members)]


def _world(chat_state: SandboxState) -> tuple[str, list[str], list[MemberWants], dict[str, str], Making]:
    """The late role, the members, what they want, the roles' ids, and the steps still making the late one."""
    late = _late_role(chat_state)
    members = add_members(chat_state, BOB_GUILD, MEMBERS, [])
    return late, members, _wants(members), {"role:late": late, "role:regular": REGULAR}, Making("role:late")


def test_grants_of_made_roles_go_first_and_the_cursor_waits_for_the_late_role(
    chat_client: ChatClient, chat_state: SandboxState
):
    late, members, wants, ids, making = _world(chat_state)
    cursors: list[tuple[int, bool]] = []  # each checkpoint's cursor, and whether the late role was made by then
    chat_state.clear_log()

    def checkpoint(at: GrantProgress) -> None:
        cursors.append((at.cursor, making.finished.is_set()))

    def finish_once_the_regular_grants_are_made() -> None:
        while len(chat_state.requests("PUT", GRANT)) < len(range(0, MEMBERS, 3)):
            time.sleep(0.01)
        making.finished.set()

    threading.Thread(target=finish_once_the_regular_grants_are_made, daemon=True).start()
    progress = GrantProgress(cursor=0)
    made: list[tuple[str, str]] = []
    done = grant_members(
        chat_client,
        BOB_GUILD,
        wants,
        ids,
        progress,
        made=made,
        checkpoint=checkpoint,
        has_time=lambda: True,
        reason="test",
        making=making,
    )

    assert done
    grants = [entry["path"].rsplit("/", 1)[-1] for entry in chat_state.requests("PUT", GRANT)]
    regular_count = len(range(0, MEMBERS, 3))
    # The regular role's grants (members 0, 3, 6, ...) all went before any grant of the late role
    assert grants[:regular_count] == [REGULAR] * regular_count
    assert grants[regular_count:] == [late] * MEMBERS
    assert making.waited >= 1, "the walk ended before the late role was made: it waited for it"
    # While the late role was being made, no checkpoint let the cursor pass member 0 (who still waited for it)
    assert all(cursor == 0 for cursor, finished in cursors if not finished)
    assert cursors[-1][0] == MEMBERS
    assert progress.granted == len(made) == regular_count + MEMBERS
    with chat_state.lock:
        held = {m: set(chat_state.guilds[BOB_GUILD]["members"][m]["roles"]) for m in members}
    assert all(late in held[m] for m in members)
    assert {m for m in members if REGULAR in held[m]} == set(members[::3])


def test_a_run_stopped_while_a_role_is_being_made_resumes_from_its_cursor_and_grants_nothing_twice(
    chat_client: ChatClient, chat_state: SandboxState
):
    _, _, wants, ids, making = _world(chat_state)
    making.stopped = True
    chat_state.clear_log()
    saved: list[int] = []
    progress = GrantProgress(cursor=0)
    made: list[tuple[str, str]] = []
    calls = iter(range(10_000))

    # The first run's time runs out after the walk has passed every member, the late role still being made
    first = grant_members(
        chat_client,
        BOB_GUILD,
        wants,
        ids,
        progress,
        made=made,
        checkpoint=lambda at: saved.append(at.cursor),
        has_time=lambda: next(calls) < MEMBERS + 2,
        reason="test",
        making=making,
    )
    assert not first
    assert saved[-1] == 0, "member 0 still waits for the late role: the cursor stays with them"
    assert len(chat_state.requests("PUT", GRANT)) == len(range(0, MEMBERS, 3))

    # The next run (the role made now) starts from the saved cursor
    making.finished.set()
    making.stopped = False
    resumed = GrantProgress(cursor=saved[-1], planned=progress.planned, granted=progress.granted)
    assert grant_members(
        chat_client,
        BOB_GUILD,
        wants,
        ids,
        resumed,
        made=made,
        checkpoint=lambda at: saved.append(at.cursor),
        has_time=lambda: True,
        reason="test",
        making=making,
    )
    puts = [
        (entry["path"].split("/")[-3], entry["path"].rsplit("/", 1)[-1]) for entry in chat_state.requests("PUT", GRANT)
    ]
    assert len(puts) == len(set(puts)) == len(range(0, MEMBERS, 3)) + MEMBERS, "each grant once"
    assert resumed.granted == len(puts)
