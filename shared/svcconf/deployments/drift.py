"""deployToChat `info` with `drift: true`: what changed on the server since a deployment finished, item by item.

The deployment's configuration as it finished (with the id of everything it matched or created) is planned against
the guild now, through the guild's id map, as a pruning deploy would plan it, in the caller's view (channels they
cannot view left out): every item but `keep` is a drift, and an object added since is a `delete` item. Each names
the later deployment of this service (the caller's, of the same project, on the same guild) that made it, when
that deployment's journal touched the object; otherwise, where the audit log says and the caller holds
VIEW_AUDIT_LOG, `by: {user_id, at}`: the newest entry for the object since the deployment finished, read page by
page back to that moment (`audit_authors`). A caller without VIEW_AUDIT_LOG causes no audit-log read at all: who
changed what is theirs to know only if the platform would show them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field

from svcconf import caller_rights
from svcconf.accounts.chat_account import managed_guild
from svcconf.api.auth import BearerUser
from svcconf.chat import ChatClient, MissingPermissions, UnknownGuild, get_chat_client
from svcconf.chat.members import AUDIT_LOG_PAGE_SIZE
from svcconf.config import PERMISSION_BITS, ServerConfig
from svcconf.deploy_engine.id_map import configured_ids
from svcconf.deploy_engine.journal import epoch_ms, snowflake_time_ms
from svcconf.deploy_engine.live import read_live_guild
from svcconf.deploy_engine.matching import with_ids
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import PlanItem
from svcconf.deployments.common import deployment_repository
from svcconf.deployments.ids import translated
from svcconf.errors import Conflict
from svcconf.store.deployment_items import DeploymentRecord

VIEW_AUDIT_LOG = 1 << PERMISSION_BITS["VIEW_AUDIT_LOG"]


class ChangedBy(BaseModel):
    user_id: str
    at: datetime


class DriftItem(PlanItem):
    deployment_id: str | None = Field(None, description="The later deployment of this service that made it.")
    by: ChangedBy | None = Field(None, description="Who made it, as the audit log says (VIEW_AUDIT_LOG).")


class NoDrift(Conflict):
    default_message = "Drift is known only once a deployment has finished with its configuration."


def audit_authors(client: ChatClient, guild_id: str, object_ids: set[str], since: datetime) -> dict[str, ChangedBy]:
    """Who last changed each object since then, from the guild's audit log (newest first, 100 a page), read back
    to `since` and no further (the platform keeps 45 days). The bot unable to read it: nothing is known."""
    found: dict[str, ChangedBy] = {}
    oldest_ms = epoch_ms(since)
    before: str | None = None
    while object_ids - found.keys():
        try:
            page = client.audit_log(guild_id, before=before, limit=AUDIT_LOG_PAGE_SIZE).audit_log_entries
        except MissingPermissions:
            return found
        for entry in page:
            made_ms = snowflake_time_ms(entry.id)
            if made_ms < oldest_ms:
                return found
            if entry.target_id in object_ids and entry.target_id not in found and entry.user_id is not None:
                at = datetime.fromtimestamp(made_ms / 1000, tz=UTC)
                found[entry.target_id] = ChangedBy(user_id=entry.user_id, at=at)
        if len(page) < AUDIT_LOG_PAGE_SIZE:
            return found
        before = page[-1].id
    return found


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
    standing, seen = caller_rights.as_caller(client, live, chat_user_id)
    config = with_ids(ServerConfig.model_validate(record.configuration), record.journal_created)
    plan = plan_deployment(seen.live, translated(config, seen.live), prune=True)
    changed = [item for item in plan.items if item.action != "keep"]
    later = [
        other
        for other in deployment_repository()._history(user.sub, record.project_id)
        if other.guild_id == record.guild_id and other.created_at > record.created_at
    ]
    made_by = {touched: other.deployment_id for other in reversed(later) for touched in _touched(other)}
    # An object gone since (a `create` item) has no id in the guild: the deployment's configuration knows it.
    ids = configured_ids(config)

    def object_id(item: PlanItem) -> str:
        return item.id or ids.get(item.key) or ""

    authors: dict[str, ChangedBy] = {}
    if standing.holds(VIEW_AUDIT_LOG):
        wanted = {object_id(item) for item in changed} - made_by.keys() - {""}
        authors = audit_authors(client, record.guild_id, wanted, record.finished_at)
    return [
        DriftItem(
            **item.model_dump(),
            key=item.key,
            deployment_id=made_by.get(object_id(item)),
            by=None if object_id(item) in made_by else authors.get(object_id(item)),
        )
        for item in changed
    ]


def with_drift(user: BearerUser, project_id: str, guild_id: str | None) -> list[DriftItem]:
    """The drift of the deployment `info` answers (the project's newest by the caller, on the guild when given)."""
    record = deployment_repository().newest(user.sub, project_id, guild_id=guild_id)
    if record is None:
        return []
    return drift(user, record)
