"""Backups read as real DynamoDB would answer: found the moment they are created, and only a too-large item is a 413.

moto answers every read consistently, so the reads themselves are checked: each one the service sends to
DynamoDB (botocore's event hooks see them) must be a strongly consistent read of the base table.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from botocore.exceptions import ClientError

from svcconf.settings import get_settings
from svcconf.store.backups import BackupRepository, BackupSummary, ItemTooLarge, is_item_too_large
from svcconf.store.dynamo import dynamodb

GUILD = "1187392640113156136"
READS = ("GetItem", "Query", "Scan", "BatchGetItem")


@pytest.fixture
def dynamodb_calls(aws) -> Iterator[list[tuple[str, dict]]]:
    """(operation, parameters) of every DynamoDB request the service sends while the test runs."""
    calls: list[tuple[str, dict]] = []
    events = dynamodb().meta.client.meta.events

    def record(params: dict, model, **_: object) -> None:
        calls.append((model.name, dict(params)))

    events.register("provide-client-params.dynamodb.*", record)
    yield calls
    events.unregister("provide-client-params.dynamodb.*", record)


def test_a_backup_is_fetched_by_id_alone_right_after_it_is_created(invoke, dynamodb_calls):
    # Given a backup the bot has just created
    created = invoke("manageBackup", {"action": "create", "guild_id": GUILD, "backup_data": {"roles": [{"n": 1}]}})
    assert created.status == 201
    del dynamodb_calls[:]
    # When it fetches it by backup_id alone, and lists the guild's backups
    fetched = invoke("manageBackup", {"action": "get", "backup_id": created.body["data"]["backup_id"]})
    listed = invoke("manageBackup", {"action": "list", "guild_id": GUILD})
    # Then both see it
    assert fetched.status == 200
    assert fetched.body["data"]["backup_data"] == {"roles": [{"n": 1}]}
    assert [backup["backup_id"] for backup in listed.body["backups"]] == [created.body["data"]["backup_id"]]
    # And every read was a strongly consistent read of the base table, none went through an index: get's three
    # items by key, list's query of the guild, and (manageBackup v4: list answers the guild's `schedule`) its schedule
    reads = [(operation, params) for operation, params in dynamodb_calls if operation in READS]
    assert [operation for operation, _ in reads] == ["GetItem", "GetItem", "GetItem", "Query", "GetItem"]
    assert reads[-1][1]["Key"] == {"guild_id": GUILD, "sk": "SCHEDULE"}
    assert listed.body["schedule"] is None
    assert all(params.get("ConsistentRead") is True and "IndexName" not in params for _, params in reads)


def test_pruned_backups_leave_nothing_behind(invoke, monkeypatch):
    # Given a retention of one backup per guild
    monkeypatch.setenv("SVC_BACKUPS_PER_GUILD", "1")
    get_settings.cache_clear()
    first, second = (
        invoke("manageBackup", {"action": "create", "guild_id": GUILD, "backup_data": {"n": n}}).body["data"]
        for n in range(2)
    )
    # Then the first is gone, its locator too: every item left belongs to the second
    assert invoke("manageBackup", {"action": "get", "backup_id": first["backup_id"]}).status == 404
    items = dynamodb().Table(get_settings().backups_table).scan(ConsistentRead=True)["Items"]
    assert sorted(item["sk"] for item in items) == sorted(
        ["BACKUP#" + second["backup_id"], "DATA#" + second["backup_id"], "LOCATOR"]
    )


def summary(backup_id: str) -> BackupSummary:
    return BackupSummary(
        backup_id=backup_id,
        guild_id=GUILD,
        channels_count=0,
        roles_count=0,
        created_at=datetime.now(UTC),
        size_bytes=1,
        stored_bytes=1,
    )


def test_dynamodb_s_item_size_refusal_is_item_too_large(aws):
    repository = BackupRepository(get_settings().backups_table)
    with pytest.raises(ItemTooLarge):
        repository.insert(summary("bk_big"), b"x" * (401 * 1024))


def test_another_validation_error_mentioning_a_size_is_not_item_too_large(aws):
    # Given a key DynamoDB refuses for its own size limit (a sort key over 1024 bytes), a bug rather than a big backup
    repository = BackupRepository(get_settings().backups_table)
    with pytest.raises(ClientError) as caught:
        repository.insert(summary("bk_" + "7" * 1100), b"small")
    # Then it surfaces as the error it is (a 500 for the caller), never as ItemTooLarge (a 413)
    assert not isinstance(caught.value, ItemTooLarge)
    assert caught.value.response["Error"]["Code"] == "ValidationException"
    assert "size" in caught.value.response["Error"]["Message"].lower()


@pytest.mark.parametrize(
    ("response", "too_large"),
    [
        ({"Error": {"Code": "ValidationException", "Message": "Item size has exceeded the maximum allowed size"}}, 1),
        ({"Error": {"Code": "ValidationException", "Message": "Item size to update has exceeded the maximum"}}, 1),
        (
            {
                "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
                "CancellationReasons": [
                    {"Code": "None"},
                    {"Code": "ValidationError", "Message": "Item size has exceeded the maximum allowed size"},
                ],
            },
            1,
        ),
        (
            {
                "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
                "CancellationReasons": [{"Code": "ConditionalCheckFailed"}, {"Code": "None"}],
            },
            0,
        ),
        ({"Error": {"Code": "ValidationException", "Message": "Hash primary key values must be under 2048 bytes"}}, 0),
        ({"Error": {"Code": "ValidationException", "Message": "One or more parameter values were invalid: size"}}, 0),
        ({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "Item size"}}, 0),
    ],
)
def test_only_the_item_size_refusal_counts_as_too_large(response, too_large):
    assert is_item_too_large(ClientError(response, "TransactWriteItems")) is bool(too_large)
