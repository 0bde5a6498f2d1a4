"""Run lanes: starts on the lane threads, checks on their own threads, bounded, never queued."""

from __future__ import annotations

import threading
import time

from clawspec.runner.lanes import RunLanes, worker_count


class Recorder:
    """Items 0..n-1; starts take `start_s`, checks wait until `release` (or `check_s`)."""

    def __init__(self, n: int, start_s: float = 0.0, check_s: float = 0.0) -> None:
        self.items = list(range(n))
        self.start_s, self.check_s = start_s, check_s
        self.lock = threading.Lock()
        self.events: list[tuple[str, int, str, float]] = []
        self.starting = self.most_starting = 0
        self.unchecked = self.most_unchecked = 0
        self.release = threading.Event()

    def next_item(self) -> int | None:
        with self.lock:
            return self.items.pop(0) if self.items else None

    def start(self, item: int) -> str:
        with self.lock:
            self.starting += 1
            self.unchecked += 1
            self.most_starting = max(self.most_starting, self.starting)
            self.most_unchecked = max(self.most_unchecked, self.unchecked)
            self.events.append(("start", item, threading.current_thread().name, time.monotonic()))
        time.sleep(self.start_s)
        with self.lock:
            self.starting -= 1
        return f"started {item}"

    def check(self, item: int, started: str) -> None:
        assert started == f"started {item}"
        now = time.monotonic()
        with self.lock:
            self.events.append(("check", item, threading.current_thread().name, now))
        if self.check_s:
            self.release.wait(self.check_s)
        with self.lock:
            self.unchecked -= 1

    def run(self, concurrency: int) -> None:
        lanes = RunLanes(concurrency, self.next_item, self.start, self.check)
        threads = lanes.threads(len(self.items))
        assert len(threads) == worker_count(concurrency, len(self.items))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert not any(thread.is_alive() for thread in threads)

    def of(self, kind: str) -> dict[int, tuple[str, float]]:
        return {item: (name, at) for k, item, name, at in self.events if k == kind}


def test_every_item_is_started_on_a_lane_and_checked_on_a_checking_thread() -> None:
    recorder = Recorder(20, start_s=0.01)
    recorder.run(4)
    starts, checks = recorder.of("start"), recorder.of("check")
    assert sorted(starts) == sorted(checks) == list(range(20))
    assert {name for name, _ in starts.values()} <= {f"clawspec-{i}" for i in range(4)}
    assert all(name.startswith("clawspec-check-") for name, _ in checks.values())
    assert recorder.most_starting == 4  # the gateway never sees more than `concurrency` runs


def test_slow_checks_neither_queue_nor_hold_up_the_next_runs() -> None:
    # Checks that hold until released: the lanes go on starting runs while the checks wait,
    # and each check begins as soon as its run is done (there is a thread for it). Told by
    # the order of events, not by timing them.
    recorder = Recorder(8, check_s=600)
    runner = threading.Thread(target=recorder.run, args=(2,), daemon=True)
    runner.start()
    for _ in range(6000):  # until four checks have begun (a guard against a hang, not a bound)
        with recorder.lock:
            if len(recorder.of("check")) == 4:
                break
        time.sleep(0.01)
    time.sleep(0.2)  # a lane that wrongly ran ahead would start item 4 in this time
    with recorder.lock:
        begun = sorted(recorder.of("check"))
        started = sorted(recorder.of("start"))
        unchecked = recorder.unchecked
    recorder.release.set()
    runner.join(60)
    # s2 and s3 started, and the checks of s0..s3 began, while no check had ended ...
    assert (begun, started, unchecked) == ([0, 1, 2, 3], [0, 1, 2, 3], 4)
    # ... but the lanes do not run ahead of the checks without bound: twice the concurrency.
    assert recorder.most_unchecked == 4
    assert not runner.is_alive() and sorted(recorder.of("check")) == list(range(8))


def test_concurrency_one_checks_each_item_before_starting_the_next() -> None:
    recorder = Recorder(4, check_s=0.05)
    recorder.run(1)
    order = [(kind, item) for kind, item, _, _ in recorder.events]
    assert order == [(kind, i) for i in range(4) for kind in ("start", "check")]
    assert {name for _, _, name, _ in recorder.events} == {"clawspec-0"}


def test_fewer_items_than_lanes_use_fewer_threads() -> None:
    assert worker_count(16, 3) == 9
    assert worker_count(16, 1000) == 48
    assert worker_count(1, 1000) == 1
    recorder = Recorder(3)
    recorder.run(16)
    assert sorted(recorder.of("check")) == [0, 1, 2]
