"""A configuration as big as deployToChat's body allows: stored where it fits (the documents bucket, not the
deployment's or the code's item), deployed whole, its code readable, its guild's snapshot stored, rolled back."""

from __future__ import annotations

import json

import boto3
import pytest

from local.samples import forum_library
from local.template import LOCAL_REGION
from svcconf.api.resolver import MIB
from svcconf.settings import get_settings
from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.deploy_worker import USER, DeployQueue, deploy_body, link, writes
from tests.helpers.handlers import BOT_TOKEN, bearer

CONFIG = forum_library(body_bytes=1_040_000)


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    # What is tested is where the documents go, not the pace of 255 creations: the platform's limits are lifted.
    platform.configure(
        route_limits={"POST /guilds/{guild_id}/channels": None}, bucket_limit=10_000, global_limit_per_second=0
    )
    platform.clear_log()
    return platform


def info(invoke) -> dict:
    return invoke("deployToChat", {"action": "info", "project_id": "proj-1"}, headers=bearer(USER)).body


def stored_items() -> list[dict]:
    table = boto3.resource("dynamodb", region_name=LOCAL_REGION).Table(get_settings().deployments_table)
    return table.query(KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": f"USER#{USER}"})["Items"]


def topics(config: dict) -> dict[str, str]:
    return {forum["name"]: forum["topic"] for category in config["categories"] for forum in category["channels"]}


def bucket_keys() -> list[str]:
    listed = boto3.client("s3", region_name=LOCAL_REGION).list_objects_v2(Bucket=get_settings().documents_bucket)
    return sorted(entry["Key"] for entry in listed.get("Contents", []))


def test_a_configuration_of_a_mib_of_forums_deploys_whole_and_rolls_back(invoke, linked, aws):
    body = deploy_body(BUILD_GUILD, CONFIG)
    assert 1_000_000 < len(json.dumps(body)) <= MIB

    queued = invoke("deployToChat", body, headers=bearer(USER))

    assert queued.status == 202, queued.body
    # The deployment's item keeps a reference; the configuration itself is in the documents bucket.
    [item] = stored_items()
    reference = item["configuration"]
    assert set(reference) == {"s3_key", "stored_bytes"}
    code = invoke("getConfigByCode", {"code": queued.body["deployment_code"]}, headers={"x-bot-token": BOT_TOKEN})
    assert code.status == 200, code.body
    assert topics(code.body["configuration"]) == topics(CONFIG)

    DeployQueue(aws).drain()

    done = info(invoke)
    assert (done["status"], done["steps"]["errors"]) == ("succeeded", [])
    assert (done["steps"]["categories"]["created"], done["steps"]["channels"]["created"]) == (5, 250)
    forums = {c["name"]: c for c in linked.guild(BUILD_GUILD)["channels"].values() if c["type"] == 15}
    assert len(forums) == 250
    assert forums["shelf-3-17"]["topic"] == CONFIG["categories"][2]["channels"][16]["topic"]
    assert len(forums["shelf-3-17"]["available_tags"]) == 5

    # The rollback reads the big configuration back and undoes all of it.
    linked.clear_log()
    assert invoke("deployToChat", {"action": "rollback", "project_id": "proj-1"}, headers=bearer(USER)).status == 202
    DeployQueue(aws).drain()

    undone = info(invoke)
    assert (undone["kind"], undone["status"]) == ("rollback", "succeeded"), undone
    assert (undone["steps"]["categories"]["deleted"], undone["steps"]["channels"]["deleted"]) == (5, 250)
    assert linked.guild(BUILD_GUILD)["channels"] == {}
    assert any(key.startswith("deployments/") for key in bucket_keys())


def test_the_snapshot_of_a_guild_too_big_for_an_item_is_stored_in_the_bucket_and_a_redeploy_writes_nothing(
    invoke, linked, aws
):
    assert invoke("deployToChat", deploy_body(BUILD_GUILD, CONFIG), headers=bearer(USER)).status == 202
    DeployQueue(aws).drain()
    linked.clear_log()

    again = invoke("deployToChat", deploy_body(BUILD_GUILD, CONFIG), headers=bearer(USER))
    DeployQueue(aws).drain()

    assert again.status == 202
    done = info(invoke)
    assert (done["status"], done["steps"]["channels"]["existing"]) == ("succeeded", 250)
    assert writes(linked) == []
    # The second deploy's snapshot holds the 250 long topics: the bucket keeps it, the bot reads it as any backup.
    assert f"snapshots/{BUILD_GUILD}/{done['backup_id']}.json.bz2" in bucket_keys()
    fetched = invoke(
        "manageBackup",
        {"action": "get", "backup_id": done["backup_id"], "guild_id": BUILD_GUILD},
        headers={"x-bot-token": BOT_TOKEN},
    )
    assert fetched.status == 200
    assert len(fetched.body["data"]["backup_data"]["channels"]) == 250
