"""manageBackup's doors to a restore made through the bot, by its `deployment_id` alone: `info`, `cancel` and
`rollback`, on deployToChat's own engine (`cancel.py`, `requests.py`) for the chat user the bot names.

Who may cancel or roll one back: `user_id` must be able to deploy in the guild now (its owner, ADMINISTRATOR or
MANAGE_GUILD, read through the bot as for the restore itself) and be the restore's chat user or outrank them
(deployToChat's `cancel` rule); a rollback's plan is then checked for them object by object, as a deploy's. A
deployment that is not a restore made through the bot (nor the rollback of one) is unknown here: 404, as `info`
answers it, so an id from another door tells nothing.
"""

from __future__ import annotations

from typing import Literal

from svcconf import caller_rights
from svcconf.caller_rights import NotAMember
from svcconf.caller_rights.checks import MANAGE_GUILD
from svcconf.chat import get_chat_client
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deployments.answers import DeploymentView, view
from svcconf.deployments.cancel import DeploymentEnded, cancel_record, read_guild, require_outranks
from svcconf.deployments.common import deployment_repository
from svcconf.deployments.requests import queue_rollback, rollbackable
from svcconf.deployments.restore import MayNotDeployHere, NoSuchRestore, RestoreInfo
from svcconf.store.deployment_items import DeploymentKind, DeploymentRecord

BOT_USER_PREFIX = "bot:"  # a deployment made through the bot is the record of `bot:<chat user id>`


class RestoreCancelled(DeploymentView):
    """manageBackup `cancel`: the restore (or its rollback) as deployToChat's `cancel` answers it."""

    action: Literal["cancel"] = "cancel"


def bot_record_user(chat_user_id: str) -> str:
    return f"{BOT_USER_PREFIX}{chat_user_id}"


def _bot_deployment(deployment_id: str, kinds: tuple[DeploymentKind, ...]) -> DeploymentRecord:
    record = deployment_repository().find(deployment_id)
    if record is None or record.kind not in kinds or not record.user_id.startswith(BOT_USER_PREFIX):
        raise NoSuchRestore(f"No restore {deployment_id} was made through the bot.")
    return record


def bot_restore_info(deployment_id: str) -> RestoreInfo:
    """manageBackup `info`: a restore made through the bot, or its rollback, by its id alone."""
    return RestoreInfo(**view(_bot_deployment(deployment_id, ("restore", "rollback"))).model_dump())


def _may_deploy(record: DeploymentRecord, chat_user_id: str) -> LiveGuild:
    """The deployToChat gate for the chat user the bot names, read through the bot: 403 unless they may deploy
    in the guild (and are a member of it)."""
    live = read_guild(record.guild_id)
    try:
        standing, _ = caller_rights.as_caller(get_chat_client(), live, chat_user_id)
    except NotAMember as stranger:
        raise MayNotDeployHere() from stranger
    if not standing.holds(MANAGE_GUILD):
        raise MayNotDeployHere()
    return live


def bot_cancel(deployment_id: str, chat_user_id: str) -> RestoreCancelled:
    """A queued, waiting or running restore made through the bot (or its rollback) ends `cancelled`: 404 unknown,
    403 the user may not, 409 already ended."""
    record = _bot_deployment(deployment_id, ("restore", "rollback"))
    live = _may_deploy(record, chat_user_id)
    if record.finished:
        raise DeploymentEnded(
            f"Deployment {record.deployment_id} has already ended ({record.status}): there is nothing to cancel; "
            "a rollback undoes what it did.",
            deployment_id=record.deployment_id,
        )
    if record.chat_user_id != chat_user_id:
        require_outranks(record, chat_user_id, live)
    return RestoreCancelled(**view(cancel_record(record, by=chat_user_id)).model_dump())


def bot_rollback(deployment_id: str, chat_user_id: str) -> DeploymentView:
    """The rollback of a finished restore made through the bot, queued for the chat user: what it created deleted,
    what it changed put back, and the member grants it made that nobody changed since taken back (the worker's
    `take_back_grants`). 404 unknown or nothing to roll back, 403 the user may not, 409 busy or in the way."""
    target = _bot_deployment(deployment_id, ("restore",))
    live = _may_deploy(target, chat_user_id)
    if target.chat_user_id != chat_user_id:
        require_outranks(target, chat_user_id, live)
    target, live = rollbackable(target, target.guild_id, by_id=True)
    # The rollback is the restore's owner's record (the worker finds what it undoes there), made by this user.
    return queue_rollback(target.user_id, chat_user_id, target, live)
