"""Deployment codes: minted for a project's configuration, fetched (and consumed) by the bot."""

from __future__ import annotations

import secrets
import string
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from svcconf.clock import utc_now
from svcconf.errors import CodeBoundToAnotherUser, CodeNotFound, ServiceError
from svcconf.settings import get_settings
from svcconf.store.codes import CodeRecord, CodeRepository

CODE_ALPHABET = string.ascii_uppercase + string.digits
MINT_ATTEMPTS = 5  # 36^8 codes: a collision is rare, five in a row means something else is wrong


class DeploymentCode(BaseModel):
    code: str
    project_id: str
    project_name: str
    expires_at: datetime


class ResolvedConfiguration(BaseModel):
    configuration: dict[str, Any]
    project_name: str
    project_id: str
    expires_at: datetime


def _repository() -> CodeRepository:
    return CodeRepository(get_settings().codes_table)


def new_code_text() -> str:
    blocks = ("".join(secrets.choice(CODE_ALPHABET) for _ in range(4)) for _ in range(2))
    return "SVC-" + "-".join(blocks)


def mint_code(
    project_id: str,
    project_name: str,
    configuration: BaseModel | dict[str, Any],
    *,
    chat_user_id: str | None = None,
) -> DeploymentCode:
    """Stores a new code for the configuration; retries on the rare collision with an existing code."""
    document = configuration.model_dump(mode="json") if isinstance(configuration, BaseModel) else configuration
    now = utc_now()
    expires_at = now + timedelta(hours=get_settings().code_ttl_hours)
    repository = _repository()
    for _ in range(MINT_ATTEMPTS):
        record = CodeRecord(
            code=new_code_text(),
            project_id=project_id,
            project_name=project_name,
            configuration=document,
            chat_user_id=chat_user_id,
            created_at=now,
            expires_at=expires_at,
        )
        if repository.insert(record):
            return DeploymentCode(
                code=record.code, project_id=project_id, project_name=project_name, expires_at=expires_at
            )
    raise ServiceError("Could not mint a unique deployment code.")


def resolve_code(code: str, *, user_id: str | None = None, consume: bool = False) -> ResolvedConfiguration:
    """The configuration behind a code. 404 when unknown, expired or used; 403 when bound to another user."""
    repository = _repository()
    now = utc_now()
    record = repository.get(code)
    if record is None or not record.is_usable(now):
        raise CodeNotFound()
    if user_id and record.chat_user_id and user_id != record.chat_user_id:
        raise CodeBoundToAnotherUser()
    if consume:
        record = repository.consume(code, now)
        if record is None:  # another request consumed it between our read and our write
            raise CodeNotFound()
    return ResolvedConfiguration(
        configuration=record.configuration,
        project_name=record.project_name,
        project_id=record.project_id,
        expires_at=record.expires_at,
    )
