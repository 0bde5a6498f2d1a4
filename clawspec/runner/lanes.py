"""Run lanes: `concurrency` threads that only start agent runs, twice as many that check them.

A lane thread starts a scenario (preconditions, invocation), hands it to a checking thread as
soon as the gateway answers, and goes straight on to the next scenario's run: the gateway never
sees more than `concurrency` runs at once, and ClawSpec's checks never keep it waiting. It is
the shape of a bare loop of hook requests: the thread that read an answer sends the next
request. Handing the freed run to another thread instead cost a thread wake-up and a wait for
the interpreter lock on every run (about 2.5 ms a run at concurrency 16).

At most twice `concurrency` scenarios are started and not yet checked, and there is a checking
thread for each: a scenario's checks start the moment its run answers, never queue behind
others'. When checks are slow (file timeouts, the judge), the lanes wait for them rather than
run ahead. With `concurrency: 1` scenarios stay strictly one after another (each one's checks
end before the next run starts): a suite that runs one at a time may rely on that.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

Item = TypeVar("Item")
Started = TypeVar("Started")


def worker_count(concurrency: int, attempts: int) -> int:
    """Threads a run uses: its lanes and twice as many checking threads (one at concurrency 1)."""
    lanes, checkers = _threads(concurrency, attempts)
    return lanes + checkers


def _threads(concurrency: int, attempts: int) -> tuple[int, int]:
    """(lanes, checking threads): at concurrency 1 the one lane checks its own scenarios."""
    lanes = max(1, min(concurrency, attempts))
    return lanes, 0 if concurrency <= 1 else 2 * lanes


class RunLanes(Generic[Item, Started]):
    """Start items on `concurrency` lane threads, check them on others; `threads()` to run."""

    def __init__(
        self,
        concurrency: int,
        next_item: Callable[[], Item | None],
        start: Callable[[Item], Started],
        check: Callable[[Item, Started], None],
        thread_ended: Callable[[], None] = lambda: None,
        failed: Callable[[BaseException, Item | None], None] | None = None,
    ) -> None:
        self._concurrency = max(1, concurrency)
        self._next_item = next_item  # None: nothing more to start
        self._start = start
        self._check = check
        self._thread_ended = thread_ended
        # A thread that raises hands the exception (and the item it held) to `failed` and
        # ends; nothing goes to threading's excepthook, which would print a raw traceback.
        self._failed = failed
        self._to_check: queue.SimpleQueue[tuple[Item, Started] | None] = queue.SimpleQueue()
        self._unchecked = threading.Semaphore(2 * self._concurrency)
        self._lock = threading.Lock()
        self._lanes_left = 0
        self._checkers = 0

    def threads(self, attempts: int) -> list[threading.Thread]:
        """The threads of a run of `attempts` items (daemons, not started yet)."""
        lanes, self._checkers = _threads(self._concurrency, attempts)
        inline = self._checkers == 0
        self._lanes_left = lanes
        # Daemon threads: an abandoned scenario blocked in a long HTTP wait must not keep the
        # process alive after the reports are written.
        return [
            threading.Thread(target=self._lane, args=(inline,), daemon=True, name=f"clawspec-{i}")
            for i in range(lanes)
        ] + [
            threading.Thread(target=self._checker, daemon=True, name=f"clawspec-check-{i}")
            for i in range(self._checkers)
        ]

    def _lane(self, inline: bool) -> None:
        item: Item | None = None
        try:
            while True:
                self._unchecked.acquire()  # no running ahead of slow checks
                item = self._next_item()
                if item is None:
                    self._unchecked.release()
                    return
                started = self._start(item)
                if inline:
                    self._checked(item, started)
                else:
                    self._to_check.put((item, started))
                item = None
        except BaseException as exc:
            self._fail(exc, item)
        finally:
            with self._lock:
                self._lanes_left -= 1
                last = self._lanes_left == 0
            if last:  # nothing more will come: let the checking threads end
                for _ in range(self._checkers):
                    self._to_check.put(None)
            self._thread_ended()

    def _checker(self) -> None:
        entry: tuple[Item, Started] | None = None
        try:
            while (entry := self._to_check.get()) is not None:
                self._checked(*entry)
        except BaseException as exc:
            self._fail(exc, entry[0] if entry is not None else None)
        finally:
            self._thread_ended()

    def _fail(self, exc: BaseException, item: Item | None) -> None:
        if self._failed is None:
            raise exc
        self._failed(exc, item)

    def _checked(self, item: Item, started: Started) -> None:
        try:
            self._check(item, started)
        finally:
            self._unchecked.release()
