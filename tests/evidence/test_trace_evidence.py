"""The scenario's trace as evidence: backend choice, one lookup per scenario, skips not crashes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from clawspec.assertions.base import RunInfo, Status
from clawspec.config.settings import Settings
from clawspec.evidence import trace as trace_evidence
from clawspec.evidence.store import Evidence, LogKey, RunBackend
from clawspec.evidence.trace import NO_BACKEND, make_backend, scenario_trace
from clawspec.gateway.logs.index import LogIndex
from clawspec.runner.scenario import trace_ref
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.model import Span, SpanType, Trace, TraceUnavailable
from tests.support.harness import evaluate_one, make_context

STARTED = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
RUN = RunInfo(
    "smoke",
    "run0000000000001",
    STARTED,
    session_key="hook:clawspec:run0000000000001",
    gateway_run_id="gw-1",
    completed_at=STARTED + timedelta(seconds=20),
)
TRACE = Trace(
    "trace-1",
    "fake",
    (
        Span("a", "trace-1", "openclaw.run", SpanType.AGENT, start_ms=0.0, end_ms=900.0),
        Span("l", "trace-1", "openclaw.model.call", SpanType.LLM, parent_id="a", start_ms=10.0),
        Span("t", "trace-1", "tool", SpanType.TOOL, parent_id="a", tool_name="memory.search"),
    ),
    url="http://127.0.0.1:5173/trace-1",
)
TRACE_ASSERTIONS = [
    {"type": "llm_call_count", "max": 3},
    {"type": "tool_sequence", "expected": ["memory.search"]},
    {"type": "tool_not_invoked", "tool": "resend.send"},
    {"type": "no_span_errors"},
    {"type": "trace_duration", "max_ms": 1000},
]


class FakeBackend:
    """A TraceBackend answering from a script; counts the lookups."""

    name = "fake"

    def __init__(self, settings: Settings, environ: Mapping[str, str], answer: Any = TRACE):
        self.settings = settings
        self.environ = environ
        self.answer = answer
        self.queries: list[TraceQuery] = []

    def find_trace(self, query: TraceQuery) -> Trace | None:
        self.queries.append(query)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


class RefusingBackend:
    """A backend whose constructor rejects its configuration."""

    def __init__(self, settings: Settings, environ: Mapping[str, str]) -> None:
        raise ValueError("observability.url is required for this backend")


def settings(**observability: Any) -> Settings:
    observability.setdefault("trace_poll_delay_ms", 0)
    observability.setdefault("trace_timeout_ms", 0)
    return Settings.model_validate({"observability": observability})


UNSET = object()  # no run-wide backend: the lookup makes one from the settings


def context(tmp_path: Path, backend: Any = UNSET, *, config: Settings | None = None):
    """A scenario context; `backend` is the run-wide backend the runner would set up."""
    evidence = Evidence(requests.Session())
    if backend is not UNSET:
        failed = isinstance(backend, Exception)
        evidence.trace_backend = RunBackend(
            None if failed else backend, backend if failed else None
        )
    return make_context(tmp_path, config or settings(), evidence=evidence, run=RUN)


@pytest.fixture
def fake_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every backend name at this module's FakeBackend (the real modules are others')."""
    table = {name: (__name__, "FakeBackend") for name in trace_evidence.BACKENDS}
    monkeypatch.setattr(trace_evidence, "BACKENDS", table)


@pytest.mark.parametrize(
    ("observability", "mode", "expected"),
    [
        ({}, "target", "none"),
        ({}, "bring_up", "local"),
        ({"backend": "none"}, "bring_up", "none"),
        ({"backend": "phoenix"}, "target", "phoenix"),
        ({"backend": "local"}, "target", "local"),
    ],
)
def test_backend_name_defaults_to_local_only_in_bring_up_mode(
    observability: dict[str, str], mode: str, expected: str
) -> None:
    config = Settings.model_validate({"observability": observability, "gateway": {"mode": mode}})
    assert config.trace_backend == expected


@pytest.mark.usefixtures("fake_backends")
@pytest.mark.parametrize("name", ["local", "opik", "phoenix", "langfuse"])
def test_make_backend_builds_the_named_backend_with_settings_and_environment(name: str) -> None:
    config = settings(backend=name)
    environ = {"OPIK_WORKSPACE": "team"}
    backend = make_backend(config, environ)
    assert isinstance(backend, FakeBackend)
    assert backend.settings is config and backend.environ is environ


def test_make_backend_returns_none_without_a_backend() -> None:
    assert make_backend(settings(backend="none"), {}) is None
    assert make_backend(Settings(), {}) is None  # target mode, nothing configured


def test_make_backend_imports_only_the_chosen_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    table = dict(trace_evidence.BACKENDS, opik=("tests.traces.no_such_module", "OpikBackend"))
    monkeypatch.setattr(trace_evidence, "BACKENDS", table)
    monkeypatch.setitem(table, "phoenix", (__name__, "FakeBackend"))
    assert isinstance(make_backend(settings(backend="phoenix"), {}), FakeBackend)
    with pytest.raises(ModuleNotFoundError):
        make_backend(settings(backend="opik"), {})


def test_one_lookup_serves_every_trace_assertion_of_the_scenario(tmp_path: Path) -> None:
    backend = FakeBackend(settings(), {})
    ctx = context(tmp_path, backend)
    verdicts = [evaluate_one(assertion, ctx) for assertion in TRACE_ASSERTIONS]
    assert [v.status for v in verdicts] == [Status.PASS] * len(TRACE_ASSERTIONS)
    assert len(backend.queries) == 1
    ref = trace_ref(ctx.evidence)
    assert ref is not None
    assert (ref.backend, ref.id, ref.url) == ("fake", "trace-1", "http://127.0.0.1:5173/trace-1")


