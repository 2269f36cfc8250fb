"""Writes from threads side by side, gathered: while one write is under way the entries that arrive wait, and the
next write takes them all (a group commit). A deployment's steps run side by side across the platform's buckets,
and each journals its intent before its request and its outcome after: one update of the deployment's item per
batch instead of per entry, and each entry still written before its writer goes on.

One write at a time, too: the local runner's DynamoDB (moto) loses one of two concurrent updates of an item.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

MOST_A_WRITE = 16  # entries: an UpdateExpression stays far under its 4 KB


@dataclass
class _Waiting[Entry]:
    entry: Entry
    written: bool = False
    failure: BaseException | None = None


class GroupCommit[Entry]:
    def __init__(self, write: Callable[[list[Entry]], None], *, most: int = MOST_A_WRITE) -> None:
        self._write = write
        self._most = most
        self._waiting: list[_Waiting[Entry]] = []
        self._writing = False
        self._changed = threading.Condition()
        self.writes = 0  # how many writes the entries took

    def submit(self, entry: Entry) -> None:
        """Returns once `entry` is written, with those gathered beside it, in the order they came; a write's failure
        is raised in each of its entries' writers."""
        mine = _Waiting(entry)
        with self._changed:
            self._waiting.append(mine)
        while True:
            with self._changed:
                self._changed.wait_for(lambda: mine.written or not self._writing)
                if mine.written:
                    break
                self._writing = True  # this thread writes the next batch: its own entry, or those before it
                batch, self._waiting = self._waiting[: self._most], self._waiting[self._most :]
            failure: BaseException | None = None
            try:
                self._write([waiting.entry for waiting in batch])
            except BaseException as error:  # handed to every writer of the batch, each raising it
                failure = error
            with self._changed:
                for waiting in batch:
                    waiting.written, waiting.failure = True, failure
                self.writes += 1
                self._writing = False
                self._changed.notify_all()
        if mine.failure is not None:
            raise mine.failure
