"""The seam between schedules and the backup made from the live guild: one function, `make_scheduled_backup`.

It reads the guild as manageBackup `create` does (`live.read_live_backup`: the configuration with ids, members'
roles when the schedule asks, owner, administrators, `made_by`), and stores it as a backup of kind "scheduled"
(`archive.store_live_backup`, pruned to the schedule's `keep`) only when its digest differs from `unless_digest`
(the newest scheduled backup's).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from svcconf.backups.archive import store_live_backup
from svcconf.backups.live import read_live_backup
from svcconf.chat import ChatError, get_chat_client
from svcconf.deployments.requests import BotNotInGuild


class MadeBackup(BaseModel):
    digest: str = Field(description="Of the content, ids (and members, when read) included.")
    stored: bool = Field(description="False when the digest equals `unless_digest`: nothing was written.")
    backup_id: str | None = Field(None, description="The new backup when stored.")
    pruned: list[str] = Field(default_factory=list, description="Scheduled backups removed to keep `keep`.")


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
    try:
        made = read_live_backup(get_chat_client(), guild_id, user_id=user_id, members=members)
    except BotNotInGuild as refusal:
        if isinstance(refusal.__cause__, ChatError):  # the schedule records the platform's own answer
            raise refusal.__cause__ from None
        raise
    if made.digest == unless_digest:
        return MadeBackup(digest=made.digest, stored=False)
    created = store_live_backup(made, label=label, kind="scheduled", keep=keep)
    return MadeBackup(digest=made.digest, stored=True, backup_id=created.backup_id, pruned=created.pruned)
