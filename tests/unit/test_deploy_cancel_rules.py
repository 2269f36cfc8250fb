"""Who outranks a deployer (cancel), and which objects a deployment touched (rollback by deployment_id): pure rules."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from svcconf.caller_rights import CallerStanding
from svcconf.config import to_bitfield
from svcconf.deployments.cancel import outranks
from svcconf.deployments.requests import touched
from svcconf.store.deployment_items import DeploymentRecord


def standing(*permissions: str, top: int = 0, owner: bool = False) -> CallerStanding:
    return CallerStanding(
        user_id="1",
        owner=owner,
        role_ids=frozenset(),
        permissions=int(to_bitfield(list(permissions))),
        top_position=top,
    )


OWNER = standing("ADMINISTRATOR", owner=True)
ADMIN_LOW = standing("ADMINISTRATOR", top=1)
MANAGER_HIGH = standing("MANAGE_GUILD", top=3)
MANAGER_LOW = standing("MANAGE_GUILD", "MANAGE_ROLES", top=1)
MEMBER_HIGH = standing("MANAGE_ROLES", top=5)


@pytest.mark.parametrize(
    ("caller", "deployer", "expected"),
    [
        (OWNER, ADMIN_LOW, True),
        (ADMIN_LOW, OWNER, True),  # administrators can always cancel
        (ADMIN_LOW, MANAGER_HIGH, True),
        (MANAGER_HIGH, MANAGER_LOW, True),
        (MANAGER_LOW, MANAGER_HIGH, False),
        (MANAGER_HIGH, standing("MANAGE_GUILD", top=3), False),  # level is not above
        (MANAGER_HIGH, OWNER, False),
        (MANAGER_HIGH, None, True),  # the deployer has left the server
        (MEMBER_HIGH, MANAGER_LOW, False),  # without MANAGE_GUILD, rank is not enough
    ],
)
def test_who_outranks_a_deployer(caller, deployer, expected) -> None:
    assert outranks(caller, deployer) is expected


def record(**journal) -> DeploymentRecord:
    now = datetime.now(UTC)
    return DeploymentRecord(
        deployment_id="dp_000000000000000000aa",
        kind="deploy",
        user_id="u",
        chat_user_id="c",
        project_id="p",
        project_name="P",
        guild_id="g",
        guild_name="G",
        status="succeeded",
        created_at=now,
        updated_at=now,
        **journal,
    )


def test_a_deployment_touched_what_it_created_updated_deleted_and_reordered_and_the_guild_for_settings() -> None:
    touched_ids = touched(
        record(
            journal_created={"role:a": "11"},
            journal_updated={
                "channel:b": {"id": "22", "kind": "channel", "previous": {"topic": "x"}},
                "settings": {"id": "g", "kind": "settings", "previous": {"name": "Old"}},
                "reorder:roles": {"id": "g", "kind": "role", "previous": {"positions": {"33": 1, "44": 2}}},
            },
            journal_deleted={"delete:55": "55"},
        )
    )

    assert touched_ids == {"11", "22", "g", "33", "44", "55"}


def test_a_reorder_alone_does_not_touch_the_guilds_settings() -> None:
    reorder = {"reorder:channels": {"id": "g", "kind": "channel", "previous": {"positions": {"66": None}}}}

    assert touched(record(journal_updated=reorder)) == {"66"}
