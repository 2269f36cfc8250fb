"""The group commit of a deployment's journal: each entry written before its writer goes on, those that arrive
during a write gathered into the next, one write at a time, a write's failure raised in each of its writers."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from svcconf.store.group_commit import GroupCommit


class Journal:
    """A write that can be held open, recording each batch and how many writes ran at once."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()
        self.at_once = 0
        self.most_at_once = 0
        self.fail_on = fail_on
        self._lock = threading.Lock()

    def write(self, entries: list[str]) -> None:
        with self._lock:
            self.at_once += 1
            self.most_at_once = max(self.most_at_once, self.at_once)
        self.entered.set()
        self.hold.wait(5)
        time.sleep(0.002)
        with self._lock:
            self.at_once -= 1
            self.batches.append(list(entries))
        if self.fail_on in entries:
            raise RuntimeError(f"the table refused {self.fail_on}")


def _waiting_for(commit: GroupCommit[str], count: int) -> None:
    deadline = time.monotonic() + 5
    while len(commit._waiting) < count and time.monotonic() < deadline:
        time.sleep(0.001)


def test_an_entry_is_written_before_its_writer_goes_on():
    journal = Journal()
    commit = GroupCommit(journal.write)
    commit.submit("intent:role:a")
    assert journal.batches == [["intent:role:a"]]
    commit.submit("outcome:role:a")
    assert journal.batches == [["intent:role:a"], ["outcome:role:a"]]
    assert commit.writes == 2


def test_entries_that_arrive_during_a_write_go_together_in_the_next_in_their_order():
    journal = Journal()
    journal.hold.clear()
    commit = GroupCommit(journal.write)
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(commit.submit, "first")
        assert journal.entered.wait(5)
        later = []
        for index in range(5):  # one after another, so their order is known
            later.append(pool.submit(commit.submit, f"later {index}"))
            _waiting_for(commit, index + 1)
        assert not any(future.done() for future in [first, *later])  # none written yet: none goes on
        journal.hold.set()
        for future in [first, *later]:
            future.result(5)
    assert journal.batches == [["first"], [f"later {index}" for index in range(5)]]
    assert (commit.writes, journal.most_at_once) == (2, 1)


def test_a_write_takes_at_most_its_share_and_the_rest_follows():
    journal = Journal()
    journal.hold.clear()
    commit = GroupCommit(journal.write, most=3)
    with ThreadPoolExecutor(9) as pool:
        futures = [pool.submit(commit.submit, "first")]
        assert journal.entered.wait(5)
        for index in range(7):
            futures.append(pool.submit(commit.submit, f"e{index}"))
            _waiting_for(commit, index + 1)
        journal.hold.set()
        for future in futures:
            future.result(5)
    assert journal.batches == [["first"], ["e0", "e1", "e2"], ["e3", "e4", "e5"], ["e6"]]
    assert journal.most_at_once == 1


def test_many_writers_side_by_side_each_written_once_and_never_two_writes_at_once():
    journal = Journal()
    commit = GroupCommit(journal.write)
    entries = [f"step {index}" for index in range(300)]
    with ThreadPoolExecutor(12) as pool:
        list(pool.map(commit.submit, entries))
    written = [entry for batch in journal.batches for entry in batch]
    assert sorted(written) == sorted(entries)
    assert journal.most_at_once == 1
    assert commit.writes == len(journal.batches) < len(entries)  # gathered: fewer writes than entries


def test_a_failed_write_is_raised_in_each_of_its_writers_and_not_in_the_next_batchs():
    journal = Journal(fail_on="refused")
    journal.hold.clear()
    commit = GroupCommit(journal.write)
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(commit.submit, "first")
        assert journal.entered.wait(5)
        refused = pool.submit(commit.submit, "refused")
        _waiting_for(commit, 1)
        beside = pool.submit(commit.submit, "beside it")
        _waiting_for(commit, 2)
        journal.hold.set()
        first.result(5)
        for future in (refused, beside):
            with pytest.raises(RuntimeError, match="the table refused refused"):
                future.result(5)
    commit.submit("after")  # the next write goes on
    assert journal.batches[-1] == ["after"]
