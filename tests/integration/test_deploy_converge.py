"""deployToChat v3 against the sandbox and moto: a guild built by a deploy is exported, edited the way people edit
(renames, a move, reversed orders, removals, a new server name), planned with `prune`, refused without its
`confirm`, deployed with it, and read back equal to the configuration; a plan taken before someone changed the
server is refused."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.converge import START, edited
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link, live_channels, live_roles, writes
from tests.helpers.handlers import bearer

USER = "web-user-1"
BUILD_LAB = "1191000000000001005"  # an empty guild of alice's, with COMMUNITY and NEWS
DEMO = "1191000000000001001"  # alice owns it; Moderator and Member are held by one member each


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    platform.clear_log()
    return platform


def call(invoke, body: dict[str, Any]):
    return invoke("deployToChat", body, headers=bearer(USER))


def deployed(invoke, aws, config: dict[str, Any], **extra: Any):
    queued = call(invoke, deploy_body(BUILD_LAB, config, **extra))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    return call(invoke, {"action": "info", "project_id": "proj-1", "guild_id": BUILD_LAB})


def exported(invoke) -> dict[str, Any]:
    answer = call(invoke, {"action": "export", "guild_id": BUILD_LAB})
    assert answer.status == 200, answer.body
    return answer.body["config"]


def test_an_edited_export_deploys_in_place_with_a_confirmed_prune_and_reads_back_as_configured(invoke, linked, aws):
    # Given a guild built by a deploy, exported and edited
    assert deployed(invoke, aws, START).body["status"] == "succeeded"
    before = exported(invoke)
    ids = {role["name"]: role["id"] for role in before["roles"]}
    ids |= {c["name"]: c["id"] for cat in before["categories"] for c in cat["channels"]}
    config = edited(before)
    linked.clear_log()

    # When it is planned with prune
    dry = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True, prune=True))

    # Then the plan creates nothing, deletes exactly the removed channel and role, and updates in place
    assert dry.status == 200, dry.body
    plan = dry.body["plan"]
    assert [i["action"] for i in plan if i["kind"] != "overwrite" and i["action"] == "create"] == []
    deletes = [(i["kind"], i["name"], i["id"]) for i in plan if i["action"] == "delete" and i["kind"] != "overwrite"]
    assert deletes == [("channel", "Community / memes", ids["memes"]), ("role", "Helpers", ids["Helpers"])]
    # a move is an access change: what announcements had from Staff and leaves there is shown
    left = {i["name"] for i in plan if i["action"] == "delete" and i["kind"] == "overwrite"}
    assert left
    assert all(name.startswith("Community / announcements → ") for name in left)
    lobby = next(i for i in plan if i["name"] == "Community / lobby")
    assert (lobby["id"], lobby["changes"][0]) == (ids["general"], {"field": "name", "old": "general", "new": "lobby"})
    moved = next(i for i in plan if i["name"] == "Community / announcements")
    assert {"field": "category", "old": "Staff", "new": "Community"} in moved["changes"]
    warnings = {w["message"] for w in dry.body["warnings"] if w["rule"] == "delete"}
    assert warnings == {
        "1 channel and all their messages will be deleted: Community / memes",
        "role 'Helpers' will be deleted: 0 members hold it and lose it",
    }

    # When it is deployed without confirm: 409 with the plan, and nothing written
    refused = call(invoke, deploy_body(BUILD_LAB, config, prune=True))
    assert refused.status == 409, refused.body
    assert refused.body["plan_id"] == dry.body["plan_id"]
    assert [i["action"] for i in refused.body["plan"]] == [i["action"] for i in plan]
    assert writes(linked) == []

    # When it is deployed with the plan's id
    done = deployed(invoke, aws, config, prune=True, confirm=dry.body["plan_id"])

    # Then it succeeded, the renamed and moved objects kept their ids, and the server reads as configured
    assert done.body["status"] == "succeeded", done.body
    after = exported(invoke)
    assert after == config
    assert done.body["config"] == config  # info: the configuration as deployed, with every id
    roles, channels = live_roles(linked, BUILD_LAB), live_channels(linked, BUILD_LAB)
    assert (roles["Moderators"]["id"], channels["lobby"]["id"]) == (ids["Mods"], ids["general"])
    assert channels["announcements"]["id"] == ids["announcements"]
    assert "memes" not in channels
    assert "Helpers" not in roles
    assert linked.guild(BUILD_LAB)["name"] == "Alice's Lab, renamed"
    deletes_sent = [w for w in writes(linked) if w[0] == "DELETE"]
    assert len(deletes_sent) == 2

    # When the same configuration is deployed again: not a single write
    linked.clear_log()
    again = deployed(invoke, aws, after, prune=True)
    assert again.body["status"] == "succeeded"
    assert writes(linked) == []


def test_a_plan_taken_before_someone_adds_a_channel_is_refused_and_nothing_is_deleted(invoke, linked, aws):
    # Given a dry run with prune that deletes one channel
    deployed(invoke, aws, START)
    config = exported(invoke)
    config["channels"] = config["channels"][:1]  # faq goes
    dry = call(invoke, deploy_body(BUILD_LAB, config, dry_run=True, prune=True))
    assert [i["name"] for i in dry.body["plan"] if i["action"] == "delete"] == ["faq"]
    # When someone adds a channel, then the deploy sends the old plan's id
    with linked.lock:
        channel_id = linked.next_id()
        linked.guilds[BUILD_LAB]["channels"][channel_id] = {
            "id": channel_id, "type": 0, "name": "brand-new", "position": 9, "parent_id": None,
            "permission_overwrites": [], "guild_id": BUILD_LAB,
        }  # fmt: skip
        linked.channel_guild[channel_id] = BUILD_LAB
    linked.clear_log()
    stale = call(invoke, deploy_body(BUILD_LAB, config, prune=True, confirm=dry.body["plan_id"]))

    # Then 409 with the fresh plan (which now deletes the new channel too), and nothing is deleted
    assert stale.status == 409, stale.body
    assert stale.body["plan_id"] != dry.body["plan_id"]
    assert {i["name"] for i in stale.body["plan"] if i["action"] == "delete"} == {"faq", "brand-new"}
    assert writes(linked) == []
    assert {"faq", "brand-new"} <= set(live_channels(linked, BUILD_LAB))


def test_the_dry_run_says_how_many_members_hold_each_role_a_prune_deletes(invoke, linked, aws):
    # Given the demo guild, whose Moderator and Member roles are each held by one member, read as a configuration
    config = call(invoke, {"action": "export", "guild_id": DEMO}).body["config"]
    config["roles"] = []

    # When a prune without its roles is planned
    dry = call(invoke, deploy_body(DEMO, config, dry_run=True, prune=True))

    # Then each role's delete item carries its id, and a warning the number of its holders (the platform's counts)
    assert dry.status == 200, dry.body
    assert {(i["name"], i["id"]) for i in dry.body["plan"] if i["action"] == "delete"} == {
        ("Moderator", "1191000000000002012"),
        ("Member", "1191000000000002013"),
    }
    assert sorted(w["message"] for w in dry.body["warnings"] if w["rule"] == "delete") == [
        "role 'Member' will be deleted: 1 member holds it and loses it",
        "role 'Moderator' will be deleted: 1 member holds it and loses it",
    ]
    assert ("GET", "/guilds/{guild_id}/roles/member-counts") in [(e["method"], e["route"]) for e in linked.request_log]
    assert writes(linked) == []
