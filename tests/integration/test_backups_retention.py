"""Backups at the layer, with only the backups table and the documents bucket in moto and the clock set by the
test: what a create stores and refuses, which backups each guild keeps (the bot's newest N, deployments' newest
20, each apart from the other), what a list answers, what a get and an existence check find."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from svcconf.backups import archive
from svcconf.errors import BackupNotFound, BackupTooLarge, BadRequest, FieldError
from svcconf.settings import get_settings
from svcconf.store import blobs
from svcconf.store.dynamo import dynamodb

TABLE = "backups-under-test"
BUCKET = "documents-under-test"
GUILD = "1187392640113156136"
OTHER_GUILD = "1187392640113156999"
NOON = datetime(2026, 11, 25, 12, 0, 0, 250_000, tzinfo=UTC)
NOON_MS_HEX = f"{int(NOON.timestamp() * 1000):012x}"
SNAPSHOT = {"kind": "deployment-snapshot", "roles": [{"name": "Mods"}], "channels": []}
# The size tests set the item limit to 11,024 bytes (moto refuses items over 405,000 where DynamoDB takes 409,600,
# and small backups keep each mutant's run short): the largest compressed backup is then that less 1 KB for the
# keys, 10,000 bytes; RANDOM_HEX's first FITS_EXACTLY characters compress to exactly that, its first ONE_BYTE_OVER
# to one more (found by search; each test asserts it first).
ITEM_LIMIT = 11_024
LARGEST_STORED = 10_000
FITS_EXACTLY, ONE_BYTE_OVER = 19_423, 19_393
RANDOM_HEX = random.Random(26).randbytes(125_000).hex()


class Clock:
    def __init__(self) -> None:
        self.now = NOON

    def utc_now(self) -> datetime:
        return self.now

    def tick(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """The backups table as template.yaml declares it and the documents bucket, in moto; the backups' clock."""
    fake = Clock()
    monkeypatch.setattr(archive, "utc_now", fake.utc_now)
    monkeypatch.setenv("BACKUPS_TABLE_NAME", TABLE)
    monkeypatch.setenv("DOCUMENTS_BUCKET_NAME", BUCKET)
    monkeypatch.setenv("SVC_BACKUPS_PER_GUILD", "2")
    get_settings.cache_clear()
    with mock_aws():
        boto3.client("dynamodb").create_table(
            TableName=TABLE,
            AttributeDefinitions=[
                {"AttributeName": "guild_id", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "guild_id", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield fake
    get_settings.cache_clear()


def items() -> dict[tuple[str, str], dict[str, Any]]:
    """The table's items by (guild_id, sk)."""
    scanned = boto3.resource("dynamodb").Table(TABLE).scan(ConsistentRead=True)["Items"]
    return {(item["guild_id"], item["sk"]): item for item in scanned}


def objects() -> list[str]:
    return [entry["Key"] for entry in boto3.client("s3").list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def kept_ids(guild_id: str = GUILD) -> list[str]:
    """The backup ids whose summary is in the table, oldest first."""
    return sorted(sk.removeprefix("BACKUP#") for guild, sk in items() if guild == guild_id and sk[:7] == "BACKUP#")


def backup(clock: Clock, n: int, guild_id: str = GUILD) -> str:
    clock.tick()
    return archive.create_backup(guild_id, {"roles": [], "n": n}, guild_name="Study Hall", label=f"b{n}").backup_id


def snapshot(clock: Clock, n: int, data: dict[str, Any] | None = None) -> str:
    clock.tick()
    made = archive.create_deployment_snapshot(GUILD, data or {**SNAPSHOT, "n": n}, guild_name="Study Hall", label="s")
    return made.backup_id


def random_text(length: int) -> dict[str, str]:
    """A backup of `length` random hex characters: bzip2 keeps about half of them."""
    return {"text": RANDOM_HEX[:length]}


# ---------------------------------------------------------------- create: what is stored, what is refused


def test_a_backup_stores_its_summary_its_compressed_data_and_a_locator_and_answers_the_summary(clock) -> None:
    data = {
        "roles": [{"name": "Mods"}, {"name": "Tutors"}],
        "channels": [{"name": "rules"}],
        "categories": [{"name": "Study", "channels": [{"name": "a"}, {"name": "b"}]}, {"name": "Empty"}],
    }

    made = archive.create_backup(GUILD, data, guild_name="Study Hall", label="before the term")

    raw = blobs.json_bytes(data)
    stored = blobs.pack(raw)
    assert made.model_dump() == {
        "backup_id": made.backup_id,
        "guild_id": GUILD,
        "guild_name": "Study Hall",
        "label": "before the term",
        "channels_count": 5,  # one channel, two categories, the two channels of the first
        "roles_count": 2,
        "created_at": NOON,
        "size_bytes": len(raw),
        "stored_bytes": len(stored),
        # v4: its kind and format (a shape no format has: not restorable, and why), nothing pruned
        "kind": "uploaded",
        "format": "unknown",
        "restorable": False,
        "made_by": None,
        "digest": None,
        "members_count": None,
        "problems": [problem.model_dump() for problem in made.problems],
        "warnings": [],
        "pruned": [],
    }
    assert [problem.field for problem in made.problems] == ["name"]
    summary, data_item, locator = (
        items()[(GUILD, f"BACKUP#{made.backup_id}")],
        items()[(GUILD, f"DATA#{made.backup_id}")],
        items()[(f"BACKUP_ID#{made.backup_id}", "LOCATOR")],
    )
    assert (summary["retention"], summary["stored_bytes"], summary["created_at"]) == (
        "backup",
        len(stored),
        "2026-11-25T12:00:00.250000Z",
    )
    assert blobs.unpack(data_item["data"]) == data
    assert locator["backup_guild_id"] == GUILD
    assert len(items()) == 3


def test_a_backup_id_is_its_creation_millisecond_in_fixed_width_hex_then_ten_random_hex_digits(clock) -> None:
    first = archive.create_backup(GUILD, {}, guild_name=None, label=None).backup_id
    second = archive.create_backup(GUILD, {}, guild_name=None, label=None).backup_id

    assert re.fullmatch(rf"bk_{NOON_MS_HEX}[0-9a-f]{{10}}", first)
    assert re.fullmatch(rf"bk_{NOON_MS_HEX}[0-9a-f]{{10}}", second)
    assert first != second  # the same millisecond: the random part tells them apart


@pytest.mark.parametrize(
    ("data", "channels", "roles"),
    [
        ({}, 0, 0),
        ({"channels": "rules", "roles": {"name": "Mods"}, "categories": "Study"}, 0, 0),
        ({"categories": [{"name": "Study", "channels": "a"}, "Lounge", {"name": "Empty"}]}, 3, 0),
        ({"channels": [{}, {}], "categories": [{"channels": [{}, {}, {}]}], "roles": [{}]}, 6, 1),
    ],
    ids=["empty", "not lists count nothing", "categories count, their non-list channels do not", "all together"],
)
def test_a_backup_counts_categories_and_their_channels_as_channels_and_only_what_is_a_list(
    clock, data, channels, roles
) -> None:
    made = archive.create_backup(GUILD, data, guild_name=None, label=None)
    assert (made.channels_count, made.roles_count) == (channels, roles)


def test_a_backup_that_compresses_to_the_largest_stored_size_is_kept_whole(clock, monkeypatch) -> None:
    monkeypatch.setattr(archive, "MAX_ITEM_BYTES", ITEM_LIMIT)
    data = random_text(FITS_EXACTLY)
    assert len(blobs.pack(blobs.json_bytes(data))) == LARGEST_STORED

    made = archive.create_backup(GUILD, data, guild_name=None, label=None)

    assert made.stored_bytes == LARGEST_STORED
    assert archive.get_backup(made.backup_id).backup_data == data


def test_a_backup_one_byte_over_the_largest_stored_size_is_refused_with_both_sizes_and_nothing_stored(
    clock, monkeypatch
) -> None:
    monkeypatch.setattr(archive, "MAX_ITEM_BYTES", ITEM_LIMIT)
    data = random_text(ONE_BYTE_OVER)
    assert len(blobs.pack(blobs.json_bytes(data))) == LARGEST_STORED + 1

    with pytest.raises(BackupTooLarge) as refused:
        archive.create_backup(GUILD, data, guild_name=None, label=None)

    assert refused.value.status == 413
    assert refused.value.message == (
        f"The backup compresses to {LARGEST_STORED + 1} bytes; at most {LARGEST_STORED} can be stored."
    )
    assert items() == {}


def test_a_backup_whose_summary_dynamodb_refuses_for_its_size_is_refused_and_nothing_stored(clock) -> None:
    with pytest.raises(BackupTooLarge) as refused:
        archive.create_backup(GUILD, {"roles": []}, guild_name=None, label="x" * (401 * 1024))

    assert (refused.value.status, refused.value.message) == (413, BackupTooLarge.default_message)
    assert items() == {}


# ---------------------------------------------------------------- retention: the newest N of each kind, per guild


def test_each_guild_keeps_its_newest_backups_and_the_pruned_leave_no_item_behind(clock, caplog) -> None:
    caplog.set_level(logging.INFO)
    made = [backup(clock, n) for n in range(3)]
    other = backup(clock, 9, guild_id=OTHER_GUILD)

    assert kept_ids() == made[1:]
    assert kept_ids(OTHER_GUILD) == [other]
    assert sorted(items()) == sorted(
        [(GUILD, f"{kind}#{backup_id}") for backup_id in made[1:] for kind in ("BACKUP", "DATA")]
        + [(OTHER_GUILD, f"BACKUP#{other}"), (OTHER_GUILD, f"DATA#{other}")]
        + [(f"BACKUP_ID#{backup_id}", "LOCATOR") for backup_id in [*made[1:], other]]
    )
    pruned = [(r.getMessage(), r.guild_id, r.pruned, r.retention) for r in caplog.records if hasattr(r, "pruned")]
    assert pruned == [("pruned old backups", GUILD, 1, "backup")]


def test_the_bots_backups_never_prune_a_deployments_snapshot(clock) -> None:
    snapshots = [snapshot(clock, n) for n in range(2)]
    made = [backup(clock, n) for n in range(3)]

    assert kept_ids() == [*snapshots, *made[1:]]


def test_a_guild_keeps_its_newest_20_deployment_snapshots_and_the_pruned_ones_leave_the_bucket(clock, caplog) -> None:
    caplog.set_level(logging.INFO)
    made_first = [backup(clock, n) for n in range(2)]
    large = snapshot(clock, 0, {**SNAPSHOT, **random_text(240_000)})  # past what an item keeps: in the bucket
    assert objects() == [f"snapshots/{GUILD}/{large}.json.bz2"]
    snapshots = [large] + [snapshot(clock, n) for n in range(1, 20)]
    assert kept_ids() == [*made_first, *snapshots]

    newest = snapshot(clock, 20)

    assert kept_ids() == [*made_first, *snapshots[1:], newest]  # the bot's two stay
    assert objects() == []
    pruned = [(r.getMessage(), r.guild_id, r.pruned, r.retention) for r in caplog.records if hasattr(r, "pruned")]
    assert pruned == [("pruned old backups", GUILD, 1, "deployment")]


def test_a_large_snapshot_is_kept_in_the_bucket_and_read_back_whole(clock) -> None:
    data = {**SNAPSHOT, **random_text(240_000)}

    made = archive.create_deployment_snapshot(GUILD, data, guild_name="Study Hall", label="Before deployment d1")

    reference = items()[(GUILD, f"DATA#{made.backup_id}")]["data"]
    assert reference == {"s3_key": f"snapshots/{GUILD}/{made.backup_id}.json.bz2", "stored_bytes": made.stored_bytes}
    assert made.stored_bytes == len(blobs.pack(blobs.json_bytes(data)))
    assert items()[(GUILD, f"BACKUP#{made.backup_id}")]["retention"] == "deployment"
    fetched = archive.get_backup(made.backup_id, guild_id=GUILD)
    assert (fetched.backup_data, fetched.label, fetched.guild_name) == (data, "Before deployment d1", "Study Hall")


def test_a_small_snapshot_is_kept_inside_its_item(clock) -> None:
    made = archive.create_deployment_snapshot(GUILD, SNAPSHOT, guild_name="Study Hall", label="s")

    assert (made.kind, items()[(GUILD, f"BACKUP#{made.backup_id}")]["kind"]) == ("deployment", "deployment")
    assert blobs.unpack(items()[(GUILD, f"DATA#{made.backup_id}")]["data"]) == SNAPSHOT
    assert made.stored_bytes == len(blobs.pack(blobs.json_bytes(SNAPSHOT)))
    assert (made.channels_count, made.roles_count, made.created_at) == (0, 1, NOON)
    assert objects() == []


# ---------------------------------------------------------------- list, get, fetch and exists


def test_a_list_answers_the_bots_kept_backups_and_20_snapshots_newest_first(clock) -> None:
    snapshots = [snapshot(clock, n) for n in range(20)]
    made = [backup(clock, n) for n in range(3)]

    listed = archive.list_backups(GUILD)

    assert [summary.backup_id for summary in listed] == [made[2], made[1], *reversed(snapshots)]
    assert listed[0].label == "b2"


def test_a_list_of_a_guild_without_backups_is_empty(clock) -> None:
    backup(clock, 0, guild_id=OTHER_GUILD)
    assert archive.list_backups(GUILD) == []


def test_a_get_by_id_alone_answers_the_summary_and_the_data_exactly_as_stored(clock) -> None:
    made = archive.create_backup(GUILD, {"roles": [{"name": "Mods"}]}, guild_name="Study Hall", label="l")

    fetched = archive.get_backup(made.backup_id)

    created = made.model_dump(exclude={"problems", "warnings", "pruned"})  # the create's findings, not the backup's
    assert fetched.model_dump() == {**created, "backup_data": {"roles": [{"name": "Mods"}]}}


def test_a_get_or_fetch_with_another_guilds_id_is_not_found(clock) -> None:
    made = backup(clock, 0)

    with pytest.raises(BackupNotFound):
        archive.get_backup(made, guild_id=OTHER_GUILD)
    with pytest.raises(BackupNotFound):
        archive.fetch_backup(made, guild_id=OTHER_GUILD)
    assert archive.get_backup(made, guild_id=GUILD).backup_id == made


def test_an_unknown_id_is_not_found_from_its_missing_locator_alone(clock) -> None:
    reads: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **_: object) -> None:
        reads.append(dict(params))

    events = dynamodb().meta.client.meta.events
    events.register("provide-client-params.dynamodb.GetItem", record)
    try:
        with pytest.raises(BackupNotFound):
            archive.get_backup("bk_000000000000ffffffffff")
    finally:
        events.unregister("provide-client-params.dynamodb.GetItem", record)

    # DynamoDB refuses a key without its guild (moto answers nothing): no read is sent for one
    assert [read["Key"] for read in reads] == [{"guild_id": "BACKUP_ID#bk_000000000000ffffffffff", "sk": "LOCATOR"}]


def test_a_snapshot_is_fetched_with_its_guild_id_and_refused_by_name_without_it(clock) -> None:
    made = snapshot(clock, 0)

    assert archive.fetch_backup(made, guild_id=GUILD).backup_data == {**SNAPSHOT, "n": 0}
    with pytest.raises(BadRequest) as refused:
        archive.fetch_backup(made, guild_id=None)
    assert refused.value.status == 400
    assert [(detail.field, detail.message) for detail in refused.value.details or []] == [
        ("guild_id", "is required to fetch a deployment's snapshot")
    ]


def test_the_bots_backup_is_fetched_by_id_alone(clock) -> None:
    made = backup(clock, 0)
    assert archive.fetch_backup(made, guild_id=None).backup_data == {"roles": [], "n": 0}


def test_a_backup_exists_while_its_data_is_stored_and_not_once_pruned_or_unknown(clock) -> None:
    kept, lost = backup(clock, 0), backup(clock, 1)
    boto3.resource("dynamodb").Table(TABLE).delete_item(Key={"guild_id": GUILD, "sk": f"DATA#{lost}"})
    pruned, *_ = [snapshot(clock, n) for n in range(21)]

    assert archive.backup_exists(kept) is True
    assert archive.backup_exists(lost) is False  # its locator remains: the data item decides
    assert archive.backup_exists(pruned) is False
    assert archive.backup_exists("bk_000000000000ffffffffff") is False


# ---------------------------------------------------------------- v4: kinds, their retentions, pruned, delete


def live(clock: Clock, n: int, *, members: int = 0, big: bool = False) -> archive.LiveBackup:
    clock.tick()
    data: dict[str, Any] = {"name": "Study Hall", "roles": [], "categories": [], "channels": [], "n": n}
    data["members"] = [{"user_id": str(10**18 + i), "roles": []} for i in range(members)]
    if big:
        data |= random_text(240_000)
    return archive.LiveBackup(
        guild_id=GUILD, guild_name="Study Hall", backup_data=data, digest=f"sha256:{n}", members_count=members
    )


def test_a_live_backup_is_stored_with_its_kind_digest_members_and_maker(clock) -> None:
    made = live(clock, 0, members=3)
    made.made_by = "1191000000000000101"
    made.warnings = [FieldError(field="members", message="members' roles were not read", rule="members-not-read")]

    created = archive.store_live_backup(made, label="nightly")

    summary = items()[(GUILD, f"BACKUP#{created.backup_id}")]
    assert (summary["guild_name"], created.guild_name, created.warnings) == ("Study Hall", "Study Hall", made.warnings)
    assert (summary["kind"], summary["format"], summary["restorable"], summary["retention"]) == (
        "manual",
        "configuration",
        True,
        "backup",
    )
    assert (summary["digest"], summary["members_count"], summary["made_by"]) == ("sha256:0", 3, made.made_by)
    assert archive.get_backup(created.backup_id).backup_data == made.backup_data
    assert (created.label, created.pruned, created.problems) == ("nightly", [], [])


def test_a_live_backup_too_big_for_an_item_goes_to_the_bucket_never_refused(clock) -> None:
    made = live(clock, 0, big=True)

    created = archive.store_live_backup(made, label=None)

    assert objects() == [f"backups/{GUILD}/{created.backup_id}.json.bz2"]
    assert archive.get_backup(created.backup_id).backup_data == made.backup_data
    assert created.stored_bytes == len(blobs.pack(blobs.json_bytes(made.backup_data)))


def test_manual_and_uploaded_share_the_guilds_retention_and_create_answers_what_it_pruned(clock) -> None:
    first = backup(clock, 0)
    second = archive.store_live_backup(live(clock, 1, big=True), label=None)  # kept in the bucket
    assert second.pruned == []

    third = archive.store_live_backup(live(clock, 2), label=None)
    clock.tick()  # ids sort by their millisecond
    fourth = archive.create_backup(GUILD, {"n": 4}, guild_name=None, label=None)

    assert third.pruned == [first]
    assert fourth.pruned == [second.backup_id]
    assert objects() == []  # the pruned backup's object left the bucket
    assert kept_ids() == [third.backup_id, fourth.backup_id]


def test_scheduled_backups_keep_their_own_count_apart_from_the_others(clock) -> None:
    manual = [backup(clock, n) for n in range(2)]
    scheduled = [archive.store_live_backup(live(clock, n), label=None, kind="scheduled", keep=3) for n in range(4)]

    assert [made.pruned for made in scheduled] == [[], [], [], [scheduled[0].backup_id]]
    assert kept_ids() == [*manual, *(made.backup_id for made in scheduled[1:])]
    assert {items()[(GUILD, f"BACKUP#{made.backup_id}")]["retention"] for made in scheduled[1:]} == {"scheduled"}
    assert [summary.kind for summary in archive.list_backups(GUILD)] == ["scheduled"] * 3 + ["uploaded"] * 2
    # A scheduled backup without its keep is kept as manual ones are (SVC_BACKUPS_PER_GUILD: 2 here), newest first
    unkept = archive.store_live_backup(live(clock, 9), label=None, kind="scheduled")
    assert unkept.pruned == [scheduled[2].backup_id, scheduled[1].backup_id]


def test_an_item_of_an_earlier_release_reads_as_an_upload_or_a_snapshot(clock) -> None:
    made, snap = backup(clock, 0), snapshot(clock, 0)
    table = boto3.resource("dynamodb").Table(TABLE)
    for backup_id in (made, snap):
        table.update_item(
            Key={"guild_id": GUILD, "sk": f"BACKUP#{backup_id}"},
            UpdateExpression="REMOVE kind, #f, restorable",
            ExpressionAttributeNames={"#f": "format"},
        )

    kinds = {summary.backup_id: (summary.kind, summary.format) for summary in archive.list_backups(GUILD)}

    assert kinds == {made: ("uploaded", None), snap: ("deployment", None)}


def test_delete_removes_one_backup_whole_and_keeps_a_deployments_snapshot(clock) -> None:
    kept, gone = backup(clock, 0), archive.store_live_backup(live(clock, 1, big=True), label=None).backup_id
    snap = snapshot(clock, 0)

    assert archive.delete_backup(gone, guild_id=GUILD) == gone

    assert kept_ids() == [kept, snap]
    assert (f"BACKUP_ID#{gone}", "LOCATOR") not in items()
    assert objects() == []
    with pytest.raises(BackupNotFound):
        archive.delete_backup(gone, guild_id=GUILD)
    with pytest.raises(BackupNotFound):
        archive.delete_backup(kept, guild_id=OTHER_GUILD)
    with pytest.raises(archive.SnapshotStillNeeded):
        archive.delete_backup(snap, guild_id=GUILD)
    assert kept_ids() == [kept, snap]


def test_a_list_reaches_every_retention_at_its_fullest(clock) -> None:
    # Every retention full: 20 snapshots, 50 scheduled (a schedule's largest keep), 2 manual (SVC_BACKUPS_PER_GUILD)
    snapshots = [snapshot(clock, n) for n in range(20)]
    scheduled = [archive.store_live_backup(live(clock, n), label=None, kind="scheduled", keep=50) for n in range(50)]
    made = [backup(clock, n) for n in range(2)]

    listed = [summary.backup_id for summary in archive.list_backups(GUILD)]

    assert listed == [*reversed(made), *reversed([s.backup_id for s in scheduled]), *reversed(snapshots)]
