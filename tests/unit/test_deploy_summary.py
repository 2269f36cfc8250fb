"""The sentence a deployment's record carries: counts with their nouns, one of a kind in the singular."""

from __future__ import annotations

from svcconf.deployments.worker import summary
from svcconf.store.deployment_items import KindCounts, Steps


def test_one_of_a_kind_is_named_in_the_singular_and_more_in_the_plural():
    steps = Steps(
        roles=KindCounts(created=1),
        categories=KindCounts(created=1),
        channels=KindCounts(created=3, updated=1),
        overwrites=KindCounts(created=2),
        settings=KindCounts(updated=1),
    )

    assert summary("deploy", steps) == (
        "Created 1 role, 1 category, 3 channels, 2 overwrites; updated 1 channel, the server's settings."
    )


def test_a_rollback_says_what_it_deleted_and_restored_and_how_many_failed():
    steps = Steps(roles=KindCounts(deleted=2, failed=1), channels=KindCounts(updated=1))

    assert summary("rollback", steps) == "Deleted 2 roles; restored 1 channel; 1 failed."


def test_a_rollback_says_what_it_made_again_of_what_the_deployment_deleted():
    steps = Steps(roles=KindCounts(created=1, deleted=1), channels=KindCounts(created=1))

    assert summary("rollback", steps) == "Deleted 1 role; restored nothing; re-created 1 role, 1 channel."


def test_a_pruning_deploy_says_what_it_deleted_too():
    steps = Steps(roles=KindCounts(updated=1, deleted=1), channels=KindCounts(deleted=2))

    assert summary("deploy", steps) == "Created nothing; updated 1 role; deleted 1 role, 2 channels."
