"""The trace of a scenario that did not pass, looked up for the report when no assertion did.

Unit level: `report_trace` against ClawSpec's own receiver and the Opik test server (found at
once without waiting for the trace to settle, bounded, never raising, never asked twice, not
at all without a backend). Through the CLI: a failing scenario without trace assertions shows
its trace in the JSON report, the job summary and the PR comment.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import requests

from clawspec.cli import main
from clawspec.config.settings import Settings
from clawspec.evidence.context import RunInfo
from clawspec.evidence.store import Evidence, RunBackend
from clawspec.evidence.trace import REPORT_LOOKUP_MS, report_trace
from clawspec.runner.scenario import trace_ref
from clawspec.traces.backends.local import LocalBackend
from clawspec.traces.backends.opik import OpikBackend
from clawspec.traces.model import Trace, TraceUnavailable
from clawspec.traces.receiver import OtlpReceiver
from tests.support.github_api import GitHubApiServer, pull_request_environ
from tests.support.harness import make_context
from tests.support.hooks_api import HooksServer
from tests.support.trace_backends import OpikServer, closed_port
from tests.traces.test_local_backend import T0, TRACE_A, run_spans

KEY = "opik-key-123456"
WS = "team-ws"
RUN = RunInfo(
    "breaks",
    "run-1",
    T0,
    session_key="hook:clawspec:run-1",
    completed_at=T0 + timedelta(seconds=5),
)


def _context(tmp_path: Path, settings: Settings, backend: object | None):
    evidence = Evidence(requests.Session(), trace_backend=RunBackend(backend))  # type: ignore[arg-type]
    return make_context(tmp_path, settings, evidence=evidence, run=RUN)


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver(0) as running:
        yield running


def test_a_trace_still_settling_is_taken_at_once(tmp_path: Path, receiver: OtlpReceiver) -> None:
    # Spans that have just arrived: a trace assertion would wait `trace_settle_ms` for more.
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
    settings = Settings(
        observability={"backend": "local", "url": receiver.endpoint, "trace_settle_ms": 60_000}
    )
    ctx = _context(tmp_path, settings, LocalBackend(settings, {}))
    assert ctx.evidence.built_trace() is None

    report_trace(ctx)

    found = ctx.evidence.built_trace()
    assert isinstance(found, Trace)
    assert len(found.spans) == 6
    ref = trace_ref(ctx.evidence)
    assert ref is not None
    assert (ref.backend, ref.id, ref.url) == ("local", TRACE_A, None)


def test_a_trace_that_never_comes_costs_the_short_bound_not_the_trace_timeout(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    settings = Settings(observability={"backend": "local", "url": receiver.endpoint})
    assert settings.observability.trace_timeout_ms == 30_000
    ctx = _context(tmp_path, settings, LocalBackend(settings, {}))

    report_trace(ctx)

    missing = ctx.evidence.built_trace()
    assert isinstance(missing, TraceUnavailable)
    assert missing.reason.startswith("no trace found in 'local' for run run-1 ")
    assert missing.reason.endswith(f" in {REPORT_LOOKUP_MS / 1000:g} s")
    assert trace_ref(ctx.evidence) is None


def test_a_shorter_trace_timeout_bounds_it_further(tmp_path: Path, receiver: OtlpReceiver) -> None:
    settings = Settings(
        observability={"backend": "local", "url": receiver.endpoint, "trace_timeout_ms": 300}
    )
    ctx = _context(tmp_path, settings, LocalBackend(settings, {}))
    report_trace(ctx)
    missing = ctx.evidence.built_trace()
    assert isinstance(missing, TraceUnavailable)
    assert missing.reason.endswith(" in 0.3 s")


def test_a_backend_that_hangs_is_cut_at_the_bound(tmp_path: Path) -> None:
    with OpikServer(KEY, WS) as server:
        server.fault = "hang"  # answers only once the server stops
        settings = Settings(
            observability={"backend": "opik", "url": server.base_url, "workspace": WS}
        )
        ctx = _context(tmp_path, settings, OpikBackend(settings, {"OPIK_API_KEY": KEY}))
        report_trace(ctx)
    missing = ctx.evidence.built_trace()
    assert isinstance(missing, TraceUnavailable)
    assert f"after 1 attempt in {REPORT_LOOKUP_MS / 1000:g} s" in missing.reason
    assert trace_ref(ctx.evidence) is None


def test_a_backend_that_is_down_costs_nothing_and_raises_nothing(tmp_path: Path) -> None:
    port = closed_port()
    settings = Settings(
        observability={"backend": "opik", "url": f"http://127.0.0.1:{port}/api/", "workspace": WS}
    )
    ctx = _context(tmp_path, settings, OpikBackend(settings, {"OPIK_API_KEY": KEY}))
    report_trace(ctx)
    missing = ctx.evidence.built_trace()
    assert isinstance(missing, TraceUnavailable)
    assert missing.reason == f"trace backend 'opik' at 127.0.0.1:{port}: connection refused"


def test_a_backend_that_could_not_be_set_up_is_kept_as_the_reason(tmp_path: Path) -> None:
    settings = Settings(observability={"backend": "opik"})
    evidence = Evidence(requests.Session(), trace_backend=RunBackend(failure=ValueError("bad url")))
    ctx = make_context(tmp_path, settings, evidence=evidence, run=RUN)
    report_trace(ctx)
    missing = ctx.evidence.built_trace()
    assert isinstance(missing, TraceUnavailable)
    assert missing.reason == "trace backend 'opik' could not be set up: ValueError: bad url"


def test_nothing_is_looked_up_without_a_backend(tmp_path: Path) -> None:
    ctx = _context(tmp_path, Settings(observability={"backend": "none"}), None)
    report_trace(ctx)
    assert ctx.evidence.built_trace() is None


def test_a_trace_an_assertion_already_looked_up_is_not_asked_again(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    receiver.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
    settings = Settings(observability={"backend": "local", "url": receiver.endpoint})
    ctx = _context(tmp_path, settings, LocalBackend(settings, {}))
    why = TraceUnavailable("no trace found in 'local' for run run-1 after 9 attempts in 30 s")
    ctx.evidence.trace(lambda: why)
    report_trace(ctx)
    assert ctx.evidence.built_trace() is why


# -- through the CLI: the hooks server plays the gateway, OpikServer the trace backend ----------

TOKEN = "hook-token-5e6f7a8b9c"
GITHUB_TOKEN = "ghs_report_trace_0123456789"
CONTRACT = """version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: writes-draft
    when: {invoke: "[write:a.md]"}
    then:
      - {type: artifact_exists, path: a.md}
  - name: writes-summary
    when: {invoke: "[write:c.md]"}
    then:
      - {type: artifact_exists, path: b.md}
