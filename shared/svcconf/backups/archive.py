"""Backups of a server's configuration, made and read by the bot: stored compressed, pruned per guild.

Three kinds come from manageBackup: `uploaded` (the bot's own `backup_data`, stored exactly as sent, its format read
by `formats.py`), `manual` (made by the service from the live guild, `live.py`) and `scheduled` (the same, made by a
schedule, which passes its own `keep`). Manual and uploaded backups keep the guild's newest `SVC_BACKUPS_PER_GUILD`
together; scheduled ones their schedule's `keep`; deployments' snapshots their own 20. A create answers what
retention removed (`pruned`). A backup the service made is never refused for its size: too big for an item, it
goes to the documents bucket.

Deployments store their snapshots here too (`create_deployment_snapshot`): the same form, read by the same `get`,
but pruned on their own count (a rollback needs its snapshot whatever the bot backs up) and, when too big for an
item, kept in the documents bucket rather than refused.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf.backups.formats import read_backup
from svcconf.clock import utc_now
from svcconf.errors import BackupNotFound, BackupTooLarge, BadRequest, Conflict, FieldError
from svcconf.observability import logger
from svcconf.settings import get_settings
from svcconf.store import blobs, documents
from svcconf.store.backups import MAX_ITEM_BYTES, BackupRepository, BackupSummary, ItemTooLarge, Retention

# Room for the data item's keys and attribute names next to the compressed blob.
ITEM_OVERHEAD_BYTES = 1024
DEPLOYMENT_SNAPSHOTS_PER_GUILD = 20  # the newest deployments of a guild that can still be rolled back
DEPLOYMENT_SNAPSHOT = "deployment-snapshot"
MAX_SCHEDULED_KEEP = (
    50  # a schedule's `keep` is 1-50  # the `kind` of a deployment's snapshot (deploy_engine/rollback.py)
)


class LiveBackup(BaseModel):
    """A backup the service read from the live guild (`live.read_live_backup`), ready to store."""

    guild_id: str
    guild_name: str
    backup_data: dict[str, Any]
    warnings: list[FieldError] = Field(default_factory=list)
    members_count: int | None = Field(None, description="Members whose roles the backup holds; None: not read.")
    made_by: str | None = None
    digest: str


class Backup(BackupSummary):
    backup_data: dict[str, Any]


class CreatedBackup(BackupSummary):
    """The new backup, with what its creation found: the format's problems and losses, and what retention pruned."""

    problems: list[FieldError] = Field(
        default_factory=list, description="Why it cannot be restored (field paths into backup_data); [] if it can."
    )
    warnings: list[FieldError] = Field(
        default_factory=list, description="What the backup could not hold (messages, bans, members not read, ...)."
    )
    pruned: list[str] = Field(default_factory=list, description="The backups retention removed to make room.")


