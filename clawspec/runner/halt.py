"""The run's `halt` signal, and each scenario's own stop, which `halt` sets too.

What a scenario waits for (log lines, its run's record, traces, the judge's backoff) ends early
once its `EvalContext.stop` is set. The run sets `halt` when it abandons the scenarios still
running (a second interrupt, the end of the grace period); a scenario's stop is also set by the
scenario's own business: a model call that replay could not answer (its verdicts no longer
count, so nothing it waits for is worth the wait). A wait can be on one event only, so each
scenario gets an event of its own that `halt` sets with itself, rather than an object that
polls two.
"""

from __future__ import annotations

import threading
import weakref


class Halt(threading.Event):
    """An event that, when set, also sets every scenario stop made from it."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        # Weak: a scenario's stop lives as long as the scenario's state, not as long as the run.
        self._stops: weakref.WeakSet[threading.Event] = weakref.WeakSet()

    def scenario_stop(self) -> threading.Event:
        """A new stop for one scenario: set when the run halts (already set if it has), or by
        whatever ends the scenario's waits on its own."""
        stop = threading.Event()
        with self._lock:
            self._stops.add(stop)
            if self.is_set():
                stop.set()
        return stop

    def set(self) -> None:
        with self._lock:
            super().set()
            stops = list(self._stops)
        for stop in stops:
            stop.set()
