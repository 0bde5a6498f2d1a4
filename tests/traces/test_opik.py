"""The Opik backend against a local server speaking Opik's NDJSON search API (127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clawspec.config.settings import Settings
from clawspec.traces.backends.opik import OpikBackend
from clawspec.traces.model import SpanType, TraceUnavailable
from tests.support.trace_backends import OpikServer, closed_port, trace_query

KEY = "opik-key-123456"
WS = "team-ws"
SESSION = "hook:clawspec:run-7f3a"


def _trace(trace_id: str, start: str, **fields: object) -> dict:
    return {
        "id": trace_id,
        "project_id": "0190-proj",
        "name": "agent run",
        "start_time": start,
        "end_time": "2026-11-02T10:00:20.000Z",
        "metadata": {},
        "total_estimated_cost": 0.0123,
        **fields,
    }


def _span(span_id: str, trace_id: str, name: str, kind: str, start: str, **fields: object) -> dict:
    return {
        "id": span_id,
        "trace_id": trace_id,
        "name": name,
        "type": kind,
        "start_time": start,
        "end_time": None,
        **fields,
    }


SPANS = [
    _span(
        "s1",
        "t1",
        "chat claude-sonnet-4-6",
        "llm",
        "2026-11-02T10:00:01.000Z",
        end_time="2026-11-02T10:00:03.500Z",
        model="claude-sonnet-4-6",
        provider="anthropic",
        usage={"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
        total_estimated_cost=0.0081,
        duration=2500.0,
    ),
    _span(
        "s2",
        "t1",
        "write",
        "tool",
        "2026-11-02T10:00:04.000Z",
        parent_span_id="s1",
        duration=12.5,
    ),
    _span(
        "s3",
        "t1",
        "subagent:copywriter",
        "general",
        "2026-11-02T10:00:05.000Z",
        metadata={"openclaw": {"session_key": "agent:main:subagent:abc"}},
    ),
    _span(
        "s4",
        "t1",
        "chat claude-haiku",
        "llm",
        "2026-11-02T10:00:06.000Z",
        error_info={"exception_type": "RateLimit", "message": "429 from provider"},
    ),
    _span("s5", "t1", "input guardrail", "guardrail", "2026-11-02T10:00:07.000Z"),
]


@pytest.fixture
def server() -> Iterator[OpikServer]:
    with OpikServer(KEY, WS) as running:
        running.traces = [
            _trace("t1", "2026-11-02T10:00:00.500Z", thread_id=SESSION),
            _trace("t9", "2026-11-02T10:00:02.000Z", thread_id="hook:clawspec:other-run"),
        ]
        running.spans = list(SPANS)
        yield running


def _backend(url: str, **env: str) -> OpikBackend:
    settings = Settings(observability={"backend": "opik", "url": url, "workspace": WS})
    backend = OpikBackend(settings, {"OPIK_API_KEY": KEY, **env})
    backend.http.timeout_s = (1.0, 0.5)
    return backend


def test_finds_the_trace_by_thread_id_and_normalizes_its_spans(server: OpikServer) -> None:
    trace = _backend(server.base_url).find_trace(trace_query())
    assert trace is not None
    assert (trace.id, trace.backend, trace.cost_usd) == ("t1", "opik", 0.0123)
    assert trace.url == f"{server.url}/team-ws/projects/0190-proj/traces?trace=t1"
    assert trace.start_ms == 1793613600500.0 and trace.end_ms == 1793613620000.0
    llm, tool, agent, failed, guardrail = trace.spans
    assert (llm.type, llm.model, llm.input_tokens, llm.output_tokens, llm.tokens) == (
        SpanType.LLM,
        "claude-sonnet-4-6",
        1200,
        300,
        1500,
    )
    assert (llm.cost_usd, llm.duration_ms, llm.elapsed_ms) == (0.0081, 2500.0, 2500.0)
    assert llm.attributes["provider"] == "anthropic"
    assert (tool.type, tool.tool_name, tool.parent_id, tool.elapsed_ms) == (
        SpanType.TOOL,
        "write",
        "s1",
        12.5,
    )
    assert (agent.type, agent.agent_name) == (SpanType.AGENT, "copywriter")
    assert agent.attributes["openclaw.session_key"] == "agent:main:subagent:abc"
    assert (failed.type, failed.error) == (SpanType.LLM, "429 from provider")
    assert guardrail.type == SpanType.GENERAL
    first = server.requests[0]
    assert first["path"] == "/api/v1/private/traces/search"
    assert first["body"]["filters"] == [{"field": "thread_id", "operator": "=", "value": SESSION}]
    assert first["body"]["project_name"] == "Default Project"


@pytest.mark.parametrize(
    ("query", "metadata"),
    [
        (trace_query(session_key=None), {"run_id": "run-7f3a"}),
        (trace_query(session_key=None), {"run_id": "gw-5521"}),
    ],
    ids=["clawspec-run-id", "gateway-run-id"],
)
def test_finds_the_trace_by_run_id_in_metadata(server: OpikServer, query, metadata) -> None:
    server.traces[0] = _trace("t1", "2026-11-02T10:00:00.500Z", metadata=metadata)
    server.traces.append(_trace("t2", "2026-11-02T10:00:01.000Z"))  # same window, no key
    trace = _backend(server.base_url).find_trace(query)
    assert trace is not None and trace.id == "t1"


def test_time_window_is_used_only_when_exactly_one_trace_matches(server: OpikServer) -> None:
    backend = _backend(server.base_url)
    query = trace_query(session_key=None, gateway_run_id=None)
    server.traces = [_trace("t1", "2026-11-02T10:00:00.500Z")]
    found = backend.find_trace(query)
    assert found is not None and found.id == "t1"
    # Another ClawSpec run's trace in the window is never a candidate.
    server.traces.append(
        _trace("t9", "2026-11-02T10:00:02.000Z", thread_id="hook:clawspec:other-run")
    )
    assert backend.find_trace(query).id == "t1"
    # Two unlabelled traces: ambiguous, so none.
    server.traces.append(_trace("t3", "2026-11-02T10:00:09.000Z"))
    assert backend.find_trace(query) is None
    # Outside the window: none.
    server.traces = [_trace("t1", "2026-11-02T11:30:00.000Z")]
    assert backend.find_trace(query) is None


def test_no_trace_yet_is_none_not_an_outage(server: OpikServer) -> None:
    server.traces = []
    assert _backend(server.base_url).find_trace(trace_query()) is None
    server.fault = "empty"
    assert _backend(server.base_url).find_trace(trace_query()) is None


def test_pages_with_last_retrieved_id_across_traces_and_spans(server: OpikServer) -> None:
    server.traces = [
        _trace(f"t{i}", "2026-11-02T10:00:00.500Z", thread_id=SESSION) for i in range(1, 4)
    ]
    server.spans = [
        _span(f"s{i}", f"t{1 + i % 3}", f"step {i}", "general", f"2026-11-02T10:00:{i:02}.000Z")
        for i in range(1, 8)
    ]
    backend = _backend(server.base_url)
    backend.trace_page_size = 2
    backend.span_page_size = 2
    trace = backend.find_trace(trace_query())
    assert trace is not None
    assert [s.id for s in trace.spans] == [f"s{i}" for i in range(1, 8)]
    trace_pages = [r["body"] for r in server.requests if r["path"].endswith("traces/search")]
    assert [p.get("last_retrieved_id") for p in trace_pages] == [None, "t2"]
    span_pages = [r["body"] for r in server.requests if r["path"].endswith("spans/search")]
    assert [(p["trace_id"], p.get("last_retrieved_id")) for p in span_pages] == [
        ("t1", None),
        ("t1", "s6"),  # t1 holds s3 and s6: a full page, so one more (empty) page is asked
        ("t2", None),
        ("t2", "s4"),
        ("t3", None),
        ("t3", "s5"),
    ]


def _reason(backend: OpikBackend) -> str:
    with pytest.raises(TraceUnavailable) as caught:
        backend.find_trace(trace_query())
    return caught.value.reason


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("401", "HTTP 401 (check OPIK_API_KEY)"),
        (
            "500",
            'HTTP 500 on POST /api/v1/private/traces/search: {"message": "database is on fire"}',
        ),
        ("hang", "timed out after 0.5 s"),
        (
            "malformed",
            "malformed answer from v1/private/traces/search: line 1 is not JSON "
            "('<html><body>Sign in</body></html>')",
        ),
        (
            "wrong_shape",
            "malformed answer from v1/private/traces/search: line 1 is not an object with an 'id'",
        ),
    ],
)
def test_outages_raise_a_distinct_reason(server: OpikServer, fault: str, cause: str) -> None:
    server.fault = fault
    reason = _reason(_backend(server.base_url))
    assert reason == f"trace backend 'opik' at 127.0.0.1:{server.port}: {cause}"
    assert KEY not in reason


def test_wrong_key_or_workspace_is_an_auth_failure(server: OpikServer) -> None:
    backend = _backend(server.base_url, OPIK_API_KEY="wrong-key-999")
    assert _reason(backend).endswith(": HTTP 401 (check OPIK_API_KEY)")
    settings = Settings(observability={"url": server.base_url, "workspace": "other"})
    assert _reason(OpikBackend(settings, {"OPIK_API_KEY": KEY})).endswith(
        "HTTP 401 (check OPIK_API_KEY)"
    )


def test_connection_refused() -> None:
    port = closed_port()
    reason = _reason(_backend(f"http://127.0.0.1:{port}/api/"))
    assert reason == f"trace backend 'opik' at 127.0.0.1:{port}: connection refused"


def test_settings_come_from_config_then_environment() -> None:
    env = {
        "OPIK_API_KEY": KEY,
        "OPIK_URL_OVERRIDE": "http://127.0.0.1:5173/api",
        "OPIK_WORKSPACE": "env-ws",
        "OPIK_PROJECT_NAME": "newsletter",
    }
    backend = OpikBackend(Settings(), env)
    assert backend.http.base_url == "http://127.0.0.1:5173/api/"
    assert (backend.workspace, backend.project) == ("env-ws", "newsletter")
    assert backend.http.session.headers["Authorization"] == KEY  # bare key, no "Bearer"
    assert backend.http.session.headers["Comet-Workspace"] == "env-ws"
    configured = Settings(
        observability={"url": "http://h:1/api/", "project": "p", "workspace": "w"}
    )
    backend = OpikBackend(configured, env)
    assert (backend.http.host, backend.workspace, backend.project) == ("h:1", "w", "p")
    assert OpikBackend(Settings(), {"OPIK_API_KEY": KEY}).http.base_url == (
        "https://www.comet.com/opik/api/"
    )
    assert OpikBackend(Settings(), {"OPIK_API_KEY": KEY}).project == "Default Project"


def test_cloud_without_an_api_key_is_unavailable_at_once() -> None:
    with pytest.raises(TraceUnavailable) as caught:
        OpikBackend(Settings(), {})
    assert caught.value.reason == (
        "trace backend 'opik' at www.comet.com: no API key (set OPIK_API_KEY)"
    )
    # Self-hosted Opik needs no key: no Authorization header at all.
    local = OpikBackend(Settings(observability={"url": "http://127.0.0.1:5173/api/"}), {})
    assert "Authorization" not in local.http.session.headers


# Through the CLI: the hooks server plays the gateway, OpikServer the trace backend.
TOKEN = "hook-token-9f8e7d6c5b"
TRACED = """version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: traced
    when: {invoke: "[write:a.md]"}
    then:
      - {type: llm_call_count, min: 1, max: 4}
      - {type: tool_sequence, expected: [write]}
      - {type: no_span_errors}
