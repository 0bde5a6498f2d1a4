"""LocalBackend: correlation over the embedded receiver (in-process and over HTTP)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from clawspec.config.settings import Settings
from clawspec.evidence.spans import pending_subagents
from clawspec.evidence.trace_poll import poll_trace
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.backends.local import LocalBackend
from clawspec.traces.model import SpanType, TraceUnavailable
from clawspec.traces.otlp_json import ReceivedSpan
from clawspec.traces.receiver import OtlpReceiver

T0 = datetime(2026, 11, 22, 2, 0, 0, tzinfo=UTC)
NS = int(T0.timestamp() * 1e9)
TRACE_A = "a" * 32
TRACE_B = "b" * 32
CRON_KEY = "agent:main:cron:job-1:run:sess-1"


def settings(url: str | None) -> Settings:
    return Settings(observability={"backend": "local", "url": url})


def query(run_id: str = "run-1", **kw: Any) -> TraceQuery:
    values: dict[str, Any] = {
        "run_id": run_id,
        "session_key": f"hook:clawspec:{run_id}",
        "gateway_run_id": None,
        "started_at": T0,
        "ended_at": T0 + timedelta(seconds=5),
        "scenario": "s",
    }
    values.update(kw)
    return TraceQuery(**values)


def run_spans(trace: str, run: str, *, at_s: float = 1.0, logical: str | None = None):
    """A hook run: message → hook (logical key) + harness → run → model call + write tool."""
    start = NS + int(at_s * 1e9)
    p = trace[:4]
    ids = {name: f"{p}{i:012x}" for i, name in enumerate(("msg", "hook", "h", "run", "m", "w"))}
    session = {"openclaw.session_key": CRON_KEY.replace("job-1", run), "openclaw.run_id": run}
    spans = [
        ReceivedSpan(trace, ids["msg"], "openclaw.message", None, 1, start, start + 9),
        ReceivedSpan(trace, ids["h"], "openclaw.harness.run", ids["msg"], 1, start, start + 8),
        ReceivedSpan(trace, ids["run"], "openclaw.run", ids["h"], 1, start, start + 7, session),
        ReceivedSpan(
            trace,
            ids["m"],
            "openclaw.model.call",
            ids["run"],
            1,
            start + 1,
            start + 2,
            {**session, "gen_ai.request.model": "fake-model", "gen_ai.usage.input_tokens": 10},
        ),
        ReceivedSpan(
            trace,
            ids["w"],
            "openclaw.tool.execution",
            ids["run"],
            1,
            start + 3,
            start + 4,
            {**session, "gen_ai.tool.name": "write"},
            status_code=2,
            status_message="denied",
        ),
    ]
    if logical:
        spans.append(
            ReceivedSpan(
                trace,
                ids["hook"],
                "openclaw.hook",
                ids["msg"],
                1,
                start + 9,
                start + 9,
                {"session.id": logical, "openclaw.hook_run_id": f"hook-{run}"},
            )
        )
    return spans


@pytest.fixture
def receiver():
    with OtlpReceiver(0) as rec:
        yield rec


def backend(url: str | None, **kw: Any) -> LocalBackend:
    kw.setdefault("settle_ms", 0)
    return LocalBackend(settings(url), {}, **kw)


def test_exact_session_key_wins_over_a_concurrent_trace(receiver: OtlpReceiver) -> None:
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
    receiver.store.add(run_spans(TRACE_B, "r2", logical="hook:clawspec:run-2"))
    trace = backend(receiver.endpoint).find_trace(query("run-1"))
    assert trace is not None
    assert trace.id == TRACE_A and trace.backend == "local"
    assert {s.trace_id for s in trace.spans} == {TRACE_A}
    llm = trace.of_type(SpanType.LLM)
    assert [(s.model, s.input_tokens) for s in llm] == [("fake-model", 10)]
    tool = trace.of_type(SpanType.TOOL)[0]
    assert (tool.tool_name, tool.error) == ("write", "denied")
    assert trace.start_ms == pytest.approx(NS / 1e6 + 1000)
    other = backend(receiver.endpoint).find_trace(query("run-2"))
    assert other is not None and other.id == TRACE_B


def test_gateway_run_id_and_related_ids_are_exact_keys(receiver: OtlpReceiver) -> None:
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:other"))
    receiver.store.add(run_spans(TRACE_B, "r2"))
    by_hook_run = backend(receiver.endpoint).find_trace(query("x", gateway_run_id="hook-r1"))
    assert by_hook_run is not None and by_hook_run.id == TRACE_A
    # the gateway log's ids: the cron session key of the hook run
    related = frozenset({CRON_KEY.replace("job-1", "r2")})
    by_log = backend(receiver.endpoint).find_trace(query("y", related_ids=related))
    assert by_log is not None and by_log.id == TRACE_B
    by_trace_id = backend(receiver.endpoint).find_trace(
        query("z", related_ids=frozenset({TRACE_B}))
    )
    assert by_trace_id is not None and by_trace_id.id == TRACE_B


def _refused_attempt(trace: str, parent: str | None, logical: str) -> ReceivedSpan:
    """The hook span of an attempt the gateway refused before its run started."""
    attrs = {"session.id": logical, "openclaw.hook_run_id": "hook-refused"}
    start = NS + int(0.5e9)
    return ReceivedSpan(
        trace,
        f"{trace[:4]}{99:012x}",
        "openclaw.hook",
        parent,
        1,
        start,
        start,
        attrs,
        status_code=2,
        status_message="hook run error",
    )


def test_a_refused_attempt_in_another_runs_trace_is_not_the_run(receiver: OtlpReceiver) -> None:
    # OpenClaw logged the refusal inside another run's context (here r2's message span); the
    # retried attempt ran as hook-r1. Its session key is on both hook spans.
    receiver.store.add(run_spans(TRACE_A, "r1", at_s=2.0, logical="hook:clawspec:run-1"))
    receiver.store.add(run_spans(TRACE_B, "r2"))
    receiver.store.add([_refused_attempt(TRACE_B, f"{TRACE_B[:4]}{0:012x}", "hook:clawspec:run-1")])
    trace = backend(receiver.endpoint).find_trace(query("run-1", gateway_run_id="hook-r1"))
    assert trace is not None and {s.trace_id for s in trace.spans} == {TRACE_A}
    assert all(s.error is None for s in trace.spans if s.name == "openclaw.hook")
    # Without the hook run id the session key is all there is, and it names both traces.
    both = backend(receiver.endpoint).find_trace(query("run-1"))
    assert both is not None and {s.trace_id for s in both.spans} == {TRACE_A, TRACE_B}


def test_a_refused_attempt_in_its_own_trace_is_dropped(receiver: OtlpReceiver) -> None:
    # The plugin gives a hook that never started a trace of its own; the log index may still
    # tie its run id to the scenario (related ids). Its span is not part of the run.
    lone = "c" * 32
    receiver.store.add(run_spans(TRACE_A, "r1", at_s=2.0, logical="hook:clawspec:run-1"))
    receiver.store.add([_refused_attempt(lone, None, "hook:clawspec:run-1")])
    related = frozenset({"hook-refused"})
    trace = backend(receiver.endpoint).find_trace(
        query("run-1", gateway_run_id="hook-r1", related_ids=related)
    )
    assert trace is not None and trace.id == TRACE_A
    assert {s.trace_id for s in trace.spans} == {TRACE_A}
    assert all(s.error is None for s in trace.spans if s.name == "openclaw.hook")
    # Only the refused attempt known: nothing of the run to show.
    only = backend(receiver.endpoint).find_trace(
        query("run-9", gateway_run_id="hook-r9", related_ids=related)
    )
    assert only is None


def test_window_only_when_exactly_one_trace_matches(receiver: OtlpReceiver) -> None:
    receiver.store.add(run_spans(TRACE_A, "r1"))
    found = backend(receiver.endpoint).find_trace(query("unknown"))
    assert found is not None and found.id == TRACE_A
    receiver.store.add(run_spans(TRACE_B, "r2", at_s=2.0))
    assert backend(receiver.endpoint).find_trace(query("unknown")) is None
    outside = query("unknown", started_at=T0 + timedelta(hours=1), ended_at=T0 + timedelta(hours=2))
    assert backend(receiver.endpoint).find_trace(outside) is None


def test_not_found_is_none(receiver: OtlpReceiver) -> None:
    assert backend(receiver.endpoint).find_trace(query()) is None


def test_a_trace_still_receiving_spans_waits_until_settled(receiver: OtlpReceiver) -> None:
    now = [100.0]
    receiver.store._clock = lambda: now[0]
    spans = run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1")
    spawn = ReceivedSpan(
        TRACE_A,
        "c" * 16,
        "openclaw.tool.execution",
        spans[2].span_id,
        1,
        NS,
        NS,
        {"gen_ai.tool.name": "sessions_spawn"},
    )
    receiver.store.add([*spans, spawn])
    local = backend(receiver.endpoint, settle_ms=1000, max_settle_ms=10_000, clock=lambda: now[0])
    now[0] += 0.5
    assert local.find_trace(query()) is None  # spans arrived 0.5 s ago
    now[0] += 1.0
    # Quiet: returned, and the spawned sub-agent it lacks is what poll_trace waits for.
    quiet = local.find_trace(query())
    assert quiet is not None
    assert [p.split(" at ")[0] for p in pending_subagents(quiet)] == ["sub-agent spawned"]
    child = ReceivedSpan(
        TRACE_A,
        "d" * 16,
        "openclaw.run",
        spans[1].span_id,
        1,
        NS,
        NS,
        {"openclaw.session_key": "agent:main:subagent:u-1"},
    )
    receiver.store.add([child])
    now[0] += 1.5
    trace = local.find_trace(query())
    assert trace is not None and len(trace.spans) == len(spans) + 2
    assert pending_subagents(trace) == []


def test_an_unsettled_trace_is_returned_after_max_settle(receiver: OtlpReceiver) -> None:
    now = [100.0]
    receiver.store._clock = lambda: now[0]
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
    local = backend(receiver.endpoint, settle_ms=1000, max_settle_ms=3000, clock=lambda: now[0])
    assert local.find_trace(query()) is None
    now[0] += 3.0  # still "busy" by the receiver's clock? no: idle grows with it, and max passes
    assert local.find_trace(query()) is not None


def test_a_receiver_in_another_process_is_read_over_http(receiver: OtlpReceiver) -> None:
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
    endpoint = receiver.endpoint
    remote = backend(endpoint)
    # Pretend it is not ours: hide it from the in-process registry.
    from clawspec.traces import receiver as module

    with module._REGISTRY_LOCK:
        del module._REGISTRY[endpoint]
    try:
        trace = remote.find_trace(query())
    finally:
        with module._REGISTRY_LOCK:
            module._REGISTRY[endpoint] = receiver
    assert trace is not None and trace.id == TRACE_A
    assert trace.of_type(SpanType.TOOL)[0].error == "denied"


def test_unreachable_receiver_is_unavailable() -> None:
    with OtlpReceiver(0) as gone:
        url = gone.endpoint
    with pytest.raises(TraceUnavailable, match="unreachable"):
        backend(url).find_trace(query())


def test_without_url_the_only_running_receiver_is_used(receiver: OtlpReceiver) -> None:
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
    trace = backend(None).find_trace(query())
    assert trace is not None and trace.id == TRACE_A


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_run_receiver_starts_on_a_free_configured_loopback_url() -> None:
    from clawspec.gateway.managed import trace_receiver, uses_local_backend
    from clawspec.traces.receiver import running_receiver

    url = f"http://127.0.0.1:{_free_port()}"
    config = settings(url)
    assert uses_local_backend(config)
    with trace_receiver(config) as endpoint:
        assert endpoint == url
        assert running_receiver(url) is not None
    assert running_receiver(url) is None


def test_run_receiver_reuses_one_already_listening(receiver: OtlpReceiver) -> None:
    from clawspec.gateway.managed import trace_receiver

    with trace_receiver(settings(receiver.endpoint + "/v1/traces")) as endpoint:
        assert endpoint == receiver.endpoint
    assert receiver.store is not None  # still running: not ours to stop
    from clawspec.traces.receiver import running_receiver

    assert running_receiver(receiver.endpoint) is receiver


def test_default_backend_is_local_only_in_bring_up_mode() -> None:
    from clawspec.gateway.managed import uses_local_backend

    assert uses_local_backend(Settings(gateway={"mode": "bring_up"}))
    assert not uses_local_backend(Settings())
    assert not uses_local_backend(
        Settings(gateway={"mode": "bring_up"}, observability={"backend": "none"})
    )


def test_spans_of_other_sessions_in_the_runs_trace_are_not_the_scenarios(
    receiver: OtlpReceiver,
) -> None:
    """A heartbeat of the main session may inherit the hook's trace id: its failing message span
    and its model call must not reach the scenario's trace; the run's sub-agent (nested two
    levels, one through the ACP runtime) does."""
    spans = run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1")
    hook = next(s for s in spans if s.name == "openclaw.hook")
    run = next(s for s in spans if s.name == "openclaw.run")
    cron = {"openclaw.session_key": CRON_KEY.replace("job-1", "r1")}
    spans[spans.index(hook)] = ReceivedSpan(
        hook.trace_id, hook.span_id, hook.name, hook.parent_span_id, 1, hook.start_ns,
        hook.end_ns, {**hook.attributes, **cron},
    )  # fmt: skip
    main = {"openclaw.session_key": "agent:main:main", "openclaw.session_id": "heartbeat"}
    child = {"openclaw.session_key": "agent:brand:subagent:u1", "openclaw.session_id": "c1"}
    grandchild = {"openclaw.session_key": "agent:legal:acp:u2", "openclaw.session_id": "c2"}
    extra = [
        ReceivedSpan(TRACE_A, "e" * 16, "openclaw.message", spans[0].span_id, 1, NS, NS + 5,
                     main, status_code=2, status_message="heartbeat failed"),
        ReceivedSpan(TRACE_A, "f" * 16, "openclaw.model.call", "e" * 16, 1, NS, NS + 4, main),
        ReceivedSpan(TRACE_A, "1" * 16, "openclaw.run", run.span_id, 1, NS, NS + 3, child),
        ReceivedSpan(TRACE_A, "2" * 16, "openclaw.model.call", "1" * 16, 1, NS, NS + 2, child),
        ReceivedSpan(TRACE_A, "3" * 16, "openclaw.run", "1" * 16, 1, NS, NS + 2, grandchild),
    ]  # fmt: skip
    receiver.store.add([*spans, *extra])
    trace = poll_trace(backend(receiver.endpoint), query(), delay_ms=0, timeout_ms=1000)
    ids = {span.id for span in trace.spans}
    assert "e" * 16 not in ids and "f" * 16 not in ids  # the heartbeat and its model call
    assert {"1" * 16, "2" * 16, "3" * 16} <= ids  # the sub-agents, at any depth
    assert len(trace.spans) == len(spans) + 3
    assert not [span for span in trace.spans if span.error == "heartbeat failed"]
