"""A clock and a sleep for code that takes both injected: the sleep advances the clock and is
recorded, so a schedule of waits is checked without any real time passing."""

from __future__ import annotations


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
