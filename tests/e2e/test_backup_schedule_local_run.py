"""A guild's backup schedule through `make run`: the bot schedules it, the sandbox's clock moves, the runner's
scheduler fires it and the backup worker runs it: twice with no change between, one backup holding the members'
roles; a member who lost a role, a second; a change, a third; `keep` honoured; unschedule stops it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.helpers.local_service import LocalService, running

pytestmark = pytest.mark.e2e

DEMO = "1191000000000001001"
BOB, CAROL = "1191000000000000102", "1191000000000000103"  # DEMO's Moderator and Member
MODERATOR, MEMBER = "1191000000000002012", "1191000000000002013"
HOUR = 3600


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """A runner of its own: this test moves the sandbox's clock."""
    with running(tmp_path_factory.mktemp("backup-schedule-run")) as (state, started, log_path):
        yield LocalService(state=state, first_answer_seconds=time.monotonic() - started, log_path=log_path)


def manage(service: LocalService, body: dict[str, Any]) -> dict[str, Any]:
    response = service.call("manageBackup", body)
    assert response.status_code == 200, response.text
    return response.json()


def later(service: LocalService, hours: float) -> None:
    moved = requests.post(f"{service.sandbox_url}/_sandbox/clock", json={"advance_seconds": hours * HOUR}, timeout=30)
    assert moved.status_code == 200, moved.text


def next_result(service: LocalService, after: str | None, seconds: float = 90) -> dict[str, Any]:
    """The schedule once a run newer than `after` (a last_run_at) has been recorded."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        schedule = manage(service, {"action": "list", "guild_id": DEMO})["schedule"]
        if schedule["last_run_at"] and schedule["last_run_at"] != after:
            return schedule
        time.sleep(0.5)
    raise AssertionError(f"no run recorded within {seconds} s: {schedule}")


def second_actor_adds_a_role(service: LocalService, name: str) -> None:
    bot = {"Authorization": f"Bot {service.state['bot_token']}"}
    created = requests.post(
        f"{service.state['chat_api_base_url']}/guilds/{DEMO}/roles", json={"name": name}, headers=bot, timeout=30
    )
    assert created.status_code == 200, created.text


def second_actor_takes_a_members_role(service: LocalService, user_id: str, role_id: str) -> None:
    bot = {"Authorization": f"Bot {service.state['bot_token']}"}
    url = f"{service.state['chat_api_base_url']}/guilds/{DEMO}/members/{user_id}/roles/{role_id}"
    taken = requests.delete(url, headers=bot, timeout=30)
    assert taken.status_code == 204, taken.text


def members_of(service: LocalService, backup_id: str) -> list[dict[str, Any]]:
    fetched = manage(service, {"action": "get", "backup_id": backup_id, "guild_id": DEMO})
    return fetched["data"]["backup_data"]["members"]


def test_a_schedule_fired_by_the_runner_twice_with_no_change_makes_one_backup_and_keeps_keep(
    service: LocalService,
) -> None:
    scheduled = manage(service, {"action": "schedule", "guild_id": DEMO, "every_hours": 1, "keep": 2})
    assert scheduled["schedule"]["last_result"] is None

    later(service, 1.01)
    first = next_result(service, None)
    later(service, 1)
    second = next_result(service, first["last_run_at"])

    print(f"\nrun 1: {first['last_result']}\nrun 2: {second['last_result']}")
    assert first["last_result"]["outcome"] == "stored"
    assert second["last_result"]["outcome"] == "unchanged"
    assert second["last_result"]["backup_id"] == first["last_result"]["backup_id"]
    backups = manage(service, {"action": "list", "guild_id": DEMO})["backups"]
    assert [b["backup_id"] for b in backups] == [first["last_result"]["backup_id"]], "one backup, not two"
    assert backups[0]["kind"] == "scheduled"
    made = members_of(service, first["last_result"]["backup_id"])
    assert made == [{"user_id": BOB, "roles": [MODERATOR]}, {"user_id": CAROL, "roles": [MEMBER]}]

    second_actor_takes_a_members_role(service, CAROL, MEMBER)
    later(service, 1)
    third = next_result(service, second["last_run_at"])
    print(f"run 3, after Carol lost Member: {third['last_result']}")
    assert third["last_result"]["outcome"] == "stored", "a member's lost role is a change"
    assert members_of(service, third["last_result"]["backup_id"]) == [{"user_id": BOB, "roles": [MODERATOR]}]

    results = []
    last = third["last_run_at"]
    for n in range(3):
        second_actor_adds_a_role(service, f"Shift {n}")
        later(service, 1)
        ran = next_result(service, last)
        results.append(ran["last_result"])
        last = ran["last_run_at"]

    print("runs 4-6: " + ", ".join(f"{r['outcome']} pruned {r['pruned']}" for r in results))
    assert [r["outcome"] for r in results] == ["stored"] * 3
    listed = manage(service, {"action": "list", "guild_id": DEMO})["backups"]
    assert [b["backup_id"] for b in listed] == [results[2]["backup_id"], results[1]["backup_id"]], "keep: 2"

    assert manage(service, {"action": "unschedule", "guild_id": DEMO})["schedule"] is None
    later(service, 2)
    time.sleep(3)  # the runner's scheduler looks every second
    assert manage(service, {"action": "list", "guild_id": DEMO})["schedule"] is None
    assert len(manage(service, {"action": "list", "guild_id": DEMO})["backups"]) == 2
