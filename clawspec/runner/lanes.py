"""Run lanes: `concurrency` threads that only start agent runs, twice as many that check them.

A lane thread starts a scenario (preconditions, invocation), hands it to a checking thread as
soon as the gateway answers, and goes straight on to the next scenario's run: the gateway never
sees more than `concurrency` runs at once, and ClawSpec's checks never keep it waiting. It is
the shape of a bare loop of hook requests: the thread that read an answer sends the next
request. Handing the freed run to another thread instead cost a thread wake-up and a wait for
the interpreter lock on every run (about 2.5 ms a run at concurrency 16).

At most twice `concurrency` scenarios are started and not yet checked, and there is a checking
thread for each: a scenario's checks never queue behind others'. They start once the lane's
next request is on its way (`when_sent`), at most `HANDOFF_WAIT_S` after the run answered: a
check begun at once is CPU work on another thread at the very moment the lane needs the
interpreter lock to send that request, and delayed each run's next one by 1-3 ms (measured
with the gateway fake's timeline, `docs/internals.md`). When checks are slow (file
timeouts, the judge), the lanes wait for them rather than run ahead. With `concurrency: 1`
scenarios stay strictly one after another (each one's checks end before the next run starts):
a suite that runs one at a time may rely on that.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

# The longest a scenario's checks wait for its lane's next request to be sent: a lane may
# pause first (a `given` precondition waiting for a file, a spend limit reached).
HANDOFF_WAIT_S = 0.05

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
        next_item: Callable[[Callable[[], None]], Item | None],
        start: Callable[[Item], Started],
        check: Callable[[Item, Started], None],
        thread_ended: Callable[[], None] = lambda: None,
        failed: Callable[[BaseException, Item | None], None] | None = None,
        when_sent: Callable[[Callable[[], None] | None], None] | None = None,
    ) -> None:
        self._concurrency = max(1, concurrency)
        # None: nothing more to start. Its argument is to be called before it waits for an item
        # (say, for a running attempt of the same scenario to be checked).
        self._next_item = next_item
        self._start = start
        self._check = check
        self._thread_ended = thread_ended
        # A thread that raises hands the exception (and the item it held) to `failed` and
        # ends; nothing goes to threading's excepthook, which would print a raw traceback.
        self._failed = failed
        # Calls its argument once this thread's next request is written (net/watch.when_sent);
        # None: checks start as soon as the run answered (no scenario is held back).
        self._holds = when_sent is not None
        self._when_sent = when_sent or _forget
        self._to_check: queue.SimpleQueue[_Handed[Item, Started] | None] = queue.SimpleQueue()
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
        held: threading.Event | None = None  # set: the last scenario handed over may be checked
        try:
            while True:
                if not self._unchecked.acquire(blocking=False):  # no running ahead of slow checks
                    _let_go(held)  # nothing is sent while this lane waits
                    held = None
                    self._unchecked.acquire()
                item = self._next_item(held.set if held is not None else _nothing)
                if item is None:
                    self._unchecked.release()
                    return
                if held is not None:
                    self._when_sent(held.set)
                started = self._start(item)
                if held is not None:
                    # Set when the request was written; else nothing was sent (a precondition
                    # failed, the provider is down, ...) and nothing will be soon.
                    self._when_sent(None)
                    held.set()
                if inline:
                    self._checked(item, started)
                else:
                    held = threading.Event() if self._holds else None
                    self._to_check.put((item, started, held))
                item = None
        except BaseException as exc:
            self._fail(exc, item)
        finally:
            _let_go(held)
            with self._lock:
                self._lanes_left -= 1
                last = self._lanes_left == 0
            if last:  # nothing more will come: let the checking threads end
                for _ in range(self._checkers):
                    self._to_check.put(None)
            self._thread_ended()

    def _checker(self) -> None:
        entry: _Handed[Item, Started] | None = None
        try:
            while (entry := self._to_check.get()) is not None:
                if entry[2] is not None:
                    entry[2].wait(HANDOFF_WAIT_S)
                self._checked(entry[0], entry[1])
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


# A scenario handed to the checking threads, and the event its checks wait for (None: none).
_Handed = tuple[Item, Started, threading.Event | None]


def _nothing() -> None:
    pass


def _forget(callback: Callable[[], None] | None) -> None:
    pass


def _let_go(held: threading.Event | None) -> None:
    """Let the checks of the scenario `held` back begin now."""
    if held is not None:
        held.set()
