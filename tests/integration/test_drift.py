"""deployToChat `info` with `drift: true`: after a second actor's three changes (a channel renamed, a role
recoloured, a channel added), the drift names exactly those three as plan items. It compares what the
deployment's configuration states (an attribute it left out is the server's to change). Each names who made it, from
the audit log, for a caller holding VIEW_AUDIT_LOG; for one without, the audit log is not read at all."""

from __future__ import annotations

import copy

import pytest
import requests

from local.chat_sandbox.actors import act_as
from tests.helpers.chat_sandbox import ALICE_ID, BUILD_GUILD, CAROL_ID, DAVE_ID, RIGHTS_LAB
from tests.helpers.deploy_worker import DeployQueue, deploy_body, link
from tests.helpers.handlers import bearer
from tests.helpers.rollbacks import BASE, call, finished


@pytest.fixture
def deployed(invoke, platform, function_environment, aws):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    assert call(invoke, deploy_body(BUILD_GUILD, BASE)).status == 202
    assert finished(invoke, aws)["status"] == "succeeded"
    return platform


def drift(invoke) -> list[dict]:
    answer = call(invoke, {"action": "info", "project_id": "proj-1", "drift": True})
    assert answer.status == 200, answer.body
    return answer.body["drift"]


def test_drift_names_a_second_actors_three_changes(invoke, deployed):
    guild = deployed.guilds[BUILD_GUILD]
    assert drift(invoke) == []
    with deployed.lock:
        next(c for c in guild["channels"].values() if c["name"] == "memes")["name"] = "dank-memes"
        next(r for r in guild["roles"].values() if r["name"] == "Mods")["color"] = 0x00FF00
        lobby = next(c for c in guild["channels"].values() if c["name"] == "Lobby")
        guild["channels"]["1191000000000009901"] = {
            **copy.deepcopy(lobby),
            "id": "1191000000000009901",
            "name": "side-room",
            "type": 0,
            "parent_id": lobby["id"],
            "position": 9,
        }
        deployed.channel_guild["1191000000000009901"] = BUILD_GUILD

    items = drift(invoke)

    summary = sorted((i["kind"], i["name"], i["action"], i["deployment_id"]) for i in items)
    assert summary == [
        ("channel", "Lobby / memes", "update", None),
        ("channel", "Lobby / side-room", "delete", None),
        ("role", "Mods", "update", None),
    ]
    memes = next(i for i in items if i["name"] == "Lobby / memes")
    assert {"field": "name", "old": "dank-memes", "new": "memes"} in memes["changes"]


def test_drift_is_of_the_deployment_info_answers_the_newest(invoke, deployed, aws):
    config = copy.deepcopy(BASE)
    config["roles"][1] = {**config["roles"][1], "color": 0x123456}
    first = call(invoke, {"action": "info", "project_id": "proj-1"}).body["deployment_id"]
    assert call(invoke, deploy_body(BUILD_GUILD, config)).status == 202
    later = finished(invoke, aws)["deployment_id"]

    answer = call(invoke, {"action": "info", "project_id": "proj-1", "drift": True})

    assert answer.body["deployment_id"] == later != first
    assert answer.body["drift"] == []  # the newest is the one `info` answers: nothing changed since it


# ---------------------------------------------------------------- who changed it: the audit log (VIEW_AUDIT_LOG)

LAB_CHANGES = {
    "name": "Carol's Rights Lab",
    "roles": [{"name": "Temp", "color": 0}],
    "channels": [{"name": "temp-chat"}, {"name": "notes"}, {"id": "1191000000000003063", "name": "lounge"}],
}


def _lab_drift(invoke, platform, platform_server, aws, web_user: str, chat_user: str) -> list[dict]:
    """`chat_user` deploys LAB_CHANGES to the rights lab; then alice (an administrator), with her own token, renames
    temp-chat, recolours Temp and deletes notes through the platform's HTTP API; `info` with drift, as `web_user`."""
    link(invoke, platform, user=web_user, chat_user=chat_user)
    queued = invoke("deployToChat", deploy_body(RIGHTS_LAB, LAB_CHANGES), headers=bearer(web_user))
    assert queued.status == 202, queued.body
    DeployQueue(aws).drain()
    guild = platform.guild(RIGHTS_LAB)
    channels = {c["name"]: c["id"] for c in guild["channels"].values()}
    temp = next(r["id"] for r in guild["roles"].values() if r["name"] == "Temp")
    alice = requests.Session()
    alice.headers["Authorization"] = act_as(platform, ALICE_ID)  # a person's token has no scheme
    base = platform_server.base_url
    assert alice.patch(f"{base}/channels/{channels['temp-chat']}", json={"name": "temp-talk"}, timeout=5).ok
    assert alice.patch(f"{base}/guilds/{RIGHTS_LAB}/roles/{temp}", json={"color": 0x00FF00}, timeout=5).ok
    assert alice.delete(f"{base}/channels/{channels['notes']}", timeout=5).ok
    platform.clear_log()
    answer = invoke("deployToChat", {"action": "info", "project_id": "proj-1", "drift": True}, headers=bearer(web_user))
    assert answer.status == 200, answer.body
    return answer.body["drift"]


def ours(items: list[dict]) -> list[dict]:
    """The drift of what LAB_CHANGES names (the rest of the lab is drift too: objects it does not name)."""
    return [i for i in items if i["name"] in ("Temp", "temp-chat", "notes", "lounge")]


def test_drift_names_who_made_each_change_for_a_caller_who_may_read_the_audit_log(
    invoke, platform, platform_server, function_environment, aws
):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    items = _lab_drift(invoke, platform, platform_server, aws, "web-carol", CAROL_ID)  # the owner

    summary = sorted((i["kind"], i["name"], i["action"], (i.get("by") or {}).get("user_id")) for i in ours(items))
    assert summary == [
        ("channel", "notes", "create", ALICE_ID),
        ("channel", "temp-chat", "update", ALICE_ID),
        ("role", "Temp", "update", ALICE_ID),
    ]
    # each `at` is the time of alice's entry: after the deployment finished
    finished_at = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer("web-carol"))
    assert all(i["by"]["at"] >= finished_at.body["finished_at"] for i in ours(items))
    # what the lab held before and the deployment does not name is drift too (a prune would delete it), by no one since
    others = {i["name"] for i in items} - {i["name"] for i in ours(items)}
    assert others == {"Admins", "Managers", "Members", "Helpers", "Hall", "Hall / general", "staff-secrets"}
    assert [i for i in items if i not in ours(items) and i.get("by")] == []
    # the log was read back to the deployment, no further: one page holds alice's three and the deploy's own
    assert len(platform.requests("GET", "/guilds/{guild_id}/audit-logs")) == 1


def test_drift_without_view_audit_log_names_the_changes_but_not_who_and_reads_no_audit_log(
    invoke, platform, platform_server, function_environment, aws
):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    # dave manages the lab (MANAGE_GUILD, MANAGE_ROLES, MANAGE_CHANNELS) but holds no VIEW_AUDIT_LOG
    items = _lab_drift(invoke, platform, platform_server, aws, "web-dave", DAVE_ID)

    summary = sorted((i["kind"], i["name"], i["action"], i.get("by")) for i in ours(items))
    assert summary == [
        ("channel", "notes", "create", None),
        ("channel", "temp-chat", "update", None),
        ("role", "Temp", "update", None),
    ]
    assert platform.requests("GET", "/guilds/{guild_id}/audit-logs") == []