# manageBackup's answers, one per action; `action` repeats the request's, so a client can tell them apart.
class BackupCreated(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["create"] = "create"
    data: CreatedBackup = Field(description="The new backup, without backup_data.")


class BackupList(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["list"] = "list"
    backups: list[BackupSummary] = Field(description="The guild's backups, newest first, without backup_data.")


class BackupDeleted(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    class Deleted(BaseModel):
        backup_id: str

    action: Literal["delete"] = "delete"
    data: Deleted


class SnapshotStillNeeded(Conflict):
    default_message = "This backup is a deployment's snapshot: its rollback needs it, and retention removes it."


class BackupFetched(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["get"] = "get"
    data: Backup = Field(description="The backup with its data, exactly as it was stored.")


def _repository() -> BackupRepository:
    return BackupRepository(get_settings().backups_table)


def new_backup_id() -> str:
    # Millisecond time first, in fixed-width hex, so ids sort by creation time; then randomness.
    return f"bk_{int(utc_now().timestamp() * 1000):012x}{secrets.token_hex(5)}"


def _length(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def count_objects(backup_data: dict[str, Any]) -> tuple[int, int]:
    """(channels, roles) in the backup; categories count as channels, as they do on the platform."""
    categories = backup_data.get("categories")
    nested = (
        sum(_length(c.get("channels")) for c in categories if isinstance(c, dict))
        if isinstance(categories, list)
        else 0
    )
    channels = _length(backup_data.get("channels")) + _length(categories) + nested
    return channels, _length(backup_data.get("roles"))


def _summary(guild_id: str, backup_data: dict[str, Any], guild_name: str | None, label: str | None) -> CreatedBackup:
    channels, roles = count_objects(backup_data)
    return CreatedBackup(
        backup_id=new_backup_id(),
        guild_id=guild_id,
        guild_name=guild_name,
        label=label,
        channels_count=channels,
        roles_count=roles,
        created_at=utc_now(),
        size_bytes=len(blobs.json_bytes(backup_data)),
        stored_bytes=0,
    )


def create_backup(
    guild_id: str, backup_data: dict[str, Any], *, guild_name: str | None, label: str | None
) -> CreatedBackup:
    """An uploaded backup: stored exactly as sent, whatever its shape; its format read, and whether it restores."""
    summary = _summary(guild_id, backup_data, guild_name, label)
    reading = read_backup(backup_data)
    summary.kind, summary.format, summary.restorable = "uploaded", reading.format, reading.restorable
    summary.problems, summary.warnings = reading.problems, reading.warnings
    blob = blobs.pack(blobs.json_bytes(backup_data))
    if len(blob) + ITEM_OVERHEAD_BYTES > MAX_ITEM_BYTES:
        raise BackupTooLarge(
            f"The backup compresses to {len(blob)} bytes; at most {MAX_ITEM_BYTES - ITEM_OVERHEAD_BYTES} can be stored."
        )
    summary.stored_bytes = len(blob)
    try:
        _repository().insert(_stored_summary(summary), blob)
    except ItemTooLarge as error:
        raise BackupTooLarge() from error
    summary.pruned = _prune(guild_id, "backup", get_settings().backups_per_guild)
    return summary


def _stored_summary(created: CreatedBackup) -> BackupSummary:
    return BackupSummary.model_validate(created.model_dump(include=set(BackupSummary.model_fields)))


def store_live_backup(
    made: LiveBackup, *, label: str | None, kind: Literal["manual", "scheduled"] = "manual", keep: int | None = None
) -> CreatedBackup:
    """A backup the service made from the live guild (`live.read_live_backup`), stored whatever its size (inline
    when it fits an item, else in the documents bucket), then pruned: manual ones with the uploads
    (`SVC_BACKUPS_PER_GUILD`), scheduled ones on their schedule's `keep` (the schedule passes it)."""
    summary = _summary(made.guild_id, made.backup_data, made.guild_name, label)
    summary.kind, summary.format, summary.restorable = kind, "configuration", True
    summary.made_by, summary.digest, summary.members_count = made.made_by, made.digest, made.members_count
    summary.warnings = made.warnings
    data = documents.stored(made.backup_data, f"backups/{made.guild_id}/{summary.backup_id}.json.bz2")
    summary.stored_bytes = documents.stored_bytes(data)
    retention: Retention = "scheduled" if kind == "scheduled" else "backup"
    _repository().insert(_stored_summary(summary), data, retention=retention)
    limit = keep if kind == "scheduled" and keep is not None else get_settings().backups_per_guild
    summary.pruned = _prune(made.guild_id, retention, limit)
    return summary


def create_deployment_snapshot(
    guild_id: str, backup_data: dict[str, Any], *, guild_name: str, label: str
) -> BackupSummary:
    """A deployment's snapshot of the guild: never refused for its size, pruned with the guild's other snapshots."""
    summary = _summary(guild_id, backup_data, guild_name, label)
    summary.kind = "deployment"
    data = documents.stored(backup_data, f"snapshots/{guild_id}/{summary.backup_id}.json.bz2")
    summary.stored_bytes = documents.stored_bytes(data)
    _repository().insert(_stored_summary(summary), data, retention="deployment")
    _prune(guild_id, "deployment", DEPLOYMENT_SNAPSHOTS_PER_GUILD)
    return _stored_summary(summary)


def _prune(guild_id: str, retention: Retention, keep: int) -> list[str]:
    """Removes the guild's backups of one retention beyond its `keep` newest; their ids."""
    repository = _repository()
    pruned = repository.backup_ids_beyond(guild_id, keep, retention)
    if not pruned:
        return []
    stored = repository.data_of(guild_id, pruned)  # what they keep in the documents bucket goes too
    repository.delete(guild_id, pruned)
    documents.forget(stored)
    logger.info("pruned old backups", extra={"guild_id": guild_id, "pruned": len(pruned), "retention": retention})
    return pruned


def delete_backup(backup_id: str, *, guild_id: str) -> str:
    """manageBackup's `delete`: one backup of the guild (404 if the guild has none of that id); a deployment's
    snapshot is kept for the deployment's rollback (409) and leaves with its retention."""
    repository = _repository()
    found = repository.get(guild_id, backup_id)
    if found is None:
        raise BackupNotFound()
    summary, data = found
    if summary.kind == "deployment":
        raise SnapshotStillNeeded()
    repository.delete(guild_id, [backup_id])
    documents.forget([data])
    return backup_id


def backup_exists(backup_id: str) -> bool:
    repository = _repository()
    guild_id = repository.guild_of(backup_id)
    return guild_id is not None and repository.exists(guild_id, backup_id)


def list_backups(guild_id: str) -> list[BackupSummary]:
    kept = get_settings().backups_per_guild + DEPLOYMENT_SNAPSHOTS_PER_GUILD + MAX_SCHEDULED_KEEP  # every retention
    return _repository().summaries(guild_id, limit=kept)


def get_backup(backup_id: str, *, guild_id: str | None = None) -> Backup:
    repository = _repository()
    guild_id = guild_id or repository.guild_of(backup_id)
    found = repository.get(guild_id, backup_id) if guild_id else None
    if found is None:
        raise BackupNotFound()
    summary, data = found
    return Backup(**summary.model_dump(), backup_data=documents.loaded(data))


def fetch_backup(backup_id: str, *, guild_id: str | None) -> Backup:
    """manageBackup's `get`: a deployment's snapshot (the guild as it stood before a deploy) only with its
    `guild_id`, so an id alone, from a log or a record, does not fetch another server's structure."""
    backup = get_backup(backup_id, guild_id=guild_id)
    if guild_id is None and backup.backup_data.get("kind") == DEPLOYMENT_SNAPSHOT:
        raise BadRequest.for_field("guild_id", "is required to fetch a deployment's snapshot")
    return backup
