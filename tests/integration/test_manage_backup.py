"""manageBackup: create (compressed, counted, pruned), list newest first, get exactly what was sent."""

from __future__ import annotations

import bz2
import json
import random

import boto3
import pytest

from svcconf.clock import utc_now
from svcconf.deploy_engine.snapshot import GuildSnapshot
from svcconf.settings import get_settings
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder

GUILD = "1187392640113156136"
OTHER_GUILD = "1187392640113156137"


def realistic_backup(channel_count: int, message_count: int = 0, seed: int = 7) -> dict:
    """A backup shaped like a bot's export: roles, categories with channels and overwrites, messages."""
    rng = random.Random(seed)
    words = [
        "general",
        "chat",
        "rules",
        "voice",
        "gaming",
        "music",
        "memes",
        "staff",
        "welcome",
        "lobby",
        "events",
        "art",
        "dev",
        "support",
    ]

    def snowflake() -> str:
        return str(rng.randrange(10**17, 10**19))

    roles = [
        {
            "id": snowflake(),
            "name": f"{rng.choice(words).title()} {i}",
            "color": rng.randrange(0xFFFFFF),
            "permissions": str(rng.choice([0, 1024, 3072, 104324673])),
            "hoist": i % 3 == 0,
            "position": i,
        }
        for i in range(40)
    ]
    categories = [{"name": f"{rng.choice(words)}-{c}", "channels": []} for c in range(max(1, channel_count // 20))]
    for i in range(channel_count):
        categories[i % len(categories)]["channels"].append(
            {
                "id": snowflake(),
                "name": f"{rng.choice(words)}-{i}",
                "type": rng.choice([0, 2, 5]),
                "topic": " ".join(rng.choices(words, k=rng.randrange(0, 25))),
                "nsfw": False,
                "rate_limit_per_user": 0,
                "permission_overwrites": [{"id": rng.choice(roles)["id"], "type": 0, "allow": "1024", "deny": "2048"}],
            }
        )
    messages = [
        {
            "id": snowflake(),
            "author": {"id": snowflake(), "username": rng.choice(words)},
            "content": " ".join(rng.choices(words, k=rng.randrange(3, 40))),
            "pinned": False,
        }
        for _ in range(message_count)
    ]
    return {
        "name": "Big Guild",
        "roles": roles,
        "categories": categories,
        "channels": [],
        "messages": messages,
        "unicode": "émoji ✓ 日本語",
        "float": 0.1,
        "big": 2**62,
    }


def items_of(guild_id: str) -> list[dict]:
    table = boto3.resource("dynamodb").Table(get_settings().backups_table)
    return table.query(KeyConditionExpression="guild_id = :g", ExpressionAttributeValues={":g": guild_id})["Items"]


def create(invoke, backup_data: dict, guild_id: str = GUILD, **fields):
    return invoke("manageBackup", {"action": "create", "guild_id": guild_id, "backup_data": backup_data, **fields})


def test_create_answers_201_with_counts_and_stores_the_data_compressed(invoke):
    # Given a backup with 3 roles, one category holding 2 channels, and 1 loose channel
    data = {
        "roles": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "channels": [{"name": "loose"}],
        "categories": [{"name": "Talk", "channels": [{"name": "one"}, {"name": "two"}]}],
    }
    # When the bot creates it
    response = create(invoke, data, guild_name="Demo", label="before relaunch")
    # Then 201 with what was stored: categories count as channels, as on the platform
    assert response.status == 201
    summary = response.body["data"]
    assert summary["guild_id"] == GUILD
    assert summary["guild_name"] == "Demo"
    assert summary["label"] == "before relaunch"
    assert (summary["channels_count"], summary["roles_count"]) == (4, 3)
    assert summary["backup_id"].startswith("bk_")
    assert summary["size_bytes"] == len(json.dumps(data, separators=(",", ":")).encode())
    assert "backup_data" not in summary
    # And the table holds a summary item and a bzip2-compressed data item
    items = {item["sk"].split("#")[0]: item for item in items_of(GUILD)}
    assert set(items) == {"BACKUP", "DATA"}
    assert json.loads(bz2.decompress(items["DATA"]["data"].value)) == data


def test_list_is_newest_first_and_leaves_out_the_data(invoke):
    ids = [create(invoke, {"roles": [], "n": n}, label=f"backup {n}").body["data"]["backup_id"] for n in range(3)]
    create(invoke, {"roles": []}, guild_id=OTHER_GUILD)
    response = invoke("manageBackup", {"action": "list", "guild_id": GUILD})
    assert response.status == 200
    assert set(response.body) == {"action", "backups", "schedule"}  # the answer repeats its action
    assert response.body["schedule"] is None
    assert {(b["kind"], b["format"], b["restorable"]) for b in response.body["backups"]} == {
        ("uploaded", "unknown", False)
    }
    assert [backup["backup_id"] for backup in response.body["backups"]] == list(reversed(ids))
    assert [backup["label"] for backup in response.body["backups"]] == ["backup 2", "backup 1", "backup 0"]
    assert all("backup_data" not in backup for backup in response.body["backups"])


def test_list_of_a_guild_without_backups_is_empty(invoke):
    response = invoke("manageBackup", {"action": "list", "guild_id": GUILD})
    assert response.status == 200
    assert response.body == {"action": "list", "backups": [], "schedule": None}


def test_get_returns_the_backup_data_exactly_as_sent(invoke):
    data = realistic_backup(channel_count=30)
    backup_id = create(invoke, data).body["data"]["backup_id"]
    response = invoke("manageBackup", {"action": "get", "backup_id": backup_id})
    assert response.status == 200
    assert response.body["data"]["backup_data"] == data
    assert json.dumps(response.body["data"]["backup_data"]) == json.dumps(data)  # key order too
    assert response.body["data"]["channels_count"] == 30 + 1


def test_two_megabyte_backup_round_trips_exactly(invoke):
    # Given about 2 MB of JSON, shaped like a real export
    data = realistic_backup(channel_count=500, message_count=8000)
    size = len(json.dumps(data).encode())
    assert 1_900_000 < size < 2_300_000
    # When created and fetched back
    created = create(invoke, data)
    fetched = invoke("manageBackup", {"action": "get", "backup_id": created.body["data"]["backup_id"]})
    # Then it comes back exactly, and was stored in a fraction of its size
    assert created.status == 201
    assert fetched.body["data"]["backup_data"] == data
    assert created.body["data"]["stored_bytes"] < 400 * 1024 < created.body["data"]["size_bytes"]


def test_backup_too_large_for_an_item_is_refused_with_413_and_nothing_stored(invoke):
    # Given JSON that does not compress below DynamoDB's 400 KB item limit (random text)
    rng = random.Random(3)
    data = {
        "channels": [
            {"name": "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=60))} for _ in range(15_000)
        ]
    }
    # When the bot creates it
    response = create(invoke, data)
    # Then 413 in the contract's body, and the guild has no backup at all
    assert response.status == 413
    assert response.body["error"] == "Payload Too Large"
    assert "compresses to" in response.body["message"]
    assert items_of(GUILD) == []


def test_each_guild_keeps_only_its_newest_backups(invoke, monkeypatch):
    # Given a retention of 3 backups per guild
    monkeypatch.setenv("SVC_BACKUPS_PER_GUILD", "3")
    get_settings.cache_clear()
    # When 5 backups are created
    ids = [create(invoke, {"n": n}).body["data"]["backup_id"] for n in range(5)]
    # Then the 3 newest remain, with their data, and the 2 oldest are gone entirely
    listed = invoke("manageBackup", {"action": "list", "guild_id": GUILD}).body["backups"]
    assert [backup["backup_id"] for backup in listed] == list(reversed(ids[2:]))
    assert len(items_of(GUILD)) == 6
    assert invoke("manageBackup", {"action": "get", "backup_id": ids[0]}).status == 404
    assert invoke("manageBackup", {"action": "get", "backup_id": ids[4]}).body["data"]["backup_data"] == {"n": 4}


def test_get_of_an_unknown_backup_is_not_found(invoke):
    response = invoke("manageBackup", {"action": "get", "backup_id": "bk_0000000000000000000000"})
    assert response.status == 404
    assert response.body["message"] == "No backup with this backup_id exists."


def test_get_with_another_guild_id_is_not_found(invoke):
    backup_id = create(invoke, {"roles": []}).body["data"]["backup_id"]
    assert invoke("manageBackup", {"action": "get", "backup_id": backup_id, "guild_id": GUILD}).status == 200
    response = invoke("manageBackup", {"action": "get", "backup_id": backup_id, "guild_id": OTHER_GUILD})
    assert response.status == 404


def test_a_deployments_snapshot_is_fetched_only_with_its_guild_id(invoke):
    # Given the snapshot a deploy stores before its first write (the worker's own form)
    live = GuildBuilder()
    live.channel("general")
    snapshot = GuildSnapshot.of(live.build(), utc_now()).backup_data("dp_1")
    backup_id = create(invoke, snapshot, guild_id=GUILD_ID).body["data"]["backup_id"]
    # When fetched by its id alone, Then 400 names guild_id and no data is answered
    refused = invoke("manageBackup", {"action": "get", "backup_id": backup_id})
    assert refused.status == 400
    assert [detail["field"] for detail in refused.body["details"]] == ["guild_id"]
    assert "data" not in refused.body
    # With its guild, it comes back exactly; with another, it does not exist
    fetched = invoke("manageBackup", {"action": "get", "backup_id": backup_id, "guild_id": GUILD_ID})
    assert fetched.body["data"]["backup_data"] == snapshot
    assert invoke("manageBackup", {"action": "get", "backup_id": backup_id, "guild_id": OTHER_GUILD}).status == 404


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"action": "create"}, ["guild_id"]),  # without backup_data: from the live guild (test_manage_backup_live.py)
        ({"action": "list"}, ["guild_id"]),
        ({"action": "get", "guild_id": GUILD}, ["backup_id"]),
    ],
)
def test_a_field_the_action_needs_is_named_when_missing(invoke, body, fields):
    response = invoke("manageBackup", body)
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == fields
    assert all(d["message"] == "is required" for d in response.body["details"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "export", "guild_id": GUILD}, "action"),
        ({"guild_id": GUILD}, "action"),
        ({"action": "list", "guild_id": "12345"}, "guild_id"),
        ({"action": "list", "guild_id": 1187392640113156136}, "guild_id"),
        ({"action": "create", "guild_id": GUILD, "backup_data": [1, 2]}, "backup_data"),
        ({"action": "create", "guild_id": GUILD, "backup_data": {}, "label": "x" * 101}, "label"),
        ({"action": "create", "guild_id": GUILD, "backup_data": {}, "guild_name": 5}, "guild_name"),
    ],
)
def test_an_invalid_field_is_rejected_by_name(invoke, body, field):
    response = invoke("manageBackup", body)
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == [field]
    assert items_of(GUILD) == []
