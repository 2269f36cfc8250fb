"""What reading a backup answers, and what the formats' readers share (`svcconf.backups.formats` and
`discord_backup`): the reading's model, the problems and losses each names by field, the keys a configuration
cannot hold.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from svcconf.config import LINT_RULES, ServerConfig
from svcconf.deploy_engine.export import Exported
from svcconf.errors import FieldError, field_path

Format = Literal["configuration", "discord-backup", "template", "platform", "unknown"]
SNOWFLAKE = re.compile(r"^[0-9]{17,20}$")
LINT_RULE_IDS = frozenset(rule.id for rule in LINT_RULES)
FAKE_GUILD_ID = "0"  # @everyone's id in a guild read from a format that carries no ids
UNRESTORABLE_KEYS = {  # what discord-backup keeps that a configuration cannot hold
    "bans": "bans are not part of a server's configuration: they are not restored",
    "emojis": "custom emoji are not part of a server's configuration: they are not restored",
    "iconURL": "the server's icon is not restored",
    "iconBase64": "the server's icon is not restored",
    "splashURL": "the server's splash image is not restored",
    "bannerURL": "the server's banner is not restored",
    "widget": "the widget settings are not restored",
}


class MemberRoles(BaseModel):
    user_id: str
    roles: list[str] = Field(description="Role ids as the backup's configuration holds them.")


class BackupReading(BaseModel):
    format: Format
    restorable: bool
    problems: list[FieldError] = Field(description="Why it cannot be restored: field paths into backup_data.")
    warnings: list[FieldError] = Field(description="What the format holds that a configuration cannot.")
    config: ServerConfig | None = Field(None, description="The configuration once converted (None: not restorable).")
    members: list[MemberRoles] = Field(default_factory=list)
    owner_id: str | None = None
    administrator_ids: list[str] = Field(default_factory=list)


class Unreadable(Exception):
    """A recognised format whose content cannot be read: `problems` say where."""

    def __init__(self, problems: list[FieldError]):
        super().__init__(problems[0].message if problems else "unreadable")
        self.problems = problems


def list_of_objects(value: Any) -> list[dict[str, Any]] | None:
    """The list's items when it is a list of objects, else None."""
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return value
    return None


def problems_of(invalid: ValidationError, prefix: str = "") -> list[FieldError]:
    found = []
    for error in invalid.errors():
        path = field_path(error["loc"])
        if prefix:
            path = f"{prefix}.{path}" if path != "body" else prefix
        found.append(FieldError(field=path, message=error["msg"]))
    return found


def losses_of(exported: Exported) -> list[FieldError]:
    """What the export left out (the permission-safety lint's advice is not the format's loss: left out)."""
    return [
        FieldError(field=w.field, message=w.message, rule=w.rule)
        for w in exported.warnings
        if w.rule not in LINT_RULE_IDS
    ]
