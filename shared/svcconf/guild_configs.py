"""Starting from what exists: a live guild or a native server template read as a configuration (deployToChat
`export` and `import`); the live guild as svcAiChat with `guild_id` reads it (svcconf.ai_chat_guild).

Reading a guild takes what a deploy takes: the caller manages it (403) and the bot is in it (409 with the
install link). The conversions themselves are pure (`deploy/export.py`, `deploy/native_template.py`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from svcconf.auth import BearerUser
from svcconf.chat import UnknownGuild, get_chat_client
from svcconf.chat_accounts import managed_guild
from svcconf.config import LintWarning, ServerConfig
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deploy_engine.native_template import template_config
from svcconf.deployments.requests import BotNotInGuild, install_url
from svcconf.errors import BadRequest
from svcconf.links import link_parts
from svcconf.settings import get_settings

# Codes are case-sensitive: passed on exactly as written.
TEMPLATE_CODE = re.compile(r"[A-Za-z0-9_-]{2,64}")


class ExportAnswer(BaseModel):
    status: Literal["exported"] = Field(description="Tells this answer apart from the others of 200.")
    config: ServerConfig
    warnings: list[LintWarning]


class TemplateSource(BaseModel):
    code: str
    name: str
    description: str | None
    usage_count: int


class ImportAnswer(BaseModel):
    status: Literal["imported"] = Field(description="Tells this answer apart from the others of 200.")
    config: ServerConfig
    warnings: list[LintWarning]
    source: TemplateSource = Field(description="The native template the configuration was read from.")


def managed_live_guild(user: BearerUser, guild_id: str) -> LiveGuild:
    """The live guild, read only for a caller who manages it (403) with the bot in it (409 with the link)."""
    managed_guild(user, guild_id)
    try:
        return read_live_guild(get_chat_client(), guild_id)
    except UnknownGuild as missing:
        raise BotNotInGuild(install_url=install_url(guild_id, None)) from missing


def export_guild(user: BearerUser, guild_id: str) -> ExportAnswer:
    """The live guild as a configuration that deploys back to it with no write."""
    live = managed_live_guild(user, guild_id)
    exported = export_config(live, live.settings)
    return ExportAnswer(status="exported", config=exported.config, warnings=exported.warnings)


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
