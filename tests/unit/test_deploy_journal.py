"""The journal's two tests of authorship: an object's creation time read from its id, and a fingerprint."""

from __future__ import annotations

from svcconf.chat import Channel
from svcconf.deploy_engine.journal import (
    PLATFORM_EPOCH_MS,
    changed_fields,
    channel_fields,
    fingerprint,
    made_by_the_write,
    snowflake_time_ms,
)

INTENT_MS = 1_795_000_000_000


def snowflake_at(ms: int) -> str:
    return str((ms - PLATFORM_EPOCH_MS) << 22 | 0b1010)


def test_an_ids_creation_time_is_read_from_its_high_bits():
    assert snowflake_time_ms(snowflake_at(INTENT_MS)) == INTENT_MS
    assert snowflake_time_ms("175928847299117063") == 1_462_015_105_796  # the platform's documented example


def test_only_an_object_made_while_the_journaled_write_could_run_is_that_writes():
    assert made_by_the_write(snowflake_at(INTENT_MS + 800), INTENT_MS, longest_write_seconds=10)
    assert made_by_the_write(snowflake_at(INTENT_MS - 2_000), INTENT_MS, longest_write_seconds=10)  # clocks differ
    assert not made_by_the_write(snowflake_at(INTENT_MS + 60_000), INTENT_MS, longest_write_seconds=10)
    assert not made_by_the_write(snowflake_at(INTENT_MS - 60_000), INTENT_MS, longest_write_seconds=10)
    assert not made_by_the_write(snowflake_at(INTENT_MS), None, longest_write_seconds=10)


def test_a_fingerprint_names_the_fields_that_changed_and_ignores_the_position():
    channel = Channel(id="1", type=0, name="lobby", topic="Hello", position=3, parent_id="9")
    left = fingerprint(channel_fields(channel))

    moved_by_others = channel.model_copy(update={"position": 7})
    edited = channel.model_copy(update={"topic": "Bye", "name": "hall"})

    assert changed_fields(channel_fields(moved_by_others), left) == []
    assert changed_fields(channel_fields(edited), left) == ["name", "topic"]
    assert changed_fields(channel_fields(edited), None) == []  # no fingerprint: a journal from before them
    assert len(left) == 13 + 4 * len(channel_fields(channel))
