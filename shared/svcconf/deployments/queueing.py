"""Queuing a deployment: its record written with the guild's lock (one deployment per guild at a time), the
project's code minted for a deploy, and the job sent to the deploy worker; and the refusal when the guild is busy.
"""

from __future__ import annotations

import secrets
from typing import Any

from svcconf import codes
from svcconf.clock import utc_now
from svcconf.config import ServerConfig
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deployments.common import LOCK_SECONDS, WHO_MAY_CANCEL, deployment_repository, job_of
from svcconf.errors import Conflict, ServiceUnavailable
from svcconf.observability import logger
from svcconf.settings import get_settings
from svcconf.store import queues
from svcconf.store.deployment_items import DeploymentKind, DeploymentRecord
from svcconf.store.deployment_records import GuildBusy


class GuildIsBusy(Conflict):
    default_message = "Another deployment or rollback to this server is still running; try again when it ends."

    @classmethod
    def held_by(cls, holder: DeploymentRecord | None) -> GuildIsBusy:
        """Names the deployment that holds the guild (its `deployment_id` in the body too) and who may cancel it."""
        if holder is None:
            return cls()
        by = f"Deployment {holder.deployment_id} to this server by chat user {holder.chat_user_id}"
        if holder.status == "cancelled":
            return cls(
                f"{by} was cancelled and stops at its current step: try again in a moment.",
                deployment_id=holder.deployment_id,
            )
        if holder.status == "waiting" and holder.resumes_at is not None:
            state = f"is waiting for the chat platform and resumes at {holder.resumes_at.isoformat(timespec='seconds')}"
        else:
            state = f"is still running ({holder.status})"
        return cls(
            f"{by} {state}; try again when it ends, or cancel it (`cancel` with its deployment_id): "
            f"{WHO_MAY_CANCEL} may.",
            deployment_id=holder.deployment_id,
        )


def new_deployment_id() -> str:
    # Millisecond time first, in fixed-width hex, so a project's deployments sort by creation time.
    return f"dp_{int(utc_now().timestamp() * 1000):012x}{secrets.token_hex(4)}"


def new_record(
    kind: DeploymentKind,
    user_id: str,
    chat_user_id: str,
    project_id: str,
    project_name: str,
    live: LiveGuild,
    **details: Any,
) -> DeploymentRecord:
    """A queued deployment of the user's (`user_id`: a signed-in user's `sub`, or `bot:<chat user id>` through the bot),
    to the live guild, with the bot's roles as the request saw them."""
    now = utc_now()
    return DeploymentRecord(
        deployment_id=new_deployment_id(),
        kind=kind,
        user_id=user_id,
        chat_user_id=chat_user_id,
        project_id=project_id,
        project_name=project_name,
        guild_id=live.id,
        guild_name=live.name,
        bot_role_ids=live.bot_role_ids,
        status="queued",
        created_at=now,
        updated_at=now,
        **details,
    )


def queue_deployment(record: DeploymentRecord, *, mint_for: ServerConfig | None = None) -> None:
    """Takes the guild's lock with the queued record, mints the project's code for a deploy, sends the job."""
    settings = get_settings()
    if not settings.deploy_queue_url:
        logger.error("the deploy queue is not configured (DEPLOY_QUEUE_URL)")
        raise ServiceUnavailable("Deployments are not configured.")
    repository = deployment_repository()
    now = int(record.created_at.timestamp())
    try:
        repository.start(record, lock_expiration=now + LOCK_SECONDS, now=now)
    except GuildBusy as busy:
        raise GuildIsBusy.held_by(repository.lock_holder(record.guild_id, now)) from busy
    try:
        if mint_for is not None:
            code = codes.mint_code(
                record.project_id,
                record.project_name,
                mint_for.model_dump(mode="json"),
                chat_user_id=record.chat_user_id,
            )
            repository.set_code(record, code.code, utc_now())
            record.deployment_code = code.code
        queues.send(settings.deploy_queue_url, job_of(record).model_dump(mode="json"))
    except Exception:
        # Not queued means never run: release the guild at once rather than after the lock's expiry.
        repository.finish(record, "failed", "Not started.", "The deployment could not be queued.", utc_now())
        raise
