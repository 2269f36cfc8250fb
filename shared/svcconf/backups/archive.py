"""Backups of a server's configuration, made and read by the bot: stored compressed, pruned per guild.

Deployments store their snapshots here too (`create_deployment_snapshot`): the same form, read by the same `get`,
but pruned on their own count (a rollback needs its snapshot whatever the bot backs up) and, when too big for an
item, kept in the documents bucket rather than refused.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from svcconf.clock import utc_now
from svcconf.errors import BackupNotFound, BackupTooLarge, BadRequest
from svcconf.observability import logger
from svcconf.settings import get_settings
from svcconf.store import blobs, documents
from svcconf.store.backups import MAX_ITEM_BYTES, BackupRepository, BackupSummary, ItemTooLarge, Retention

# Room for the data item's keys and attribute names next to the compressed blob.
ITEM_OVERHEAD_BYTES = 1024
DEPLOYMENT_SNAPSHOTS_PER_GUILD = 20  # the newest deployments of a guild that can still be rolled back
DEPLOYMENT_SNAPSHOT = "deployment-snapshot"  # the `kind` of a deployment's snapshot (deploy_engine/rollback.py)


class Backup(BackupSummary):
    backup_data: dict[str, Any]


# manageBackup's answers, one per action; `action` repeats the request's, so a client can tell them apart.
class BackupCreated(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["create"] = "create"
    data: BackupSummary = Field(description="The new backup, without backup_data.")


class BackupList(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    action: Literal["list"] = "list"
    backups: list[BackupSummary] = Field(description="The guild's backups, newest first, without backup_data.")


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


def _summary(guild_id: str, backup_data: dict[str, Any], guild_name: str | None, label: str | None) -> BackupSummary:
    channels, roles = count_objects(backup_data)
    return BackupSummary(
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
) -> BackupSummary:
    summary = _summary(guild_id, backup_data, guild_name, label)
    blob = blobs.pack(blobs.json_bytes(backup_data))
    if len(blob) + ITEM_OVERHEAD_BYTES > MAX_ITEM_BYTES:
        raise BackupTooLarge(
            f"The backup compresses to {len(blob)} bytes; at most {MAX_ITEM_BYTES - ITEM_OVERHEAD_BYTES} can be stored."
        )
    summary.stored_bytes = len(blob)
    try:
        _repository().insert(summary, blob)
    except ItemTooLarge as error:
        raise BackupTooLarge() from error
    _prune(guild_id, "backup", get_settings().backups_per_guild)
    return summary


def create_deployment_snapshot(
    guild_id: str, backup_data: dict[str, Any], *, guild_name: str, label: str
) -> BackupSummary:
    """A deployment's snapshot of the guild: never refused for its size, pruned with the guild's other snapshots."""
    summary = _summary(guild_id, backup_data, guild_name, label)
    data = documents.stored(backup_data, f"snapshots/{guild_id}/{summary.backup_id}.json.bz2")
    summary.stored_bytes = documents.stored_bytes(data)
    _repository().insert(summary, data, retention="deployment")
    _prune(guild_id, "deployment", DEPLOYMENT_SNAPSHOTS_PER_GUILD)
    return summary


def _prune(guild_id: str, retention: Retention, keep: int) -> None:
    repository = _repository()
    pruned = repository.backup_ids_beyond(guild_id, keep, retention)
    if not pruned:
        return
    stored = repository.data_of(guild_id, pruned) if retention == "deployment" else []
    repository.delete(guild_id, pruned)
    documents.forget(stored)
    logger.info("pruned old backups", extra={"guild_id": guild_id, "pruned": len(pruned), "retention": retention})


def backup_exists(backup_id: str) -> bool:
    repository = _repository()
    guild_id = repository.guild_of(backup_id)
    return guild_id is not None and repository.exists(guild_id, backup_id)


def list_backups(guild_id: str) -> list[BackupSummary]:
    kept = get_settings().backups_per_guild + DEPLOYMENT_SNAPSHOTS_PER_GUILD  # the bot's, and deployments'
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
