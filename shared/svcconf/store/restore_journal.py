"""What a restore keeps beside its deployment item: the member grants' progress and the grants it made. (manageBackup
`info`, `cancel` and `rollback` find a restore by its id alone through the deployment repository's reference item.)

- progress: `members_cursor` (how many of the backup's members, in user-id order, the grants went through) and
  `steps.members`, set on the deployment's item after each batch of members, so a resumed worker goes on there;
- `journal_grants`: every grant made, `["<user id>", "<role id>"]`, compressed in the item or in the documents
  bucket when large (10,000 members' grants), read back by the restore's rollback;
"""

from __future__ import annotations

from svcconf.settings import get_settings
from svcconf.store import documents
from svcconf.store.deployment_items import DeploymentRecord, MemberCounts
from svcconf.store.deployment_records import record_key
from svcconf.store.dynamo import table


def grants_key(deployment_id: str) -> str:
    return f"deployments/{deployment_id}/grants.json.bz2"


def save_member_progress(
    record: DeploymentRecord, cursor: int, counts: MemberCounts, grants: list[tuple[str, str]] | None = None
) -> None:
    """The grants' progress after a batch; with `grants`, the whole list of grants made so far."""
    names = {"#cursor": "members_cursor", "#steps": "steps", "#members": "members"}
    values: dict[str, object] = {":cursor": cursor, ":counts": counts.model_dump()}
    expression = "SET #cursor = :cursor, #steps.#members = :counts"
    if grants is not None:
        names["#grants"] = "journal_grants"
        values[":grants"] = documents.stored([list(g) for g in grants], grants_key(record.deployment_id))
        expression += ", #grants = :grants"
    table(get_settings().deployments_table).update_item(
        Key=record_key(record),
        UpdateExpression=expression,
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
    )


def read_grants(record: DeploymentRecord) -> list[tuple[str, str]]:
    item = table(get_settings().deployments_table).get_item(Key=record_key(record), ConsistentRead=True).get("Item")
    if not item or "journal_grants" not in item:
        return []
    return [(str(user), str(role)) for user, role in documents.loaded(item["journal_grants"])]
