"""What a backup holds, read into a configuration the deploy engine can restore.

Minimal reader (the restore's side of the backups engineers' shared interface): it reads this service's own
`configuration` format only (a configuration with ids, as export answers it, plus `members`, `owner_id` and
`administrator_ids`); every other shape is `unknown` and not restorable. The backups-read branch owns this module
and reads every format behind the same interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from svcconf.config import ServerConfig
from svcconf.errors import FieldError

BACKUP_EXTRAS = ("members", "owner_id", "administrator_ids")


class MemberRoles(BaseModel):
    user_id: str
    roles: list[str]  # role ids as the backup's configuration holds them


class BackupReading(BaseModel):
    format: Literal["configuration", "discord-backup", "template", "platform", "unknown"]
    restorable: bool
    problems: list[FieldError] = Field(default_factory=list)  # why it cannot be restored, paths into backup_data
    warnings: list[FieldError] = Field(default_factory=list)  # what the format holds that a configuration cannot
    config: ServerConfig | None = None  # the configuration once converted (None when not restorable)
    members: list[MemberRoles] = Field(default_factory=list)
    owner_id: str | None = None
    administrator_ids: list[str] = Field(default_factory=list)


def read_backup(data: Mapping[str, Any]) -> BackupReading:
    """The backup read as a configuration, or why it cannot be."""
    if not isinstance(data.get("name"), str) or not any(isinstance(data.get(k), list) for k in ("roles", "channels")):
        problem = FieldError(
            field="backup_data", message="not a configuration: it needs `name`, and `roles` or `channels`"
        )
        return BackupReading(format="unknown", restorable=False, problems=[problem])
    body = {key: value for key, value in data.items() if key not in BACKUP_EXTRAS}
    try:
        config = ServerConfig.model_validate(body)
    except ValidationError as invalid:
        problems = [
            FieldError(field=".".join(str(part) for part in error["loc"]) or "backup_data", message=error["msg"])
            for error in invalid.errors()
        ]
        return BackupReading(format="configuration", restorable=False, problems=problems)
    try:
        members = [MemberRoles.model_validate(member) for member in data.get("members") or []]
    except ValidationError:
        problem = FieldError(field="members", message="each member needs `user_id` and `roles` (role ids)")
        return BackupReading(format="configuration", restorable=False, problems=[problem])
    owner = data.get("owner_id")
    administrators = data.get("administrator_ids")
    return BackupReading(
        format="configuration",
        restorable=True,
        config=config,
        members=members,
        owner_id=owner if isinstance(owner, str) else None,
        administrator_ids=[a for a in administrators if isinstance(a, str)] if isinstance(administrators, list) else [],
    )
