"""The deployment codes at their store (moto's table): consumed once and never twice, unusable once expired."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from local.aws import ProvisionedResources
from svcconf import codes
from svcconf.config import ServerConfig
from svcconf.errors import CodeBoundToAnotherUser, CodeNotFound, ServiceError
from svcconf.settings import get_settings
from svcconf.store.codes import CodeRecord, CodeRepository
from tests.helpers.template_resources import template_resources

CONFIG = {"name": "Study Hall", "roles": [{"name": "Tutors"}], "categories": [], "channels": []}
NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
CODE = "SVC-AB12-CD34"


def record(code: str = CODE, *, expires_at: datetime = NOW + timedelta(hours=1), user: str | None = None) -> CodeRecord:
    return CodeRecord(
        code=code,
        project_id="proj-1",
        project_name="Study Hall",
        configuration=CONFIG,
        chat_user_id=user,
        created_at=NOW - timedelta(hours=1),
        expires_at=expires_at,
    )


@pytest.fixture
def codes_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProvisionedResources]:
    """Only what codes and their store use: template.yaml's codes table and documents bucket (no key of the
    template's: the store encrypts nothing itself), about a third of the whole stack's time a test and a mutant."""
    with template_resources(monkeypatch, "CodesTable", "DocumentsBucket") as resources:
        yield resources


@pytest.fixture
def store(codes_aws: ProvisionedResources) -> CodeRepository:
    return CodeRepository(get_settings().codes_table)


def stored_item(code: str) -> dict | None:
    return boto3.resource("dynamodb").Table(get_settings().codes_table).get_item(Key={"code": code}).get("Item")


def test_a_code_is_consumed_once_and_a_second_consume_gets_nothing(store: CodeRepository):
    store.insert(record())

    first = store.consume(CODE, NOW)
    second = store.consume(CODE, NOW + timedelta(seconds=1))

    assert first is not None
    assert (first.code, first.configuration, first.consumed_at) == (CODE, CONFIG, NOW)
    assert second is None
    assert stored_item(CODE)["consumed_at"] == NOW.isoformat()  # the first consume's time, not overwritten


def test_an_unknown_code_is_not_consumed_and_no_item_is_written(store: CodeRepository):
    assert store.consume("SVC-NONE-NONE", NOW) is None
    assert stored_item("SVC-NONE-NONE") is None


def test_a_code_is_not_consumed_at_or_after_its_expiry(store: CodeRepository):
    store.insert(record(expires_at=NOW))

    assert store.consume(CODE, NOW) is None
    assert "consumed_at" not in stored_item(CODE)


def test_a_code_is_usable_until_the_instant_it_expires():
    assert record(expires_at=NOW + timedelta(seconds=1)).is_usable(NOW)
    assert not record(expires_at=NOW).is_usable(NOW)
    assert not record().model_copy(update={"consumed_at": NOW}).is_usable(NOW)


def test_an_existing_code_is_not_overwritten_by_an_insert(store: CodeRepository):
    assert store.insert(record(user="1191000000000000101")) is True
    assert store.insert(record().model_copy(update={"project_id": "proj-2"})) is False

    stored = store.get(CODE)
    assert stored is not None
    assert (stored.project_id, stored.chat_user_id, stored.configuration) == ("proj-1", "1191000000000000101", CONFIG)
    assert stored_item(CODE)["expiration"] == int((NOW + timedelta(hours=1)).timestamp())


def test_a_configuration_too_big_for_its_item_is_kept_in_the_bucket_and_a_colliding_insert_leaves_it_whole(
    store: CodeRepository,
):
    # Random text: compression cannot bring it under the item's share, so it goes to the documents bucket
    big = {**CONFIG, "description": secrets.token_urlsafe(150_000)}
    other = {**CONFIG, "description": secrets.token_urlsafe(150_000)}

    assert store.insert(record().model_copy(update={"configuration": big})) is True
    assert store.insert(record().model_copy(update={"configuration": other})) is False

    reference = stored_item(CODE)["configuration"]
    assert reference["s3_key"].startswith(f"codes/{CODE}/")
    stored = store.get(CODE)
    assert stored is not None
    assert stored.configuration == big


def test_resolving_with_consume_gives_the_configuration_once_then_not_found(codes_aws):
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)

    resolved = codes.resolve_code(minted.code, consume=True)

    assert (resolved.configuration, resolved.project_name, resolved.project_id) == (CONFIG, "Study Hall", "proj-1")
    assert resolved.expires_at == minted.expires_at
    with pytest.raises(CodeNotFound):
        codes.resolve_code(minted.code, consume=True)


def test_resolving_without_consume_leaves_the_code_usable(codes_aws):
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG)

    codes.resolve_code(minted.code)

    assert "consumed_at" not in stored_item(minted.code)
    assert codes.resolve_code(minted.code, consume=True).configuration == CONFIG


def test_a_code_bound_to_a_user_resolves_for_that_user_only(codes_aws):
    minted = codes.mint_code("proj-1", "Study Hall", CONFIG, chat_user_id="1191000000000000101")

    with pytest.raises(CodeBoundToAnotherUser):
        codes.resolve_code(minted.code, user_id="1191000000000000202", consume=True)
    assert "consumed_at" not in stored_item(minted.code)  # a refused caller consumes nothing
    assert codes.resolve_code(minted.code, consume=True).project_id == "proj-1"  # no user named: not checked


def test_a_code_minted_from_a_configuration_model_stores_its_json_document(codes_aws):
    config = ServerConfig.model_validate({"name": "Study Hall", "roles": [{"name": "Tutors", "color": "#3498DB"}]})

    minted = codes.mint_code("proj-1", "Study Hall", config)

    stored = codes.resolve_code(minted.code).configuration
    assert stored == config.model_dump(mode="json")
    assert stored["roles"][0]["color"] == 0x3498DB


def test_a_code_that_collides_five_times_in_a_row_is_a_service_error_and_nothing_is_overwritten(codes_aws, monkeypatch):
    taken = codes.mint_code("proj-1", "Study Hall", CONFIG)
    monkeypatch.setattr(codes, "new_code_text", lambda: taken.code)  # every new code is the one already stored

    with pytest.raises(ServiceError) as raised:
        codes.mint_code("proj-2", "Other", CONFIG)

    assert (raised.value.status, str(raised.value)) == (500, "Could not mint a unique deployment code.")
    assert stored_item(taken.code)["project_id"] == "proj-1"


def test_an_unknown_code_and_a_used_one_are_not_found_even_without_consuming(codes_aws):
    used = codes.mint_code("proj-1", "Study Hall", CONFIG)
    codes.resolve_code(used.code, consume=True)

    with pytest.raises(CodeNotFound):
        codes.resolve_code("SVC-NONE-NONE")
    with pytest.raises(CodeNotFound):
        codes.resolve_code(used.code)
