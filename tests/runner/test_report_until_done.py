"""The reporting loop reports every finished scenario, whenever its worker ends.

A worker adds its scenario to `finished` and then ends. Whichever look at the threads comes
first to see that end, the scenario must still reach `report` (the terminal's progress line):
the fake thread below finishes its last scenario and ends exactly during the n-th look.
"""

from __future__ import annotations

import threading

import pytest

from clawspec.runner.run import _Either, _report_until_done


class EndingWorker:
    """A thread stand-in that finishes scenario `last` and ends during its `ends_at`-th look."""

    def __init__(self, finished: list[int], last: int, ends_at: int) -> None:
        self.finished = finished
        self.last = last
        self.ends_at = ends_at
        self.looks = 0

    def is_alive(self) -> bool:
        self.looks += 1
        if self.looks < self.ends_at:
            return True
        if self.looks == self.ends_at:
            self.finished.append(self.last)  # finished, then ended: seen ended by this look
        return False


@pytest.mark.parametrize("ends_at", [1, 2, 3, 4])
def test_a_scenario_finished_as_the_last_worker_ends_is_reported(ends_at: int) -> None:
    done = threading.Condition()
    finished = [0]  # one scenario already waiting to be reported
    worker = EndingWorker(finished, last=1, ends_at=ends_at)
    reported: list[int] = []

    _report_until_done(
        [worker],  # type: ignore[list-item]
        done,
        finished,
        reported.append,
        _Either(threading.Event()),
        threading.Event(),
        halt := threading.Event(),
    )

    assert reported == [0, 1]
    assert finished == []
    assert not halt.is_set()  # nothing was abandoned
    assert worker.looks >= ends_at  # the worker's end was seen, not skipped


def test_two_workers_each_ending_with_a_scenario_are_both_reported() -> None:
    done = threading.Condition()
    finished: list[int] = []
    first = EndingWorker(finished, last=3, ends_at=1)
    second = EndingWorker(finished, last=7, ends_at=2)
    reported: list[int] = []

    _report_until_done(
        [first, second],  # type: ignore[list-item]
        done,
        finished,
        reported.append,
        _Either(threading.Event()),
        threading.Event(),
        threading.Event(),
    )

    assert sorted(reported) == [3, 7]


class RunningWorker:
    """A thread stand-in that never ends (a scenario still running)."""

    def is_alive(self) -> bool:
        return True


def test_abandoning_the_running_scenarios_halts_their_waits_and_reads() -> None:
    # The first interrupt (`stop`) alone halts nothing: the running scenario goes on.
    stop, abandon, halt = threading.Event(), threading.Event(), threading.Event()
    stop.set()
    abandon.set()  # the second signal
    _report_until_done(
        [RunningWorker()],  # type: ignore[list-item]
        threading.Condition(),
        [],
        lambda _index: None,
        _Either(stop),
        abandon,
        halt,
    )
    assert halt.is_set()
