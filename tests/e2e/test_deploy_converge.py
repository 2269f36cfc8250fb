"""The server matches its configuration, end to end through `make run`: a guild built by a deploy is exported,
edited (a channel and a role renamed, a channel moved, the orders reversed, a channel and a role removed, the
server renamed), planned with `prune`, refused without `confirm`, deployed with it, read back equal to the
configuration, and deployed again without a write."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.converge import START, edited
from tests.helpers.e2e_deployer import BUILD_GUILD, Deployer

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

pytestmark = pytest.mark.e2e
PROJECT = "e2e-converge"


@pytest.fixture(scope="module")
def deployer(local_service: LocalService) -> Deployer:
    deployer = Deployer(local_service)
    deployer.link()
    return deployer


def body(config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "action": "deploy",
        "guild_id": BUILD_GUILD,
        "project_id": PROJECT,
        "project_name": "E2E converge",
        "config": config,
        **extra,
    }


def exported(deployer: Deployer) -> dict[str, Any]:
    answer = deployer.call("deployToChat", {"action": "export", "guild_id": BUILD_GUILD})
    assert answer.status_code == 200, answer.text
    return answer.json()["config"]


def pruned(deployer: Deployer, config: dict[str, Any]) -> dict[str, Any]:
    """Dry run with prune, then the deploy with its plan_id; the finished deployment."""
    dry = deployer.call("deployToChat", body(config, dry_run=True, prune=True))
    assert dry.status_code == 200, dry.text
    queued = deployer.call("deployToChat", body(config, prune=True, confirm=dry.json()["plan_id"]))
    assert queued.status_code == 202, queued.text
    return deployer.finished(PROJECT)


def test_an_edited_export_converges_in_place_through_make_run(deployer: Deployer) -> None:
    # Given a guild built by a deploy (what other tests left in it pruned), exported with its ids
    assert pruned(deployer, START)["status"] == "succeeded"
    before = exported(deployer)
    ids = {role["name"]: role["id"] for role in before["roles"]}
    ids |= {c["name"]: c["id"] for category in before["categories"] for c in category["channels"]}
    config = edited(before)

    # When it is planned with prune: no create, exactly two deletes
    dry = deployer.call("deployToChat", body(config, dry_run=True, prune=True)).json()
    actions = [(i["kind"], i["action"]) for i in dry["plan"] if i["action"] != "keep"]
    deletes = sorted(i["name"] for i in dry["plan"] if i["action"] == "delete")
    print(f"\nconverge dry run: {len(actions)} changes, deletes {deletes}, plan_id {dry['plan_id']}")
    assert [a for a in actions if a[1] == "create"] == []
    assert deletes == ["Community / memes", "Helpers"]

    # When it is deployed without confirm: 409 and not a single write
    start = deployer.log_size()
    refused = deployer.call("deployToChat", body(config, prune=True))
    assert refused.status_code == 409, refused.text
    assert refused.json()["plan_id"] == dry["plan_id"]
    assert deployer.writes_since(start) == []

    # When it is deployed with the plan's id: succeeded, the objects keep their ids, export equals the configuration
    start = deployer.log_size()
    queued = deployer.call("deployToChat", body(config, prune=True, confirm=dry["plan_id"]))
    assert queued.status_code == 202, queued.text
    done = deployer.finished(PROJECT)
    writes = deployer.writes_since(start)
    print(f"converge deploy: {done['status']}, {len(writes)} writes: {sorted(set(writes))}")
    assert done["status"] == "succeeded", done
    after = exported(deployer)
    assert after == config
    assert done["config"] == config
    live_roles = {role["name"]: role["id"] for role in after["roles"]}
    assert (live_roles["Moderators"], live_roles["Members"]) == (ids["Mods"], ids["Members"])
    community = next(c for c in after["categories"] if c["name"] == "Community")
    assert [(c["name"], c["id"]) for c in community["channels"]] == [
        ("announcements", ids["announcements"]),
        ("lobby", ids["general"]),
        ("Gaming", ids["Gaming"]),
        ("Lounge", ids["Lounge"]),
    ]
    assert deployer.guild()["name"] == "Alice's Lab, renamed"

    # When the same deploy runs again: not a single write
    start = deployer.log_size()
    queued = deployer.call("deployToChat", body(after, prune=True))
    assert queued.status_code == 202, queued.text
    assert deployer.finished(PROJECT)["status"] == "succeeded"
    print(f"converge deploy again: {len(deployer.writes_since(start))} writes")
    assert deployer.writes_since(start) == []
