"""The attempts a run has left to start, handed out so that runs of one scenario never overlap.

A scenario's attempts (`repeat`) and its variants run the same agent on the same workspace:
run at the same time, one run's `write` would cut the file another run's assertions are
reading. So an attempt whose scenario (its id, whatever the variant) is running waits, and the
lane takes the next scenario's attempt instead; only when every attempt left belongs to a
running scenario does the lane wait for one to finish. Other scenarios fill the lanes, so a
suite of many scenarios keeps its concurrency.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item", bound=Hashable)

# How often a waiting lane looks at its stop condition (an interrupt, a spend limit): waking
# up costs nothing measurable, and the stop is seen at once when a run ends anyway.
_POLL_S = 0.2


class ScenarioWork(Generic[Item]):
    """Items in order, each with the key of its scenario; `take` one whose scenario is idle."""

    def __init__(self, items: Sequence[Item], key: Callable[[Item], Hashable]) -> None:
        self._pending = deque(items)
        self._key = key
        self._busy: set[Hashable] = set()
        self._changed = threading.Condition()

    def take(
        self, stopped: Callable[[], bool], waiting: Callable[[], None] = lambda: None
    ) -> Item | None:
        """The first item whose scenario is not running, waiting while every item left has
        one running; None when nothing is left or `stopped()` says to start no more.
        `waiting` is called before the first wait (the lane lets its last scenario's checks
        begin: one of them may be what it waits for)."""
        told = False
        with self._changed:
            while True:
                if stopped() or not self._pending:
                    return None
                for position, item in enumerate(self._pending):
                    key = self._key(item)
                    if key not in self._busy:
                        del self._pending[position]  # near the front: cheap on a deque
                        self._busy.add(key)
                        return item
                if not told:
                    told = True
                    waiting()
                self._changed.wait(_POLL_S)

    def done(self, item: Item) -> None:
        """`item` finished: its scenario may run its next attempt."""
        with self._changed:
            self._busy.discard(self._key(item))
            self._changed.notify_all()
