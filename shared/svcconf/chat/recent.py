"""Public answers of the platform kept briefly in the instance: a native template by its code, an invite by its.

Both are what anyone holding the code may read, with the bot's token or without one, so an answer kept for one
caller may be given to another: nothing here is read with a user's rights or about a guild the caller must manage
(those reads are never kept). Only answers are kept, not refusals, and only for a short while (a template's for a
minute, an invite's member counts for half of one), so a flood of the same lookups costs the bot one request.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

MAX_ENTRIES = 256


class RecentAnswers[T]:
    """Answers by key for `seconds` each, the oldest dropped past `MAX_ENTRIES` (thread-safe)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self.seconds = seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._answers: OrderedDict[Hashable, tuple[float, T]] = OrderedDict()

    def get_or_fetch(self, key: Hashable, fetch: Callable[[], T]) -> T:
        now = self._clock()
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None and kept[0] > now:
                return kept[1]
        answer = fetch()
        with self._lock:
            self._answers[key] = (self._clock() + self.seconds, answer)
            self._answers.move_to_end(key)
            while len(self._answers) > MAX_ENTRIES:
                self._answers.popitem(last=False)
        return answer
