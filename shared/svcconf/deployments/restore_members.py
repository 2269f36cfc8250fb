"""A restore's members: the request's check of the dangerous roles it would grant back; the worker's grants of the
backup's roles beside the plan's steps (from the record's cursor on, journaled, resumed across invocations), and the
rollback of a restore taking those grants back.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, MutableMapping
from typing import cast

from svcconf.backups import archive
from svcconf.backups.formats import read_backup
from svcconf.chat import ChatClient, MissingPermissions, UnknownMember, UnknownRole
from svcconf.deploy_engine.member_grants import GrantProgress, MemberWants, grant_members, wanted_roles
from svcconf.deploy_engine.member_reads import HeldRoles
from svcconf.deploy_engine.scheduler import AwaitedIds
from svcconf.deployments.common import deployment_repository
from svcconf.store import restore_journal
from svcconf.store.deployment_items import DeploymentRecord, MemberCounts


def lacking_dangerous(
    client: ChatClient, guild_id: str, wants: list[MemberWants], ids: Mapping[str, str]
) -> list[MemberWants]:
    """The dangerous roles a restore would grant: each one a member still in the server lacks now, as the dry run
    lists them (a moderator who kept their role needs no acknowledgement). What they hold comes from the member
    list (`HeldRoles`, in the members' user-id order), read only up to the last member given a dangerous role."""
    lacking = []
    reads = HeldRoles(client, guild_id)
    for want in wants:
        dangerous = [role for role in want.roles if role.dangerous]
        if not dangerous:
            continue
        held = reads.of(want.user_id)
        if held is None:
            continue
        missing = [role for role in dangerous if ids.get(role.key) not in held]
        if missing:
            lacking.append(want.model_copy(update={"roles": missing}))
    return lacking


def restore_members(
    client: ChatClient,
    record: DeploymentRecord,
    ids: AwaitedIds,
    has_time: Callable[[], bool],
    save: Callable[[int, MemberCounts, list[tuple[str, str]]], None],
) -> bool:
    """Beside the plan's steps: the members' roles, from the record's cursor on, each role's id read from `ids` (the
    plan's, each waited for until the step that makes it has ended); False when time ran out first. `save` keeps the
    cursor, the counts and the grants made (the run's journal: in turn with the steps' outcomes)."""
    if record.restore is None or not record.restore.members:
        return True
    fresh = deployment_repository().get(record.user_id, record.project_id, record.deployment_id) or record
    reading = read_backup(archive.get_backup(record.restore.backup_id).backup_data)
    if reading.config is None:
        return True
    wants = wanted_roles(reading.config, ((m.user_id, m.roles) for m in reading.members))
    if not record.restore.acknowledged_dangerous_members:
        wants = [w.model_copy(update={"roles": [r for r in w.roles if not r.dangerous]}) for w in wants]
    counts = fresh.steps.members or MemberCounts()
    progress = GrantProgress(fresh.members_cursor, counts.planned, counts.granted, counts.left_server, counts.failed)
    made = restore_journal.read_grants(fresh)

    def checkpoint(at: GrantProgress) -> None:
        counted = MemberCounts(planned=at.planned, granted=at.granted, left_server=at.left_server, failed=at.failed)
        save(at.cursor, counted, made)

    return grant_members(
        client,
        record.guild_id,
        wants,
        ChainMap(cast("MutableMapping[str, str]", ids), fresh.journal_created),  # read only: never written
        progress,
        made=made,
        checkpoint=checkpoint,
        has_time=has_time,
        reason=f"svc restore {record.deployment_id}",
        making=ids,
    )


def take_back_grants(
    client: ChatClient, record: DeploymentRecord, target: DeploymentRecord, has_time: Callable[[], bool]
) -> bool:
    """The rollback of a restore, after its plan: each grant the restore made is taken back where the member still
    holds that role (one they lost since, or a role gone, is left as it is), from the record's cursor on, member
    by member in user-id order, what they hold read from the member list (`HeldRoles`); False when time ran out
    first."""
    grants = restore_journal.read_grants(target)
    by_member: dict[str, list[str]] = {}
    for user_id, role_id in grants:
        by_member.setdefault(user_id, []).append(role_id)
    members = sorted(by_member, key=int)  # the list's order (a grant's user id is a snowflake)
    reads = HeldRoles(client, record.guild_id)
    fresh = deployment_repository().get(record.user_id, record.project_id, record.deployment_id) or record
    counts = fresh.steps.members or MemberCounts(planned=len(grants))
    cursor = fresh.members_cursor
    reason = f"svc rollback {record.deployment_id}"
    try:
        while cursor < len(members):
            if not has_time():
                return False
            user_id = members[cursor]
            held = reads.of(user_id)
            if held is None:
                counts.left_server += 1
                held = set()
            for role_id in by_member[user_id]:
                if role_id not in held:
                    continue
                try:
                    client.remove_member_role(record.guild_id, user_id, role_id, reason=reason)
                    counts.removed += 1
                except (UnknownMember, UnknownRole, MissingPermissions):
                    counts.failed += 1
            cursor += 1
    finally:
        restore_journal.save_member_progress(record, cursor, counts)
    return True
