"""Cancelling a deployment (deployToChat `cancel`), and who may.

A queued, waiting or running deployment ends `cancelled` and frees its guild; a running one stops at its next step
(the worker checks between steps), and what it already wrote stays, journaled, for a rollback to undo. The deployer
may cancel their own; so may anyone who outranks them in the guild: the owner, an administrator, or a member with
MANAGE_GUILD whose highest role is above the deployer's. Their standing is read through the bot now, as for a deploy.
"""

from __future__ import annotations

from svcconf import caller_rights
from svcconf.accounts.chat_account import managed_guild
from svcconf.api.auth import BearerUser
from svcconf.caller_rights import CallerStanding, NotAMember
from svcconf.caller_rights.checks import MANAGE_GUILD
from svcconf.chat import UnknownGuild, get_chat_client
from svcconf.clock import utc_now
from svcconf.config.access import ADMINISTRATOR_BIT
from svcconf.deploy_engine.live import LiveGuild, read_live_guild
from svcconf.deployments.answers import DeploymentView, view
from svcconf.deployments.common import WHO_MAY_CANCEL, deployment_repository
from svcconf.deployments.requests import BotNotInGuild, install_url
from svcconf.deployments.worker import cancelled_summary
from svcconf.errors import BadRequest, Conflict, FieldError, Forbidden, NotFound
from svcconf.observability import logger, metrics
from svcconf.store.deployment_items import DeploymentRecord
from svcconf.store.deployment_records import AlreadyEnded


class NothingToCancel(NotFound):
    default_message = "No such deployment."


class DeploymentEnded(Conflict):
    default_message = "The deployment has already ended."


class MayNotCancel(Forbidden):
    default_message = "You may not cancel this deployment."


def cancel(user: BearerUser, *, deployment_id: str | None, guild_id: str | None) -> DeploymentView:
    """Cancels the deployment `deployment_id`, or the one that holds `guild_id` now: 404 if none, 403 if the caller
    may not manage its guild or does not outrank its deployer, 409 if it has ended."""
    if deployment_id is None and guild_id is None:
        raise BadRequest(
            "Name the deployment to cancel: `deployment_id`, or `guild_id` for the server's current one.",
            details=[FieldError(field="deployment_id", message="required without guild_id")],
        )
    repository = deployment_repository()
    record = repository.find(deployment_id) if deployment_id else None
    if deployment_id and (record is None or guild_id not in (None, record.guild_id)):
        raise NothingToCancel(f"No deployment {deployment_id}" + (" on this server." if guild_id else "."))
    guild = record.guild_id if record else guild_id or ""
    chat_user_id, _ = managed_guild(user, guild)  # the deployToChat gate, before anything about it is told
    if record is None:
        record = repository.lock_holder(guild, int(utc_now().timestamp()))
        if record is None or record.finished:
            raise NothingToCancel("No deployment is queued, waiting or running on this server.")
    if record.finished:
        raise DeploymentEnded(
            f"Deployment {record.deployment_id} has already ended ({record.status}): there is nothing to cancel; "
            "a rollback undoes what it did.",
            deployment_id=record.deployment_id,
        )
    if record.chat_user_id != chat_user_id:
        require_outranks(record, chat_user_id)
    return view(cancel_record(record, by=chat_user_id))


def cancel_record(record: DeploymentRecord, *, by: str) -> DeploymentRecord:
    """Ends `record` cancelled by the chat user `by` (whose right to has been checked); 409 if it had ended."""
    repository = deployment_repository()
    now = utc_now()
    result = cancelled_summary(record.model_copy(update={"cancelled_by": by}))
    try:
        was = repository.cancel(record, by=by, result=result, now=now)
    except AlreadyEnded as ended:
        raise DeploymentEnded(
            f"Deployment {record.deployment_id} ended meanwhile: there is nothing to cancel.",
            deployment_id=record.deployment_id,
        ) from ended
    metrics.add_metric(name="DeploymentCancelled", unit="Count", value=1)
    logger.info("deployment cancelled", extra={"deployment_id": record.deployment_id, "was": was, "by": by})
    return repository.get(record.user_id, record.project_id, record.deployment_id) or record


def require_outranks(record: DeploymentRecord, chat_user_id: str, live: LiveGuild | None = None) -> None:
    """403 unless the caller outranks the deployer: owner, ADMINISTRATOR, or MANAGE_GUILD above their top role.
    `live`: the guild, when the caller has just read it."""
    client = get_chat_client()
    if live is None:
        live = read_guild(record.guild_id)
    caller = caller_rights.read_standing(client, live, chat_user_id)
    if not outranks(caller, _standing_or_none(live, record.chat_user_id)):
        raise MayNotCancel(
            f"Deployment {record.deployment_id} is chat user {record.chat_user_id}'s: only {WHO_MAY_CANCEL} may "
            "cancel it."
        )


def read_guild(guild_id: str) -> LiveGuild:
    """The guild as the bot reads it now: 409 with the install link when the bot is not in it."""
    try:
        return read_live_guild(get_chat_client(), guild_id)
    except UnknownGuild as missing:
        raise BotNotInGuild(install_url=install_url(guild_id, None)) from missing


def outranks(caller: CallerStanding, deployer: CallerStanding | None) -> bool:
    """The owner and administrators outrank everyone; a manager outranks a deployer whose highest role is lower
    (or who is no longer a member)."""
    if caller.owner or caller.holds(ADMINISTRATOR_BIT):
        return True
    if not caller.holds(MANAGE_GUILD) or (deployer is not None and deployer.owner):
        return False
    return caller.top_position > (deployer.top_position if deployer else 0)


def _standing_or_none(live: LiveGuild, chat_user_id: str) -> CallerStanding | None:
    try:
        return caller_rights.read_standing(get_chat_client(), live, chat_user_id)
    except NotAMember:
        return None
