"""A backup the service makes from the live guild: the configuration as deployToChat `export` gives it (ids included,
null fields left out), as the bot sees the guild, plus its members' role assignments, its owner and administrators
(docs/03-api.md, manageBackup).

Read with the bot's calls: the guild with its roles, its channels, the bot's membership (as a deploy reads it),
then the member list page by page (1,000 a page: the fewest requests the platform allows). Without the privileged
member access (403 50001) the backup is made without `members` and its `warnings` say so. `made_by` is the chat
user the bot acts for only if that user holds MANAGE_GUILD there now.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from svcconf.backups.archive import LiveBackup
from svcconf.backups.reading import LINT_RULE_IDS
from svcconf.chat import MissingAccess, UnknownGuild, UnknownMember
from svcconf.config import ALL_PERMISSIONS, PERMISSION_BITS
from svcconf.config.answers import AnswerConfig
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deployments.requests import BotNotInGuild, install_url
from svcconf.errors import FieldError

if TYPE_CHECKING:
    from svcconf.chat import ChatClient

ADMINISTRATOR = 1 << PERMISSION_BITS["ADMINISTRATOR"]
MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]
_ANSWER_CONFIG: TypeAdapter[Any] = TypeAdapter(AnswerConfig)


def digest_of(backup_data: dict[str, Any]) -> str:
    """The content's digest: the same guild, ids and members included, gives the same digest."""
    canonical = json.dumps(backup_data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _permissions(live: LiveGuild, role_ids: list[str]) -> int:
    """A member's guild-level permissions: @everyone's and their roles' (every one with ADMINISTRATOR)."""
    value = int(live.everyone.permissions)
    held = set(role_ids)
    for role in live.roles:
        if role.id in held:
            value |= int(role.permissions)
    return ALL_PERMISSIONS if value & ADMINISTRATOR else value


def read_live_backup(
    client: ChatClient, guild_id: str, *, user_id: str | None = None, members: bool = True
) -> LiveBackup:
    """The guild as a backup. The bot not in it: `BotNotInGuild` (409 with the install link)."""
    try:
        live = read_live_guild(client, guild_id)
    except UnknownGuild as missing:
        raise BotNotInGuild(install_url=install_url(guild_id, None)) from missing
    exported = export_config(live, live.settings)
    data: dict[str, Any] = _ANSWER_CONFIG.dump_python(exported.config, mode="json")
    warnings = [
        FieldError(field=w.field, message=w.message, rule=w.rule)
        for w in exported.warnings
        if w.rule not in LINT_RULE_IDS
    ]
    kept_roles = {role["id"] for role in data.get("roles", []) if role.get("id")}
    member_roles: dict[str, list[str]] | None = None
    if members:
        try:
            member_roles = {}
            for member in client.list_members(guild_id):
                if member.user is not None:
                    member_roles[member.user.id] = member.roles
        except MissingAccess:
            member_roles = None
            message = (
                "made without members' roles: the bot lacks the platform's privileged member access (the GUILD_MEMBERS "
                "intent, 403 50001); switch it on for the bot to back them up"
            )
            warnings.append(FieldError(field="members", message=message, rule="members-not-read"))
    administrators: list[str] = []
    if member_roles is not None:
        data["members"] = [
            {"user_id": member_id, "roles": [role_id for role_id in roles if role_id in kept_roles]}
            for member_id, roles in sorted(member_roles.items(), key=lambda item: int(item[0]))
            if any(role_id in kept_roles for role_id in roles)
        ]
        administrators = [
            member_id
            for member_id, roles in sorted(member_roles.items(), key=lambda item: int(item[0]))
            if _permissions(live, roles) & ADMINISTRATOR
        ]
    if live.owner_id:
        data["owner_id"] = live.owner_id
    data["administrator_ids"] = administrators
    made_by = _maker(client, live, user_id, member_roles)
    return LiveBackup(
        guild_id=guild_id,
        guild_name=live.name,
        backup_data=data,
        warnings=warnings,
        members_count=len(data["members"]) if "members" in data else None,
        made_by=made_by,
        digest=digest_of(data),
    )


def _maker(
    client: ChatClient, live: LiveGuild, user_id: str | None, member_roles: dict[str, list[str]] | None
) -> str | None:
    """`user_id` when that user holds MANAGE_GUILD in the guild now (the owner does)."""
    if user_id is None or user_id == live.owner_id:
        return user_id
    if member_roles is not None:
        roles = member_roles.get(user_id)
    else:
        try:
            roles = client.get_guild_member(live.id, user_id).roles
        except UnknownMember:
            roles = None
    if roles is None:
        return None
    return user_id if _permissions(live, roles) & MANAGE_GUILD else None


__all__ = ["LiveBackup", "digest_of", "read_live_backup"]
