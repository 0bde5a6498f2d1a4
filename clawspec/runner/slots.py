"""Run slots: `concurrency` bounds the agent runs in flight, not the checks around them.

A scenario holds a slot from its start (preconditions, invocation) until the gateway answers,
then gives it back and checks its `then` assertions while the next scenario's agent already
runs. The gateway never sees more than `concurrency` runs at once; ClawSpec's own work between
two runs no longer leaves a slot idle (issue 14: the bare hook loop is the limit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def worker_count(concurrency: int, attempts: int) -> int:
    """Threads for a run: twice the slots, so a freed slot always has a scenario waiting.

    With `concurrency: 1` scenarios stay strictly one after another (each one's checks end
    before the next run starts): a suite that runs one at a time may rely on that.
    """
    wanted = concurrency if concurrency <= 1 else 2 * concurrency
    return max(1, min(wanted, attempts))


class Slot:
    """One held slot, given back once: when the invocation returns, or when the scenario ends."""

    def __init__(self, give_back: Callable[[], None]) -> None:
        self._give_back: Callable[[], None] | None = give_back

    def release(self) -> None:
        give_back, self._give_back = self._give_back, None
        if give_back is not None:
            give_back()


class RunSlots:
    """At most `size` slots held at once (only the worker holding a slot releases it)."""

    def __init__(self, size: int) -> None:
        self._free = threading.Semaphore(max(1, size))

    @contextmanager
    def hold(self) -> Iterator[Slot]:
        self._free.acquire()
        slot = Slot(self._free.release)
        try:
            yield slot
        finally:
            slot.release()
