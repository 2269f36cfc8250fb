"""Codes, templates and backups across releases (docs/11-production.md, "Stored items across releases"): a code is
consumed, a template listed and a backup restored long after the release that stored it, and during a canary by
the release beside it. Each item carries the `schema_version` of the release that wrote it; this release reads an
item of the previous release (no version: written by hand here from that release's code, commit 5e63805) and one
of the next (a later version, with an attribute this release does not know).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from local.aws import ProvisionedResources
from svcconf.settings import get_settings
from svcconf.store import blobs
from svcconf.store.backups import SCHEMA_VERSION as BACKUPS_VERSION
from svcconf.store.backups import BackupRepository, BackupSummary
from svcconf.store.codes import SCHEMA_VERSION as CODES_VERSION
from svcconf.store.codes import CodeRecord, CodeRepository
from svcconf.store.templates import SCHEMA_VERSION as TEMPLATES_VERSION
from svcconf.store.templates import StoredTemplate, TemplateRepository
from tests.helpers.template_resources import template_resources

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
CONFIG = {"name": "Study Hall", "roles": [{"name": "Tutors"}], "categories": [], "channels": []}
GUILD = "1187392640113156136"


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProvisionedResources]:
    with template_resources(monkeypatch, "CodesTable", "TemplatesTable", "BackupsTable", "DocumentsBucket") as found:
        yield found


def _table(name: str) -> Any:
    return boto3.resource("dynamodb").Table(name)


# ---------------------------------------------------------------------------------------------------- codes


def _code_item(code: str, **more: Any) -> dict[str, Any]:
    """A code's item as the previous release wrote it (svcconf/store/codes.py at 5e63805), plus `more`."""
    return {
        "code": code,
        "project_id": "proj-1",
        "project_name": "Study Hall",
        "configuration": blobs.pack(blobs.json_bytes(CONFIG)),
        "created_at": NOW.isoformat(),
        "expires_at": (NOW + timedelta(hours=1)).isoformat(),
        "expiration": int((NOW + timedelta(hours=1)).timestamp()),
        **more,
    }


def test_a_code_is_stored_with_its_version_and_both_neighbours_items_are_consumed(tables) -> None:
    store = CodeRepository(get_settings().codes_table)
    # This release's item carries its version
    assert store.insert(
        CodeRecord(
            code="SVC-AAAA-AAAA",
            project_id="p",
            project_name="P",
            configuration=CONFIG,
            created_at=NOW,
            expires_at=NOW + timedelta(hours=1),
        )
    )
    assert _table(get_settings().codes_table).get_item(Key={"code": "SVC-AAAA-AAAA"})["Item"]["schema_version"] == 2
    assert CODES_VERSION == 2
    # The previous release's item (no version) and the next one's (a later version, an attribute unknown here)
    _table(get_settings().codes_table).put_item(Item=_code_item("SVC-PREV-0001"))
    _table(get_settings().codes_table).put_item(
        Item=_code_item("SVC-NEXT-0001", schema_version=3, issued_by_app="web-2")
    )
    for code in ("SVC-PREV-0001", "SVC-NEXT-0001"):
        consumed = store.consume(code, NOW)
        assert consumed is not None, code
        assert (consumed.project_name, consumed.configuration, consumed.consumed_at) == ("Study Hall", CONFIG, NOW)
    # Consuming updates the item in place: the next release's attribute and version stay as it wrote them
    kept = _table(get_settings().codes_table).get_item(Key={"code": "SVC-NEXT-0001"})["Item"]
    assert (kept["issued_by_app"], kept["schema_version"], kept["consumed_at"]) == ("web-2", 3, NOW.isoformat())


# ---------------------------------------------------------------------------------------------------- templates


def _template_item(template_id: str, **more: Any) -> dict[str, Any]:
    """A template's item as the previous release wrote it (svcconf/store/templates.py at 5e63805), plus `more`."""
    return {
        "pk": "LIBRARY",
        "sk": f"TEMPLATE#{template_id}",
        "id": template_id,
        "name": template_id.title(),
        "description": "A place to study together.",
        "tags": ["study"],
        "configuration": blobs.pack(blobs.json_bytes(CONFIG)),
        "source": "starter",
        "created_at": NOW.isoformat(),
        **more,
    }


