"""Run lanes: starts on the lane threads, checks on their own threads, bounded, never queued."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable

import pytest

from clawspec.runner import lanes
from clawspec.runner.lanes import RunLanes, worker_count


class Recorder:
    """Items 0..n-1; starts take `start_s`, checks wait until `release` (or `check_s`)."""

    def __init__(
        self, n: int, start_s: float = 0.0, check_s: float = 0.0, sends: bool = True
    ) -> None:
        self.items = list(range(n))
        # What net/watch.when_sent does for a lane: the callback its next request calls once
        # written. An item in `silent` (or every item, without `sends`) sends nothing.
        self.sends, self.silent = sends, set[int]()
        self.blocked: dict[int, threading.Event] = {}  # items whose start waits, sending nothing
        self._sent = threading.local()
        self.start_s, self.check_s = start_s, check_s
        self.lock = threading.Lock()
        self.events: list[tuple[str, int, str, float]] = []
        self.starting = self.most_starting = 0
        self.unchecked = self.most_unchecked = 0
        self.release = threading.Event()

    def next_item(self, waiting: Callable[[], None]) -> int | None:
        with self.lock:
            return self.items.pop(0) if self.items else None

    def start(self, item: int) -> str:
        with self.lock:
            self.starting += 1
            self.unchecked += 1
            self.most_starting = max(self.most_starting, self.starting)
            self.most_unchecked = max(self.most_unchecked, self.unchecked)
            self.events.append(("start", item, threading.current_thread().name, time.monotonic()))
        time.sleep(self.start_s)  # what comes before the request: rendering, preconditions
        if item in self.blocked:
            self.blocked[item].wait(60)
        elif self.sends and item not in self.silent:
            with self.lock:  # told before the callback: a check it lets go of comes after
                self.events.append(("sent", item, threading.current_thread().name, 0.0))
            callback, self._sent.callback = getattr(self._sent, "callback", None), None
            if callback is not None:
                callback()
        time.sleep(self.start_s)  # waiting for the answer
        with self.lock:
            self.starting -= 1
            self.events.append(("returned", item, threading.current_thread().name, 0.0))
        return f"started {item}"

    def when_sent(self, callback: Callable[[], None] | None) -> None:
        self._sent.callback = callback

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
        lanes = RunLanes(
            concurrency, self.next_item, self.start, self.check, when_sent=self.when_sent
        )
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


@pytest.mark.parametrize(("items", "silent"), [(12, set()), (4, {2})])
def test_checks_begin_once_the_lanes_next_request_is_sent_or_never_will_be(
    monkeypatch: pytest.MonkeyPatch, items: int, silent: set[int]
) -> None:
    # A lane's next request goes out before the last scenario's checks take the interpreter
    # lock. With an endless bound, only the lane lets a check begin: once its next item's
    # request is written, once a start returns without sending one (item 2), or when nothing
    # is left. A lane that never let go would leave a check waiting: run() fails. (Few items
    # where one is silent: the unchecked scenarios never reach their bound, where a lane lets
    # go rather than wait.)
    monkeypatch.setattr(lanes, "HANDOFF_WAIT_S", 600)
    recorder = Recorder(items, start_s=0.05)
    recorder.silent = silent
    recorder.run(2)
    assert sorted(recorder.of("check")) == list(range(items))
    at = {(kind, item): n for n, (kind, item, _, _) in enumerate(recorder.events)}
    by_lane: dict[str, list[int]] = {}
    for kind, item, lane, _ in recorder.events:
        if kind == "start":
            by_lane.setdefault(lane, []).append(item)
    pairs = [pair for lane_items in by_lane.values() for pair in itertools.pairwise(lane_items)]
    assert len(pairs) == items - 2
    for item, following in pairs:
        let_go = at[("returned" if following in silent else "sent", following)]
        assert at[("check", item)] > let_go, (item, following, recorder.events)


def test_a_lane_that_pauses_before_its_next_request_holds_no_check_for_long() -> None:
    # Item 2's start waits (a precondition polling for a file, say) and sends nothing: the
    # check of the lane's item before it begins anyway, after HANDOFF_WAIT_S. Told by order.
    recorder = Recorder(3)
    recorder.blocked[2] = threading.Event()
    runner = threading.Thread(target=recorder.run, args=(2,), daemon=True)
    runner.start()
    for _ in range(6000):  # until both checks began (a guard against a hang, not a bound)
        with recorder.lock:
            if len(recorder.of("check")) == 2:
                break
        time.sleep(0.01)
    with recorder.lock:
        begun, returned = sorted(recorder.of("check")), sorted(recorder.of("returned"))
    recorder.blocked[2].set()
    runner.join(60)
    assert (begun, returned) == ([0, 1], [0, 1])  # item 2 still waiting
    assert sorted(recorder.of("check")) == [0, 1, 2]


def test_a_lane_waiting_for_its_next_item_lets_its_last_checks_begin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Repeats of one scenario: the next attempt waits until the last one is checked (as
    # runner/work.py hands them out). The lane says it waits, so the check it holds back
    # begins: without that, each attempt would wait for the bound (here endless: run() fails).
    monkeypatch.setattr(lanes, "HANDOFF_WAIT_S", 600)
    recorder = Recorder(4)
    checked = threading.Condition()
    done: set[int] = set()
    plain_check = recorder.check

    def check(item: int, started: str) -> None:
        plain_check(item, started)
        with checked:
            done.add(item)
            checked.notify_all()

    def next_item(waiting: Callable[[], None]) -> int | None:
        with recorder.lock:
            item = recorder.items.pop(0) if recorder.items else None
        if item is not None and item > 0:
            with checked:
                if item - 1 not in done:
                    waiting()
                    checked.wait_for(lambda: item - 1 in done, 60)
        return item

    recorder.check = check  # type: ignore[method-assign]
    recorder.next_item = next_item  # type: ignore[method-assign]
    recorder.run(2)
    assert done == {0, 1, 2, 3}
    assert [item for kind, item, _, _ in recorder.events if kind == "check"] == [0, 1, 2, 3]


def test_concurrency_one_checks_each_item_before_starting_the_next() -> None:
    recorder = Recorder(4, check_s=0.05, sends=False)
    recorder.run(1)
    order = [(kind, item) for kind, item, _, _ in recorder.events if kind != "returned"]
    assert order == [(kind, i) for i in range(4) for kind in ("start", "check")]
    assert {name for _, _, name, _ in recorder.events} == {"clawspec-0"}


def test_fewer_items_than_lanes_use_fewer_threads() -> None:
    assert worker_count(16, 3) == 9
    assert worker_count(16, 1000) == 48
    assert worker_count(1, 1000) == 1
    recorder = Recorder(3)
    recorder.run(16)
    assert sorted(recorder.of("check")) == [0, 1, 2]