"""


def _opik_trace(trace_id: str) -> dict:
    return {
        "id": trace_id,
        "project_id": "0190-proj",
        "name": "agent run",
        "start_time": "2026-11-02T10:00:00.500Z",
        "end_time": "2026-11-02T10:00:20.000Z",
        "thread_id": "*",  # the server's canned trace for whatever session is asked about
        "metadata": {},
    }


def _opik_span(trace_id: str) -> dict:
    return {
        "id": "s1",
        "trace_id": trace_id,
        "name": "write",
        "type": "tool",
        "start_time": "2026-11-02T10:00:01.000Z",
        "end_time": "2026-11-02T10:00:02.000Z",
    }


def test_a_failing_scenario_without_trace_assertions_shows_its_trace_everywhere(
    workspace: Path, write_contract, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_contract(CONTRACT)
    with (
        OpikServer(KEY, WS) as opik,
        HooksServer(TOKEN, workspace) as gateway,
        GitHubApiServer(GITHUB_TOKEN) as github,
    ):
        opik.traces = [_opik_trace("0190-trace-7")]
        opik.spans = [_opik_span("0190-trace-7")]
        (workspace / "clawspec.yaml").write_text(
            "report_dir: reports\npr_comment: true\n"
            f"observability: {{backend: opik, url: '{opik.base_url}', workspace: {WS}}}\n",
            encoding="utf-8",
        )
        environ = {
            **pull_request_environ(github.url, tmp_path),
            "GITHUB_TOKEN": GITHUB_TOKEN,
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "CLAWSPEC_HOOKS_TOKEN": TOKEN,
            "CLAWSPEC_GATEWAY_BASE_URL": gateway.base_url,
            "OPIK_API_KEY": KEY,
        }
        for name, value in environ.items():
            monkeypatch.setenv(name, value)

        assert main(["run", "."]) == 1
        searches = [r for r in opik.requests if r["path"].endswith("traces/search")]
        (comment,) = github.comments(7)

    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    passed, failed = report["scenarios"]
    assert (passed["status"], failed["status"]) == ("pass", "fail")
    url = f"{opik.url}/{WS}/projects/0190-proj/traces?trace=0190-trace-7"
    assert failed["trace"] == {"backend": "opik", "id": "0190-trace-7", "url": url}
    # The report takes the spans it found with the trace, as it does for a trace assertion.
    assert [s["name"] for s in failed["evidence"]["spans"]] == ["write"]
    # A passing scenario is not held up by a lookup it has no use for.
    assert passed["trace"] is None
    assert len(searches) == 1
    assert searches[0]["body"]["filters"] == [
        {"field": "thread_id", "operator": "=", "value": f"hook:clawspec:{failed['run_id']}"}
    ]

    summary = (tmp_path / "summary.md").read_text("utf-8")
    for text in (summary, comment["body"]):
        row = next(line for line in text.splitlines() if "writes-summary" in line and "| " in line)
        assert f"[opik]({url})" in row
        draft = next(line for line in text.splitlines() if "writes-draft" in line)
        assert draft.rstrip().endswith("|  |")  # no trace looked up, none shown
