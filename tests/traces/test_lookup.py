"""poll_trace: found after some polls, a deadline, outages at once, the run's stop event."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from clawspec.evidence.trace_poll import poll_trace
from clawspec.traces.backends.base import TraceQuery
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


# -- late sub-agents: a spawn without its child is waited for, then reported, never ignored ----


def _spawning(*, child: str | None, child_done: bool = True) -> Trace:
    """The parent's run with one successful `sessions_spawn` (called through Tool Search's
    `tool_call`, as with OpenClaw's default), and its child's spans if `child` is given."""
    parent = {"openclaw.session_key": "agent:main:cron:j1:run:s1"}
    spans = [
        Span("run", "t1", "openclaw.run", SpanType.AGENT, attributes=parent, start_ms=1.0),
        Span("w", "t1", "openclaw.tool.execution", SpanType.TOOL, "run", 2.0,
             tool_name="tool_call", attributes={"gen_ai.tool.call.id": "call_1"}),
        Span("sp", "t1", "openclaw.tool.execution", SpanType.TOOL, "run", 3.0,
             tool_name="sessions_spawn",
             attributes={"gen_ai.tool.call.id": "tool_search_code:call_1:sessions_spawn:1"}),
    ]  # fmt: skip
    if child:
        key = {"openclaw.session_key": f"agent:{child}:subagent:u1"}
        spans.append(Span("cm", "t1", "openclaw.model.call", SpanType.LLM, "run", 4.0,
                          attributes=key))  # fmt: skip
        if child_done:
            spans.append(Span("cr", "t1", "openclaw.run", SpanType.AGENT, "run", 4.0,
                              agent_name=child, attributes=key))  # fmt: skip
    return Trace("t1", "fake", tuple(spans))


def _poll_with_wait(backend: Backend, wait_s: float) -> tuple[Trace, ClockedStop]:
    from dataclasses import replace

    clock = FakeClock()
    stop = ClockedStop(clock)
    query = replace(QUERY, wait_s=wait_s)
    return poll_trace(backend, query, delay_ms=500, timeout_ms=3000, stop=stop, clock=clock), stop


def test_a_spawned_sub_agent_that_never_shows_up_is_waited_for_then_reported_pending() -> None:
    backend = Backend(_spawning(child=None))
    trace, stop = _poll_with_wait(backend, wait_s=20.0)
    assert sum(stop.waits) == pytest.approx(20.0)  # the scenario's window, not trace_timeout
    assert len(trace.pending) == 1
    assert trace.pending[0].startswith("sub-agent spawned at 1970-01-01T00:00:00.003+00:00 ")
    assert trace.pending[0].endswith("never appeared in the trace (waited 20.0 s)")


def test_a_sub_agent_that_started_but_did_not_finish_is_pending() -> None:
    trace, _ = _poll_with_wait(Backend(_spawning(child="brand", child_done=False)), wait_s=4.0)
    assert trace.pending == (
        "sub-agent session 'agent:brand:subagent:u1' did not finish (waited 4.0 s)",
    )


def test_a_late_sub_agent_is_waited_for_and_then_the_trace_is_complete() -> None:
    late = _spawning(child="brand")
    backend = Backend(_spawning(child=None), _spawning(child="brand", child_done=False), late)
    trace, _ = _poll_with_wait(backend, wait_s=60.0)
    assert trace is late and trace.pending == ()
    assert len(backend.queries) == 3


def test_a_trace_without_spawns_is_returned_at_once() -> None:
    trace, stop = _poll_with_wait(Backend(TRACE), wait_s=60.0)
    assert trace is TRACE and stop.waits == []


# -- the trace timeout is a deadline for the whole loop, every request included ------------------


class _Timed(Backend):
    """Records, at each attempt, the fake time elapsed and the real time left to its requests."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(None)
        self.clock = clock
        self.started = clock.now
        self.seen: list[tuple[float, float]] = []

    def find_trace(self, query: TraceQuery) -> Trace | None:
        from clawspec.net.deadline import tightest

        deadline = tightest(None)
        assert deadline is not None and deadline.limit == "the trace timeout (4 s)"
        self.seen.append((self.clock.now - self.started, deadline.remaining()))
        return super().find_trace(query)


def test_every_request_of_the_poll_gets_only_what_is_left_of_the_trace_timeout() -> None:
    from clawspec.net.deadline import tightest

    clock = FakeClock()
    backend = _Timed(clock)
    with pytest.raises(TraceUnavailable):
        poll_trace(
            backend, QUERY, delay_ms=500, timeout_ms=4000, stop=ClockedStop(clock), clock=clock
        )
    assert [at for at, _ in backend.seen] == [0.0, 0.5, 1.5, 3.5, 4.0]  # a last look at 4 s
    for at, left in backend.seen:  # e.g. the attempt at 3.5 s may take 0.5 s, not more
        assert left == pytest.approx(4 - at, abs=0.2)
    assert tightest(None) is None  # the deadline ends with the poll