def test_a_template_is_stored_with_its_version_and_both_neighbours_items_are_read(tables) -> None:
    store = TemplateRepository(get_settings().templates_table)
    mine = StoredTemplate(
        id="mine", name="Mine", description="d", tags=[], configuration=CONFIG, source="generated", created_at=NOW
    )
    assert store.add_starter(mine) is True
    table = _table(get_settings().templates_table)
    assert table.get_item(Key={"pk": "LIBRARY", "sk": "TEMPLATE#mine"})["Item"]["schema_version"] == TEMPLATES_VERSION
    table.put_item(Item=_template_item("previous"))
    # The next release's: a later version, a source this release does not know, an attribute it does not know
    table.put_item(Item=_template_item("next", schema_version=3, source="imported", language="de"))
    read = {template.id: template for template in store.templates()}
    assert sorted(read) == ["mine", "next", "previous"]
    assert (read["previous"].source, read["previous"].configuration) == ("starter", CONFIG)
    assert (read["next"].source, read["next"].name, read["next"].configuration) == ("imported", "Next", CONFIG)
    assert {summary["id"] for summary in store.summaries()} == {"mine", "next", "previous"}


# ---------------------------------------------------------------------------------------------------- backups


def _backup_items(backup_id: str, **more: Any) -> list[dict[str, Any]]:
    """A backup's summary, data and locator as the previous release wrote them (svcconf/store/backups.py at
    5e63805: no kind, format or version), `more` added to the summary."""
    data = blobs.pack(blobs.json_bytes(CONFIG))
    summary = {
        "guild_id": GUILD,
        "sk": f"BACKUP#{backup_id}",
        "backup_id": backup_id,
        "guild_name": "Study Hall",
        "channels_count": 0,
        "roles_count": 1,
        "created_at": NOW.isoformat(),
        "size_bytes": 60,
        "stored_bytes": len(data),
        "retention": "backup",
        **more,
    }
    return [
        summary,
        {"guild_id": GUILD, "sk": f"DATA#{backup_id}", "data": data},
        {"guild_id": f"BACKUP_ID#{backup_id}", "sk": "LOCATOR", "backup_guild_id": GUILD},
    ]


def test_a_backup_is_stored_with_its_version_and_both_neighbours_backups_are_read(tables) -> None:
    store = BackupRepository(get_settings().backups_table)
    data = blobs.pack(blobs.json_bytes(CONFIG))
    mine = BackupSummary(
        backup_id="bk_mine",
        guild_id=GUILD,
        channels_count=0,
        roles_count=1,
        created_at=NOW,
        size_bytes=60,
        stored_bytes=len(data),
        kind="manual",
    )
    store.insert(mine, data)
    table = _table(get_settings().backups_table)
    for sk in ("BACKUP#bk_mine", "DATA#bk_mine"):
        assert table.get_item(Key={"guild_id": GUILD, "sk": sk})["Item"]["schema_version"] == BACKUPS_VERSION, sk
    for item in [
        *_backup_items("bk_previous"),
        *_backup_items("bk_next", schema_version=3, kind="imported", made_with="xenon"),
    ]:
        table.put_item(Item=item)
    listed = {summary.backup_id: summary for summary in store.summaries(GUILD, 10)}
    assert sorted(listed) == ["bk_mine", "bk_next", "bk_previous"]
    assert listed["bk_previous"].kind == "uploaded"  # the previous release stored the bot's uploads only
    assert listed["bk_next"].kind == "imported"  # an open set: a later release's kind is shown as it is
    for backup_id in ("bk_previous", "bk_next"):
        found = store.get(GUILD, backup_id)
        assert found is not None, backup_id
        assert blobs.unpack(found[1]) == CONFIG
        assert store.guild_of(backup_id) == GUILD
