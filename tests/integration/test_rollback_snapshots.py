"""The snapshots a rollback needs: kept out of the bot's backup retention, pruned on their own count, and a
rollback whose snapshot is gone refused at once (409, nothing queued) or, if it goes while queued, ended with its
guild freed."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from local.template import LOCAL_REGION
from svcconf.backups import archive
from svcconf.settings import get_settings
from tests.helpers.deploy_worker import DEMO, USER, DeployQueue, deploy_body, link
from tests.helpers.handlers import BOT_TOKEN, bearer

CONFIG: dict[str, Any] = {"name": "Snap", "roles": [{"name": "Snapper", "permissions": ["SEND_MESSAGES"]}]}
ROLLBACK = {"action": "rollback", "project_id": "proj-1"}


@pytest.fixture
def linked(invoke, platform, function_environment, monkeypatch):
    monkeypatch.setenv("SVC_BACKUPS_PER_GUILD", "2")
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    return platform


def deployed(invoke, aws) -> dict[str, Any]:
    assert invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER)).status == 202
    DeployQueue(aws).drain()
    done = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body
    assert done["status"] == "succeeded"
    return done


def forget_snapshot(backup_id: str) -> None:
    """The snapshot gone as a retention would take it: its summary, data and locator deleted."""
    table = boto3.resource("dynamodb", region_name=LOCAL_REGION).Table(get_settings().backups_table)
    for key in ({"guild_id": DEMO, "sk": f"BACKUP#{backup_id}"}, {"guild_id": DEMO, "sk": f"DATA#{backup_id}"}):
        table.delete_item(Key=key)


def test_the_bots_backups_never_prune_a_deployments_snapshot(invoke, linked, aws):
    done = deployed(invoke, aws)

    for label in ("one", "two", "three"):
        body = {"action": "create", "guild_id": DEMO, "backup_data": {"roles": []}, "label": label}
        assert invoke("manageBackup", body, headers={"x-bot-token": BOT_TOKEN}).status == 201
    listed = invoke("manageBackup", {"action": "list", "guild_id": DEMO}, headers={"x-bot-token": BOT_TOKEN}).body

    labels = [backup["label"] for backup in listed["backups"]]
    assert labels[:2] == ["three", "two"]  # the bot's own: its newest 2
    assert "one" not in labels
    assert f"Before deployment {done['deployment_id']}" in labels
    assert invoke("deployToChat", ROLLBACK, headers=bearer(USER)).status == 202


def test_a_guild_keeps_its_newest_20_deployment_snapshots_whatever_the_bot_backs_up(aws, monkeypatch):
    monkeypatch.setenv("SVC_BACKUPS_PER_GUILD", "1")
    get_settings.cache_clear()
    made = [
        archive.create_deployment_snapshot(DEMO, {"roles": [], "n": n}, guild_name="g", label=f"snap {n}")
        for n in range(22)
    ]
    archive.create_backup(DEMO, {"roles": []}, guild_name="g", label="the bot's")

    assert [archive.backup_exists(summary.backup_id) for summary in made] == [False, False, *[True] * 20]


def test_a_rollback_whose_snapshot_is_gone_is_refused_at_once_and_the_guild_stays_free(invoke, linked, aws):
    done = deployed(invoke, aws)
    forget_snapshot(done["backup_id"])

    refused = invoke("deployToChat", ROLLBACK, headers=bearer(USER))

    assert refused.status == 409
    assert done["backup_id"] in refused.body["message"]
    assert DeployQueue(aws).waiting() == 0
    assert invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER)).status == 202


def test_a_queued_rollback_whose_snapshot_goes_meanwhile_fails_and_frees_its_guild(invoke, linked, aws):
    done = deployed(invoke, aws)
    assert invoke("deployToChat", ROLLBACK, headers=bearer(USER)).status == 202
    forget_snapshot(done["backup_id"])

    DeployQueue(aws).drain()

    ended = invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body
    assert (ended["kind"], ended["status"]) == ("rollback", "failed")
    assert f"The snapshot of the server ({done['backup_id']}) is gone." in ended["generation"]["error"]
    assert invoke("deployToChat", deploy_body(DEMO, CONFIG), headers=bearer(USER)).status == 202
