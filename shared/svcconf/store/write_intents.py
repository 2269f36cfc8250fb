"""The platform writes a running deployment has begun, kept on its guild's lock until the deployment ends.

The lock (`pk = GUILD#<guild_id>`, `sk = LOCK`: `svcconf.store.deployment_records`) holds `intents`, object key ->
when its write began (Unix ms). An intent is written before each write, on a condition: the deployment still holds
the lock and was not cancelled, so a cancelled deployment makes no write. The lock is a small item, so an intent costs
a small write, whatever the deployment's journal has grown to: the steps' requests wait for it, the journal's writes
(`svcconf.deployments.run_journal`) are not in their way. Each checkpoint copies its steps' intents into the
deployment's item (`journal_intents`), where a resumed run also reads those of a release before this one.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from svcconf.settings import get_settings
from svcconf.store.deployment_items import DeploymentRecord
from svcconf.store.deployment_records import DeploymentCancelled, lock_key
from svcconf.store.dynamo import UpdateExpression, is_conditional_check_failure, plain_integers, table


def record_intents(record: DeploymentRecord, intents: dict[str, int]) -> None:
    """`DeploymentCancelled` if the deployment was cancelled or no longer holds its guild: the writes are not made."""
    update = UpdateExpression()
    for key, at_ms in intents.items():
        update.set(["intents", key], at_ms)
    holder = f"{update.name('deployment_id')} = {update.value(record.deployment_id)}"
    try:
        table(get_settings().deployments_table).update_item(
            Key=lock_key(record.guild_id),
            ConditionExpression=f"{holder} AND attribute_not_exists({update.name('cancelled')})",
            **update.arguments(),
        )
    except ClientError as error:
        if is_conditional_check_failure(error):
            raise DeploymentCancelled(record.deployment_id) from error
        raise


def begun(record: DeploymentRecord) -> dict[str, int]:
    """The intents on the guild's lock while this deployment holds it; none otherwise."""
    lock = table(get_settings().deployments_table).get_item(Key=lock_key(record.guild_id), ConsistentRead=True)
    item = lock.get("Item") or {}
    if item.get("deployment_id") != record.deployment_id:
        return {}
    return {key: int(at_ms) for key, at_ms in plain_integers(item.get("intents") or {}).items()}
