"""The server matches its configuration, end to end through `make run`: a guild built by a deploy is exported,
edited (a channel and a role renamed, a channel moved, the orders reversed, a channel and a role removed, the
server renamed), planned with `prune`, refused without `confirm`, deployed with it, read back equal to the
configuration, and deployed again without a write; then rolled back by project alone to what it was."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.converge import START, edited
from tests.helpers.deploy_worker import without_ids
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

    # When it is planned with prune: no create, exactly two objects deleted, and (a move is an access change, issue
    # 31 finding 1) the two overwrites announcements had from Staff shown as left behind by its move
    dry = deployer.call("deployToChat", body(config, dry_run=True, prune=True)).json()
    actions = [(i["kind"], i["action"]) for i in dry["plan"] if i["action"] != "keep"]
    deletes = sorted((i["kind"], i["name"]) for i in dry["plan"] if i["action"] == "delete")
    print(f"\nconverge dry run: {len(actions)} changes, deletes {deletes}, plan_id {dry['plan_id']}")
    assert [a for a in actions if a[1] == "create"] == []
    assert deletes == [
        ("channel", "Community / memes"),
        ("overwrite", "Community / announcements → @everyone"),
        ("overwrite", "Community / announcements → Mods"),
        ("role", "Helpers"),
    ]

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


def test_a_rollback_by_project_alone_returns_the_edited_guild_to_what_it_was_through_make_run(
    deployer: Deployer,
) -> None:
    # Given the guild as a deploy built it, then edited and pruned by a confirmed deploy (a role and a channel deleted)
    assert pruned(deployer, START)["status"] == "succeeded"
    before = exported(deployer)
    name_before = deployer.guild()["name"]
    assert pruned(deployer, edited(before))["status"] == "succeeded"
    assert exported(deployer) != before

    # When the project's deployment is rolled back, naming no guild
    queued = deployer.call("deployToChat", {"action": "rollback", "project_id": PROJECT})
    assert queued.status_code == 202, queued.text
    done = deployer.finished(PROJECT)
    print(f"\nrollback by project: {done['status']}, {done['generation']['result']}")

    # Then the guild is what it was: the renamed and moved objects back with their ids, the deleted role and
    # channel re-created (new ids) with their permissions, topic, category and position, the orders and the name
    assert (done["kind"], done["status"]) == ("rollback", "succeeded"), done
    after = exported(deployer)
    assert without_ids(after) == without_ids(before)
    kept = {role["name"]: role.get("id") for role in before["roles"]} | {
        channel["name"]: channel.get("id") for category in before["categories"] for channel in category["channels"]
    }
    for role in after["roles"]:
        if role["name"] != "Helpers":  # deleted by the deploy: back with a new id
            assert role["id"] == kept[role["name"]], role
    assert deployer.guild()["name"] == name_before
