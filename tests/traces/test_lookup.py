"""poll_trace: found after some polls, a deadline, outages at once, the run's stop event."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.lookup import poll_trace
from clawspec.traces.model import Span, SpanType, Trace, TraceUnavailable

QUERY = TraceQuery(
    run_id="run0000000000001",
    session_key="hook:clawspec:run0000000000001",
    gateway_run_id="gw-1",
    started_at=datetime(2026, 1, 5, 9, 0, tzinfo=UTC),
    ended_at=datetime(2026, 1, 5, 9, 1, tzinfo=UTC),
    scenario="smoke",
)
TRACE = Trace("t1", "fake", (Span("s1", "t1", "openclaw.model.call", SpanType.LLM),))


class FakeClock:
    """A clock that advances only when the poller waits (through the stop event)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ClockedStop(threading.Event):
    """A stop event whose wait advances the fake clock instead of sleeping."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout or 0.0)
        self.clock.now += timeout or 0.0
        return self.is_set()


class Backend:
    """Answers from a script: a Trace, None (not there yet) or an exception to raise."""

    name = "fake"

    def __init__(self, *answers: Trace | Exception | None) -> None:
        self.answers = list(answers)
        self.queries: list[TraceQuery] = []

    def find_trace(self, query: TraceQuery) -> Trace | None:
        self.queries.append(query)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def poll(backend: Backend, timeout_ms: int = 10_000, delay_ms: int = 500):
    clock = FakeClock()
    stop = ClockedStop(clock)
    return poll_trace(
        backend, QUERY, delay_ms=delay_ms, timeout_ms=timeout_ms, stop=stop, clock=clock
    ), stop


def test_poll_trace_returns_the_trace_found_after_some_polls_with_doubling_waits() -> None:
    backend = Backend(None, None, TRACE)
    trace, stop = poll(backend)
    assert trace is TRACE
    assert len(backend.queries) == 3
    assert stop.waits == [0.5, 1.0]
    assert backend.queries[0] is QUERY


def test_poll_trace_treats_a_trace_without_spans_as_not_there_yet() -> None:
    empty = Trace("t1", "fake", ())
    trace, _ = poll(Backend(empty, TRACE))
    assert trace is TRACE


def test_poll_trace_gives_up_at_the_deadline_with_the_reason() -> None:
    backend = Backend(None)
    clock = FakeClock()
    stop = ClockedStop(clock)
    with pytest.raises(TraceUnavailable) as raised:
        poll_trace(backend, QUERY, delay_ms=500, timeout_ms=3000, stop=stop, clock=clock)
    assert raised.value.reason == (
        "no trace found in 'fake' for run run0000000000001 "
        "(session key hook:clawspec:run0000000000001) after 4 attempts in 3 s"
    )
    assert stop.waits == [0.5, 1.0, 1.5]  # the last wait is cut to the deadline


def test_poll_trace_raises_an_outage_at_once_without_polling_again() -> None:
    backend = Backend(TraceUnavailable("trace backend 'fake' unreachable: connection refused"))
    with pytest.raises(TraceUnavailable, match="connection refused"):
        poll(backend)
    assert len(backend.queries) == 1


def test_poll_trace_stops_polling_when_the_run_is_interrupted() -> None:
    backend = Backend(None)
    clock = FakeClock()
    stop = ClockedStop(clock)
    stop.set()
    with pytest.raises(TraceUnavailable, match="after 1 attempt in 30 s"):
        poll_trace(backend, QUERY, delay_ms=500, timeout_ms=30_000, stop=stop, clock=clock)
    assert len(backend.queries) == 1
    assert stop.waits == []
