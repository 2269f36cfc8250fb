"""Starting from what exists: a live guild, a native server template or another tool's backup read as a configuration
(deployToChat `export` and `import`); the live guild as svcAiChat with `guild_id` reads it
(svcconf.conversation.live_guild).

Reading a guild takes what a deploy takes: the caller manages it (403) and the bot is in it (409 with the
install link). The conversions themselves are pure (`deploy/export.py`, `deploy/native_template.py`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from svcconf import caller_rights
from svcconf.accounts.chat_account import managed_guild
from svcconf.api.auth import BearerUser
from svcconf.api.pasted_links import link_parts
from svcconf.backups.formats import read_backup
from svcconf.caller_rights import CallerStanding, CallerView
from svcconf.chat import UnknownGuild, get_chat_client
from svcconf.config import LintWarning
from svcconf.config.answers import AnswerConfig
from svcconf.config.lint import lint_config
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import read_live_guild
from svcconf.deploy_engine.native_template import template_config
from svcconf.deployments.requests import BotNotInGuild, install_url
from svcconf.errors import BadRequest, FieldError
from svcconf.settings import get_settings

# Codes are case-sensitive: passed on exactly as written.
TEMPLATE_CODE = re.compile(r"[A-Za-z0-9_-]{2,64}")


class ExportAnswer(BaseModel):
    status: Literal["exported"] = Field(description="Tells this answer apart from the others of 200.")
    config: AnswerConfig
    warnings: list[LintWarning]


class TemplateSource(BaseModel):
    code: str
    name: str
    description: str | None
    usage_count: int


class DataSource(BaseModel):
    format: str = Field(
        description="The backup format `data` was read as: configuration, discord-backup, template or platform (an "
        "open set: values may be added)."
    )


class ImportAnswer(BaseModel):
    status: Literal["imported"] = Field(description="Tells this answer apart from the others of 200.")
    config: AnswerConfig
    warnings: list[LintWarning]
    source: TemplateSource | DataSource = Field(
        description="The native template the configuration was read from, or the format of the `data` sent."
    )


def managed_live_guild(user: BearerUser, guild_id: str) -> tuple[CallerStanding, CallerView]:
    """The caller's standing and the guild as they see it (the channels they cannot view left out), read only when
    they manage it (403) with the bot in it (409 with the link)."""
    chat_user_id, _ = managed_guild(user, guild_id)
    client = get_chat_client()
    try:
        live = read_live_guild(client, guild_id)
    except UnknownGuild as missing:
        raise BotNotInGuild(install_url=install_url(guild_id, None)) from missing
    return caller_rights.as_caller(client, live, chat_user_id)


def export_guild(user: BearerUser, guild_id: str) -> ExportAnswer:
    """The live guild, as the caller sees it, as a configuration that deploys back to it with no write."""
    _, view = managed_live_guild(user, guild_id)
    exported = export_config(view.live, view.live.settings)
    warnings = [*exported.warnings, *view.hidden_warnings()]
    return ExportAnswer(status="exported", config=exported.config, warnings=warnings)


def template_code(text: str) -> str:
    """The code in a bare template code or a template link (CHAT_TEMPLATE_LINKS), with or without scheme."""
    text = text.strip()
    if TEMPLATE_CODE.fullmatch(text):
        return text
    links = get_settings().chat_template_links
    not_a_template = BadRequest.for_field("template", f"must be a server-template code or a link on {', '.join(links)}")
    host, segments = link_parts(text, not_a_template)
    if segments:
        for link in links:
            link_host, *prefix = link.split("/")
            on_host = host in (link_host, f"www.{link_host}")
            if on_host and segments[:-1] == prefix and TEMPLATE_CODE.fullmatch(segments[-1]):
                return segments[-1]
    raise not_a_template


def import_template(text: str) -> ImportAnswer:
    """A native server template as a configuration; an unknown code is the platform's 404."""
    template = get_chat_client().get_template(template_code(text))
    exported = template_config(template.serialized_source_guild)
    source = TemplateSource(
        code=template.code, name=template.name, description=template.description, usage_count=template.usage_count
    )
    return ImportAnswer(status="imported", config=exported.config, warnings=exported.warnings, source=source)


def import_data(data: dict[str, object]) -> ImportAnswer:
    """Another tool's backup (any format `backups/formats.py` reads) as a configuration, with what it could not carry
    in `warnings`. An unknown shape, or one that is not a valid configuration once converted: 400 naming, under
    `data`, what is missing or wrong."""
    reading = read_backup(data)
    if reading.config is None:
        details = [FieldError(field=_under_data(p.field), message=p.message) for p in reading.problems]
        what = (
            "is in no backup format the service reads"
            if reading.format == "unknown"
            else f"is a {reading.format} backup that cannot be imported"
        )
        first = details[0] if details else FieldError(field="data", message="cannot be read")
        raise BadRequest(f"data {what}: {first.field}: {first.message}", details=details)
    losses = [LintWarning(field=w.field, rule=w.rule or "unrestorable", message=w.message) for w in reading.warnings]
    return ImportAnswer(
        status="imported",
        config=reading.config,
        warnings=[*losses, *lint_config(reading.config)],
        source=DataSource(format=reading.format),
    )


def _under_data(field: str) -> str:
    return "data" if field in ("", "body", "backup_data") else f"data.{field}"
