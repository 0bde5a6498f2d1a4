"""A clock and a sleep for code that takes both injected: the sleep advances the clock and is
recorded, so a schedule of waits is checked without any real time passing. `FakeStop` is the
same for code that waits on a stop event (`stop.wait(seconds)`) and reads an injected clock."""

from __future__ import annotations

import threading


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


class FakeStop(threading.Event):
    """A stop event whose waits return at once, move `clock` on by what they waited and are
    recorded (`pauses`): what a check waited is told by these, not by timing it."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None, "a wait without a bound"
        self.pauses.append(timeout)
        self.now += timeout
        return self.is_set()