"""


def _configure(workspace, url: str) -> None:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\n"
        "observability:\n"
        f"  {{backend: opik, url: '{url}', workspace: {WS},\n"
        "   trace_poll_delay_ms: 50, trace_timeout_ms: 2000}\n",
        encoding="utf-8",
    )


@pytest.fixture
def cli_env(workspace, server: OpikServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from tests.support.hooks_api import HooksServer

    _configure(workspace, server.base_url)
    with HooksServer(TOKEN, workspace) as gateway:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", gateway.base_url)
        monkeypatch.setenv("OPIK_API_KEY", KEY)
        yield


def _scenario(workspace) -> dict:
    import json

    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    (scenario,) = report["scenarios"]
    return scenario


def test_cli_evaluates_trace_assertions_from_opik(
    workspace, write_contract, server: OpikServer, cli_env: None
) -> None:
    from clawspec.cli import main

    server.traces = [_trace("t1", "2026-11-02T10:00:00.500Z", thread_id="*")]
    server.spans = [s for s in SPANS if s["id"] != "s4"]  # no failing span
    write_contract(TRACED)
    assert main(["run", "."]) == 0
    scenario = _scenario(workspace)
    assert scenario["status"] == "pass", scenario
    assert [a["status"] for a in scenario["assertions"]] == ["pass", "pass", "pass"]
    filters = [r["body"].get("filters") for r in server.requests if "filters" in r["body"]]
    assert filters[0] == [
        {"field": "thread_id", "operator": "=", "value": f"hook:clawspec:{scenario['run_id']}"}
    ]


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (
            "500",
            'HTTP 500 on POST /api/v1/private/traces/search: {"message": "database is on fire"}',
        ),
        ("401", "HTTP 401 (check OPIK_API_KEY)"),
        ("malformed", "malformed answer from v1/private/traces/search: line 1 is not JSON"),
    ],
)
def test_cli_backend_outage_skips_trace_assertions_and_the_skip_budget_catches_it(
    workspace, write_contract, server: OpikServer, cli_env: None, fault: str, cause: str
) -> None:
    from clawspec.cli import main

    server.fault = fault
    write_contract(TRACED)
    assert main(["run", "."]) == 0
    scenario = _scenario(workspace)
    assert scenario["status"] == "skip"
    reason = f"trace backend 'opik' at 127.0.0.1:{server.port}: {cause}"
    assert [a["status"] for a in scenario["assertions"]] == ["skip"] * 3
    assert all(a["message"].startswith(reason) for a in scenario["assertions"])
    assert main(["run", ".", "--max-skipped", "0"]) == 1


def test_cli_unreachable_backend_skips_with_connection_refused(
    workspace, write_contract, cli_env: None
) -> None:
    from clawspec.cli import main

    port = closed_port()
    _configure(workspace, f"http://127.0.0.1:{port}/api/")
    write_contract(TRACED)
    assert main(["run", "."]) == 0
    scenario = _scenario(workspace)
    reason = f"trace backend 'opik' at 127.0.0.1:{port}: connection refused"
    assert scenario["status"] == "skip"
    assert {a["message"] for a in scenario["assertions"]} == {reason}
