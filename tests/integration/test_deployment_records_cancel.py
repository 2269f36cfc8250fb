"""The deployments table's side of a cancel, in moto: a cancelled deployment's record is never overwritten by its
worker, its writes stop, its step in flight is still journaled, and its guild's lock is freed or handed over."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from svcconf.settings import get_settings
from svcconf.store import write_intents
from svcconf.store.deployment_items import DeploymentRecord, Progress
from svcconf.store.deployment_records import AlreadyEnded, DeploymentCancelled, DeploymentRepository

GUILD = "1191000000000001006"


@pytest.fixture
def repository(aws) -> DeploymentRepository:
    return DeploymentRepository(get_settings().deployments_table)


def started(repository: DeploymentRepository, suffix: str = "01") -> DeploymentRecord:
    now = datetime.now(UTC)
    record = DeploymentRecord(
        deployment_id=f"dp_{int(now.timestamp() * 1000):012x}000000{suffix}",
        kind="deploy",
        user_id="web-user-1",
        chat_user_id="1191000000000000104",
        project_id="proj-1",
        project_name="Project",
        guild_id=GUILD,
        guild_name="Lab",
        status="queued",
        created_at=now,
        updated_at=now,
    )
    repository.start(record, lock_expiration=int(now.timestamp()) + 3600, now=int(now.timestamp()))
    return record


def stored(repository: DeploymentRepository, record: DeploymentRecord) -> DeploymentRecord:
    found = repository.get(record.user_id, record.project_id, record.deployment_id)
    assert found is not None
    return found


def test_a_deployment_is_found_by_its_id_alone_and_only_as_its_users(repository) -> None:
    record = started(repository)

    assert repository.find(record.deployment_id) == record
    assert repository.find(record.deployment_id, "web-user-1") == record
    assert repository.find(record.deployment_id, "someone-else") is None
    assert repository.find("dp_000000000000000000ff") is None


def test_a_queued_deployment_cancelled_frees_its_guild_and_its_worker_can_no_longer_start(repository) -> None:
    record = started(repository)
    now = datetime.now(UTC)

    was = repository.cancel(record, by="1191000000000000103", result="Cancelled.", now=now)

    assert was == "queued"
    assert repository.lock_holder(GUILD, int(now.timestamp())) is None
    with pytest.raises(DeploymentCancelled):
        repository.mark_running(record, steps=None, now=now)
    with pytest.raises(DeploymentCancelled):
        write_intents.record_intents(record, {"role:crew": 1})
    assert repository.finish(record, "succeeded", "Done.", None, now) is False
    after = stored(repository, record)
    assert (after.status, after.cancelled_by, after.result) == ("cancelled", "1191000000000000103", "Cancelled.")
    assert after.journal_intents == {}
    with pytest.raises(AlreadyEnded):
        repository.cancel(record, by="1191000000000000103", result="Again.", now=now)


def test_a_running_deployment_cancelled_journals_its_step_in_flight_and_hands_its_lock_over(repository) -> None:
    record = started(repository)
    now = datetime.now(UTC)
    repository.mark_running(record, steps=None, now=now)

    was = repository.cancel(record, by="1191000000000000103", result="Cancelled.", now=now)
    status = repository.record_progress(record, Progress(created={"role:crew": "42"}), now)
    repository.extend_lock(record, int(now.timestamp()) + 7200)

    assert (was, status) == ("running", "cancelled")
    assert stored(repository, record).journal_created == {"role:crew": "42"}
    holder = repository.lock_holder(GUILD, int(now.timestamp()))
    assert holder is not None
    assert holder.deployment_id == record.deployment_id
    # the worker could not extend it: it expires within the grace, and it is freed when the worker stops
    assert repository.lock_holder(GUILD, int(now.timestamp()) + 121) is None
    repository.settle_cancelled(record, "Cancelled. Created 1 role.", now)
    assert repository.lock_holder(GUILD, int(now.timestamp())) is None
    assert stored(repository, record).result == "Cancelled. Created 1 role."


def test_progress_of_a_deployment_not_cancelled_answers_running(repository) -> None:
    record = started(repository)
    now = datetime.now(UTC)
    repository.mark_running(record, steps=None, now=now)

    assert repository.record_progress(record, Progress(created={"role:a": "1"}), now) == "running"
    assert repository.finish(record, "succeeded", "Done.", None, now) is True
    assert stored(repository, record).status == "succeeded"


def test_the_writes_a_running_deployment_begins_are_on_its_lock_until_it_is_cancelled_or_ends(repository) -> None:
    record = started(repository)
    now = datetime.now(UTC)
    repository.mark_running(record, steps=None, now=now)
    repository.extend_lock(record, int(now.timestamp()) + 7200)

    write_intents.record_intents(record, {"role:crew": 1_795_000_000_000, "channel:deck": 1_795_000_000_100})
    write_intents.record_intents(record, {"role:crew": 1_795_000_000_200})  # the same object's next write

    assert write_intents.begun(record) == {"role:crew": 1_795_000_000_200, "channel:deck": 1_795_000_000_100}
    assert stored(repository, record).journal_intents == {}  # the deployment's item gets them with their outcome
    not_the_holder = record.model_copy(update={"deployment_id": record.deployment_id[:-2] + "02"})
    assert write_intents.begun(not_the_holder) == {}
    with pytest.raises(DeploymentCancelled):  # nor can it write on another deployment's lock
        write_intents.record_intents(not_the_holder, {"role:crew": 1})
    repository.cancel(record, by="1191000000000000103", result="Cancelled.", now=now)
    with pytest.raises(DeploymentCancelled):
        write_intents.record_intents(record, {"role:mate": 1_795_000_000_300})
    assert "role:mate" not in write_intents.begun(record)
    repository.settle_cancelled(record, "Cancelled.", now)
    assert write_intents.begun(record) == {}  # the lock is gone with them