def test_the_query_names_the_run_and_its_completion_time(tmp_path: Path) -> None:
    backend = FakeBackend(settings(), {})
    scenario_trace(context(tmp_path, backend))
    (query,) = backend.queries
    assert query == TraceQuery(
        run_id="run0000000000001",
        session_key="hook:clawspec:run0000000000001",
        gateway_run_id="gw-1",
        started_at=STARTED,
        ended_at=STARTED + timedelta(seconds=20),
        scenario="smoke",
        related_ids=frozenset(),
        wait_s=60.0,  # the harness's default scenario timeout: late sub-agents' window
    )


def test_the_query_carries_ids_from_a_log_index_already_built(tmp_path: Path) -> None:
    backend = FakeBackend(settings(), {})
    ctx = context(tmp_path, backend)
    index = LogIndex(Path("openclaw.log"), ("run0000000000001",), (), found=True)
    index.run_ids = {"gw-1", "embedded-7"}
    index.session_keys = {"agent:main:subagent:42"}
    index.trace_ids = {"4bf92f3577b34da6"}
    ctx.evidence.log_index(LogKey(Path("openclaw.log"), 0, ("x",), ("y",)), lambda: index)
    scenario_trace(ctx)
    assert backend.queries[0].related_ids == {
        "gw-1",
        "embedded-7",
        "agent:main:subagent:42",
        "4bf92f3577b34da6",
    }


def test_the_lookup_never_builds_the_log_index_itself(tmp_path: Path) -> None:
    log = tmp_path / "openclaw.log"
    log.write_text('{"0":"run start","runId":"run0000000000001"}\n', encoding="utf-8")
    backend = FakeBackend(settings(), {})
    ctx = context(tmp_path, backend)
    ctx.evidence.gateway_log = log
    scenario_trace(ctx)
    assert backend.queries[0].related_ids == frozenset()
    assert ctx.evidence.built_log_indexes() == []


OUTAGE = "trace backend 'fake' unreachable at 127.0.0.1:9: connection refused"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (TraceUnavailable(OUTAGE), OUTAGE),
        (
            None,
            "no trace found in 'fake' for run run0000000000001 "
            "(session key hook:clawspec:run0000000000001) after 1 attempt in 0 s",
        ),
        (
            requests.ConnectionError("HTTPConnectionPool(host='127.0.0.1', port=9): refused"),
            "trace backend 'fake' failed to return the trace: ConnectionError: "
            "HTTPConnectionPool(host='127.0.0.1', port=9): refused",
        ),
        (
            ValueError("Expecting value: line 1 column 1 (char 0)"),
            "trace backend 'fake' failed to return the trace: ValueError: "
            "Expecting value: line 1 column 1 (char 0)",
        ),
        (KeyError("spans"), "trace backend 'fake' failed to return the trace: KeyError: 'spans'"),
    ],
)
def test_no_trace_makes_every_trace_assertion_skip_with_the_same_reason(
    tmp_path: Path, answer: Any, reason: str
) -> None:
    backend = FakeBackend(settings(), {}, answer)
    ctx = context(tmp_path, backend)
    verdicts = [evaluate_one(assertion, ctx) for assertion in TRACE_ASSERTIONS]
    assert {(v.status, v.message) for v in verdicts} == {(Status.SKIP, reason)}
    assert len(backend.queries) == 1  # asked once, the reason is cached with the scenario
    assert trace_ref(ctx.evidence) is None


def test_no_backend_configured_skips_with_that_reason(tmp_path: Path) -> None:
    ctx = context(tmp_path, config=settings(backend="none"))
    found = scenario_trace(ctx)
    assert isinstance(found, TraceUnavailable)
    assert found.reason == NO_BACKEND == "no observability backend configured"
    assert evaluate_one({"type": "tool_not_invoked", "tool": "x"}, ctx).message == NO_BACKEND


def test_a_run_wide_backend_of_none_from_the_runner_means_no_backend(tmp_path: Path) -> None:
    ctx = context(tmp_path, None, config=settings(backend="opik"))
    assert evaluate_one({"type": "no_span_errors"}, ctx).message == NO_BACKEND


@pytest.mark.usefixtures("fake_backends")
def test_without_a_run_wide_backend_one_is_made_from_the_settings(tmp_path: Path) -> None:
    ctx = context(tmp_path, config=settings(backend="opik"))
    assert scenario_trace(ctx) is TRACE


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (
            ("tests.traces.no_such_module", "OpikBackend"),
            "trace backend 'opik' could not be set up: ModuleNotFoundError: "
            "No module named 'tests.traces.no_such_module'",
        ),
        (
            (__name__, "RefusingBackend"),
            "trace backend 'opik' could not be set up: ValueError: "
            "observability.url is required for this backend",
        ),
    ],
)
def test_a_backend_that_cannot_be_set_up_skips_instead_of_crashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: tuple[str, str], reason: str
) -> None:
    monkeypatch.setitem(trace_evidence.BACKENDS, "opik", entry)
    ctx = context(tmp_path, config=settings(backend="opik"))
    verdict = evaluate_one({"type": "llm_call_count", "min": 1}, ctx)
    assert (verdict.status, verdict.message) == (Status.SKIP, reason)


def test_the_trace_is_polled_until_it_arrives(tmp_path: Path) -> None:
    class Late(FakeBackend):
        def find_trace(self, query: TraceQuery) -> Trace | None:
            super().find_trace(query)
            return TRACE if len(self.queries) >= 3 else None

    backend = Late(settings(), {})
    config = settings(trace_poll_delay_ms=1, trace_timeout_ms=5000)
    ctx = context(tmp_path, backend, config=config)
    assert scenario_trace(ctx) is TRACE
    assert len(backend.queries) == 3
