"""deployToChat `info` with `drift: true`: what changed on the server since a deployment finished, item by item.

The deployment's configuration as it finished (with the id of everything it matched or created) is planned against
the guild now, through the guild's id map, as a pruning deploy would plan it, in the caller's view (channels they
cannot view left out): every item but `keep` is a drift, and an object added since is a `delete` item. Each names
the later deployment of this service (the caller's, of the same project, on the same guild) that made it, when
that deployment's journal touched the object; otherwise, where the audit log says and the caller holds
VIEW_AUDIT_LOG, `by: {user_id, at}` (`audit_authors`: the audit-log read belongs to the backups' reader of the
live server; until it is there, no `by` is given).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from svcconf import caller_rights
from svcconf.accounts.chat_account import managed_guild
from svcconf.api.auth import BearerUser
from svcconf.chat import UnknownGuild, get_chat_client
from svcconf.config import ServerConfig
from svcconf.deploy_engine.live import read_live_guild
from svcconf.deploy_engine.matching import with_ids
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import PlanItem
from svcconf.deployments.common import deployment_repository
from svcconf.deployments.ids import translated
from svcconf.errors import Conflict
from svcconf.store.deployment_items import DeploymentRecord


class ChangedBy(BaseModel):
    user_id: str
    at: datetime


class DriftItem(PlanItem):
    deployment_id: str | None = Field(None, description="The later deployment of this service that made it.")
    by: ChangedBy | None = Field(None, description="Who made it, as the audit log says (VIEW_AUDIT_LOG).")


class NoDrift(Conflict):
    default_message = "Drift is known only once a deployment has finished with its configuration."


def audit_authors(guild_id: str, object_ids: set[str], since: datetime) -> dict[str, ChangedBy]:
    """Who changed each object since then, from the guild's audit log (45 days), when the caller may read it.

    The hook for the audit-log client call (backups-read adds it to the chat client and the sandbox): until then,
    nothing is known, and drift items carry no `by`."""
    return {}


def _touched(record: DeploymentRecord) -> set[str]:
    return {
        *record.journal_created.values(),
        *(entry.get("id", "") for entry in record.journal_updated.values()),
        *record.journal_deleted.values(),
    }


def drift(user: BearerUser, record: DeploymentRecord) -> list[DriftItem]:
    if not record.finished or record.configuration is None or record.finished_at is None:
        raise NoDrift()
    chat_user_id, _ = managed_guild(user, record.guild_id)
    client = get_chat_client()
    try:
        live = read_live_guild(client, record.guild_id)
    except UnknownGuild as missing:
        raise NoDrift("The service's bot is no longer in this server.") from missing
    _, seen = caller_rights.as_caller(client, live, chat_user_id)
    config = with_ids(ServerConfig.model_validate(record.configuration), record.journal_created)
    plan = plan_deployment(seen.live, translated(config, seen.live), prune=True)
    changed = [item for item in plan.items if item.action != "keep"]
    later = [
        other
        for other in deployment_repository()._history(user.sub, record.project_id)
        if other.guild_id == record.guild_id and other.created_at > record.created_at
    ]
    made_by = {object_id: other.deployment_id for other in reversed(later) for object_id in _touched(other)}
    authors = audit_authors(record.guild_id, {item.id for item in changed if item.id}, record.finished_at)
    return [
        DriftItem(
            **item.model_dump(),
            key=item.key,
            deployment_id=made_by.get(item.id or ""),
            by=None if item.id in made_by else authors.get(item.id or ""),
        )
        for item in changed
    ]


def with_drift(user: BearerUser, project_id: str, guild_id: str | None) -> list[DriftItem]:
    """The drift of the deployment `info` answers (the project's newest by the caller, on the guild when given)."""
    record = deployment_repository().newest(user.sub, project_id, guild_id=guild_id)
    if record is None:
        return []
    return drift(user, record)
