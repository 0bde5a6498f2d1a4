"""The Langfuse backend against a local server speaking Langfuse's public API (127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clawspec.config.settings import Settings
from clawspec.traces.backends.langfuse import LangfuseBackend
from clawspec.traces.model import SpanType, TraceUnavailable
from tests.support.trace_backends import LangfuseServer, closed_port, trace_query

PUBLIC, SECRET = "pk-lf-1234", "sk-lf-5678"
SESSION = "hook:clawspec:run-7f3a"
ENV = {"LANGFUSE_PUBLIC_KEY": PUBLIC, "LANGFUSE_SECRET_KEY": SECRET}


def _trace(trace_id: str, timestamp: str, **fields: object) -> dict:
    return {"id": trace_id, "timestamp": timestamp, "name": "agent run", **fields}


def _obs(obs_id: str, trace_id: str, kind: str, name: str, start: str, **fields: object) -> dict:
    return {
        "id": obs_id,
        "traceId": trace_id,
        "type": kind,
        "name": name,
        "startTime": start,
        "endTime": None,
        "parentObservationId": None,
        "level": "DEFAULT",
        **fields,
    }


OBSERVATIONS = [
    _obs(
        "o1",
        "lt1",
        "GENERATION",
        "chat",
        "2026-11-02T10:00:01.000Z",
        endTime="2026-11-02T10:00:02.250Z",
        providedModelName="claude-sonnet-4-6",
        usageDetails={"input": 900, "output": 100, "total": 1000},
        costDetails={"input": 0.0027, "output": 0.0015, "total": 0.0042},
        latency=1.25,
    ),
    _obs(
        "o2",
        "lt1",
        "TOOL",
        "write",
        "2026-11-02T10:00:03.000Z",
        parentObservationId="o1",
        metadata={"attributes": {"gen_ai.tool.name": "write"}},
    ),
    _obs(
        "o3",
        "lt1",
        "AGENT",
        "copywriter",
        "2026-11-02T10:00:04.000Z",
        totalCost=0.5,
        costDetails={"total": 0.1},
    ),
    _obs(
        "o4",
        "lt1",
        "SPAN",
        "send",
        "2026-11-02T10:00:05.000Z",
        level="ERROR",
        statusMessage="SMTP refused",
    ),
    _obs("o5", "lt1", "EVENT", "note", "2026-11-02T10:00:06.000Z"),
]


@pytest.fixture
def server() -> Iterator[LangfuseServer]:
    with LangfuseServer(PUBLIC, SECRET) as running:
        running.traces = [
            _trace("lt1", "2026-11-02T10:00:00.500Z", sessionId=SESSION, totalCost=0.0042),
            _trace("lt9", "2026-11-02T10:00:01.000Z", sessionId="hook:clawspec:other"),
        ]
        running.observations = list(OBSERVATIONS)
        yield running


def _backend(url: str, **env: str) -> LangfuseBackend:
    backend = LangfuseBackend(Settings(observability={"url": url}), {**ENV, **env})
    backend.http.timeout_s = (1.0, 0.5)
    return backend


def test_finds_the_trace_by_session_id_and_normalizes_observations(
    server: LangfuseServer,
) -> None:
    trace = _backend(server.url).find_trace(trace_query())
    assert trace is not None
    assert (trace.id, trace.backend, trace.cost_usd) == ("lt1", "langfuse", 0.0042)
    assert trace.url == f"{server.url}/trace/lt1"
    assert trace.start_ms == 1793613600500.0
    llm, tool, agent, failed, event = trace.spans
    assert (llm.type, llm.model, llm.input_tokens, llm.output_tokens, llm.tokens) == (
        SpanType.LLM,
        "claude-sonnet-4-6",
        900,
        100,
        1000,
    )
    assert (llm.cost_usd, llm.duration_ms, llm.elapsed_ms) == (0.0042, 1250.0, 1250.0)
    assert (tool.type, tool.tool_name, tool.parent_id) == (SpanType.TOOL, "write", "o1")
    assert (agent.type, agent.agent_name, agent.cost_usd) == (SpanType.AGENT, "copywriter", 0.5)
    assert (failed.type, failed.error) == (SpanType.GENERAL, "SMTP refused")
    assert event.type == SpanType.GENERAL and event.error is None
    first, second = server.requests[:2]
    assert first["path"] == "/api/public/traces" and first["query"]["sessionId"] == [SESSION]
    assert second["path"] == "/api/public/v2/observations"
    assert second["query"]["fields"] == ["core,basic,usage,model,metrics,metadata"]


def test_html_path_gives_the_project_scoped_url(server: LangfuseServer) -> None:
    server.traces[0]["htmlPath"] = "/project/p1/traces/lt1"
    trace = _backend(server.url + "/").find_trace(trace_query())
    assert trace.url == f"{server.url}/project/p1/traces/lt1"


def test_window_prefers_a_trace_tagged_with_the_run_id(server: LangfuseServer) -> None:
    query = trace_query(session_key=None)
    server.traces = [
        _trace("lt1", "2026-11-02T10:00:00.500Z", metadata={"clawspec": {"run_id": "run-7f3a"}}),
        _trace("lt2", "2026-11-02T10:00:01.000Z"),
        _trace("lt3", "2026-11-02T10:00:02.000Z", tags=["gw-5521"]),
    ]
    backend = _backend(server.url)
    found = backend.find_trace(query)
    assert found is not None and found.id == "lt1"
    assert {s.trace_id for s in found.spans} == {"lt1"}
    # Nothing labelled: the window decides only when exactly one trace is in it.
    server.traces = [_trace("lt2", "2026-11-02T10:00:01.000Z")]
    assert backend.find_trace(query).id == "lt2"
    server.traces.append(_trace("lt4", "2026-11-02T10:00:30.000Z"))
    assert backend.find_trace(query) is None


def test_no_trace_yet_is_none(server: LangfuseServer) -> None:
    server.traces = []
    assert _backend(server.url).find_trace(trace_query()) is None
    server.fault = "empty"
    assert _backend(server.url).find_trace(trace_query()) is None


def test_pages_traces_by_number_and_observations_by_cursor(server: LangfuseServer) -> None:
    server.traces = [
        _trace(f"lt{i}", "2026-11-02T10:00:00.500Z", sessionId=SESSION) for i in (1, 2, 3)
    ]
    server.observations = [
        _obs(f"o{i}", "lt1", "SPAN", f"step {i}", f"2026-11-02T10:00:{i:02}.000Z")
        for i in range(1, 6)
    ]
    backend = _backend(server.url)
    backend.trace_page_size = 2
    backend.observation_page_size = 2
    trace = backend.find_trace(trace_query())
    assert [s.id for s in trace.spans] == ["o1", "o2", "o3", "o4", "o5"]
    pages = [r["query"] for r in server.requests if r["path"] == "/api/public/traces"]
    assert [p["page"] for p in pages] == [["1"], ["2"]]
    cursors = [
        (r["query"]["traceId"][0], "cursor" in r["query"])
        for r in server.requests
        if r["path"] == "/api/public/v2/observations"
    ]
    assert cursors == [("lt1", False), ("lt1", True), ("lt1", True), ("lt2", False), ("lt3", False)]


def _reason(backend: LangfuseBackend) -> str:
    with pytest.raises(TraceUnavailable) as caught:
        backend.find_trace(trace_query())
    return caught.value.reason


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("401", "HTTP 401 (check LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY)"),
        ("500", 'HTTP 500 on GET /api/public/traces: {"message": "database is on fire"}'),
        ("hang", "timed out after 0.5 s"),
        (
            "malformed",
            "malformed answer from api/public/traces: not JSON "
            "('<html><body>Sign in</body></html>')",
        ),
        (
            "wrong_shape",
            "malformed answer from api/public/traces: expected {data: [{id, ...}], meta}",
        ),
    ],
)
def test_outages_raise_a_distinct_reason(server: LangfuseServer, fault: str, cause: str) -> None:
    server.fault = fault
    reason = _reason(_backend(server.url))
    assert reason == f"trace backend 'langfuse' at 127.0.0.1:{server.port}: {cause}"
    assert SECRET not in reason and PUBLIC not in reason


def test_wrong_secret_is_an_auth_failure(server: LangfuseServer) -> None:
    reason = _reason(_backend(server.url, LANGFUSE_SECRET_KEY="sk-wrong-0000"))
    assert reason.endswith("HTTP 401 (check LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY)")
    assert "sk-wrong-0000" not in reason


def test_connection_refused() -> None:
    port = closed_port()
    reason = _reason(_backend(f"http://127.0.0.1:{port}"))
    assert reason == f"trace backend 'langfuse' at 127.0.0.1:{port}: connection refused"


def test_host_from_environment_and_missing_keys() -> None:
    backend = LangfuseBackend(Settings(), {**ENV, "LANGFUSE_HOST": "http://127.0.0.1:3000"})
    assert backend.http.base_url == "http://127.0.0.1:3000/"
    assert LangfuseBackend(Settings(), ENV).http.host == "cloud.langfuse.com"
    with pytest.raises(TraceUnavailable) as caught:
        LangfuseBackend(Settings(), {"LANGFUSE_PUBLIC_KEY": PUBLIC})
    assert caught.value.reason == (
        "trace backend 'langfuse' at cloud.langfuse.com: no credentials "
        "(set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY)"
    )
