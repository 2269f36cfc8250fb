"""The seam between schedules and the backup made from the live guild: one function, `make_scheduled_backup`.

It reads the guild, takes the content's digest, and stores a backup of kind "scheduled" only when that digest
differs from `unless_digest` (the newest scheduled backup's), then prunes the guild's scheduled backups to `keep`.

Until `backups/live.py` (the live backup of manageBackup `create`, with members' roles and the per-kind
retention of archive.py) is on main, this reads the guild as deployToChat `export` does (the configuration with
ids, null fields left out, plus `owner_id`; `members` and `administrator_ids` need the member list, which that
module brings) and stores it in the backups table under its own retention. At that merge its body becomes a call
into live.py; its signature and answer stay, so schedules.py does not change.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

from svcconf.backups.archive import count_objects, new_backup_id
from svcconf.chat import get_chat_client
from svcconf.clock import utc_now
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import read_live_guild
from svcconf.observability import logger
from svcconf.settings import get_settings
from svcconf.store import blobs, documents
from svcconf.store.backups import BackupRepository, BackupSummary, Retention

SCHEDULED: Retention = "scheduled"  # the retention (and the contract's `kind`) of a backup made by a schedule


class MadeBackup(BaseModel):
    digest: str = Field(description="Of the content, ids (and members, when read) included.")
    stored: bool = Field(description="False when the digest equals `unless_digest`: nothing was written.")
    backup_id: str | None = Field(None, description="The new backup when stored.")
    pruned: list[str] = Field(default_factory=list, description="Scheduled backups removed to keep `keep`.")


def content_digest(backup_data: dict[str, Any]) -> str:
    """sha256 of the content in a canonical form (keys sorted, no spaces): equal content, equal digest."""
    canonical = json.dumps(backup_data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def make_scheduled_backup(
    guild_id: str,
    *,
    members: bool,
    user_id: str | None,
    label: str | None,
    keep: int,
    unless_digest: str | None,
) -> MadeBackup:
    """A backup of the live guild, stored unless its digest is `unless_digest`; the guild's scheduled backups
    pruned to their newest `keep`. The platform's errors (the bot not in the guild, no access) propagate."""
    del members, user_id  # the member list and `made_by` arrive with backups/live.py (see the docstring)
    live = read_live_guild(get_chat_client(), guild_id)
    backup_data = {
        **export_config(live, live.settings).config.model_dump(mode="json", exclude_none=True),
        "owner_id": live.owner_id,
        "administrator_ids": [],
    }
    digest = content_digest(backup_data)
    if digest == unless_digest:
        return MadeBackup(digest=digest, stored=False)
    channels, roles = count_objects(backup_data)
    summary = BackupSummary(
        backup_id=new_backup_id(),
        guild_id=guild_id,
        guild_name=live.name,
        label=label,
        channels_count=channels,
        roles_count=roles,
        created_at=utc_now(),
        size_bytes=len(blobs.json_bytes(backup_data)),
        stored_bytes=0,
    )
    data = documents.stored(backup_data, f"backups/{guild_id}/{summary.backup_id}.json.bz2")
    summary.stored_bytes = documents.stored_bytes(data)
    repository = BackupRepository(get_settings().backups_table)
    repository.insert(summary, data, retention=SCHEDULED)
    pruned = repository.backup_ids_beyond(guild_id, keep, SCHEDULED)
    if pruned:
        stored = repository.data_of(guild_id, pruned)
        repository.delete(guild_id, pruned)
        documents.forget(stored)
        logger.info("pruned scheduled backups", extra={"guild_id": guild_id, "pruned": len(pruned), "keep": keep})
    return MadeBackup(digest=digest, stored=True, backup_id=summary.backup_id, pruned=pruned)
