"""The issue's story through `make run`: a deploy, its rollback and a second deploy leave a guild's role quota
with 5 creations; a 12-role deploy makes 5, waits with `resumes_at` without hammering the closed route, and when
the sandbox's clock moves past the quota's window the runner's scheduler resumes it to `succeeded`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from tests.helpers.e2e_deployer import BUILD_GUILD, Deployer
from tests.helpers.local_service import LocalService, running

pytestmark = pytest.mark.e2e

ROLE_CREATE = ("POST", "/guilds/{guild_id}/roles")
WINDOW = timedelta(hours=48)


def roles(prefix: str, count: int) -> dict[str, Any]:
    return {"name": prefix, "roles": [{"name": f"{prefix} {n:03d}", "permissions": []} for n in range(count)]}


@pytest.fixture(scope="module")
def deployer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployer]:
    """A runner of its own: this test moves the sandbox's clock."""
    with running(tmp_path_factory.mktemp("quota-run")) as (state, started, log_path):
        deployer = Deployer(
            LocalService(state=state, first_answer_seconds=time.monotonic() - started, log_path=log_path)
        )
        deployer.link()
        yield deployer


def wait_for(deployer: Deployer, project_id: str, statuses: tuple[str, ...], seconds: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        info = deployer.call("deployToChat", {"action": "info", "project_id": project_id}).json()
        if info.get("status") in statuses:
            return info
        time.sleep(0.5)
    raise AssertionError(f"not {statuses} within {seconds} s: {info}")


def role_creations(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in log if (entry["method"], entry["route"]) == ROLE_CREATE]


def test_a_deploy_past_the_role_quota_waits_and_resumes_by_itself_when_the_clock_moves(deployer: Deployer) -> None:
    # The quota used up as the issue tells: a deploy of 245 roles and its rollback (deletions still count).
    started = time.monotonic()
    first = deployer.deploy(roles("Old", 245), project_id="quota-old")
    assert first["status"] == "succeeded", first
    assert deployer.rollback(project_id="quota-old")["status"] == "succeeded"
    print(f"\n245 roles created and rolled back in {time.monotonic() - started:.1f} s")
    oldest = min(entry["time"] for entry in role_creations(deployer.log()) if entry["status"] == 200)

    # The dry run tells what fits now and when the rest can be made.
    body = {"action": "deploy", "guild_id": BUILD_GUILD, "project_id": "quota", "project_name": "Quota"}
    planned = deployer.call("deployToChat", {**body, "config": roles("Crew", 12), "dry_run": True}).json()
    [warning] = [warning for warning in planned["warnings"] if warning["rule"] == "quota"]
    print(f"dry run: {warning['message']}")
    assert (warning["quota"]["planned"], warning["quota"]["fits_now"]) == (12, 5)

    log_start = deployer.log_size()
    queued = deployer.call("deployToChat", {**body, "config": roles("Crew", 12)})
    assert queued.status_code == 202, queued.text
    assert [w["quota"]["fits_now"] for w in queued.json()["warnings"]] == [5]
    waiting = wait_for(deployer, "quota", ("waiting", "succeeded", "partial", "failed"))

    assert waiting["status"] == "waiting", waiting
    assert waiting["steps"]["roles"]["created"] == 5
    resumes_at = datetime.fromisoformat(waiting["resumes_at"])
    expected = datetime.fromtimestamp(oldest, UTC) + WINDOW
    print(
        f"waiting: resumes_at {waiting['resumes_at']}, {(resumes_at - expected).total_seconds():+.1f} s from the "
        f"oldest counted creation + 48 h; reason: {waiting['wait_reason']}"
    )
    assert abs(resumes_at - expected) < timedelta(seconds=10)
    time.sleep(3)  # time enough for anything that would hammer the closed route
    creations = role_creations(deployer.log()[log_start:])
    first_429 = next(index for index, entry in enumerate(creations) if entry["status"] == 429)
    after = creations[first_429 + 1 :]
    print(f"requests to POST /guilds/{{guild_id}}/roles after the first 429: {len(after)}")
    assert len(after) <= 3
    assert wait_for(deployer, "quota", ("waiting",))["status"] == "waiting"

    # Two days later on the sandbox's clock: the runner's scheduler fires and the deployment goes on by itself.
    resume_start = deployer.log_size()
    moved = requests.post(f"{deployer.sandbox}/_sandbox/clock", json={"advance_seconds": 48 * 3600}, timeout=30)
    assert moved.status_code == 200
    done = wait_for(deployer, "quota", ("succeeded", "partial", "failed"), seconds=120)

    assert done["status"] == "succeeded", done
    assert done["steps"]["roles"]["created"] == 12
    crew = [role["name"] for role in deployer.guild()["roles"] if role["name"].startswith("Crew")]
    assert sorted(crew) == [f"Crew {n:03d}" for n in range(12)], "each role once"
    resumed = role_creations(deployer.log()[resume_start:])
    assert [entry["status"] for entry in resumed] == [200] * 7
    print(f"resumed after the clock moved: {len(resumed)} more roles, 12 in all, status {done['status']}")
