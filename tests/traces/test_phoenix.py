"""The Phoenix backend against a local server speaking Phoenix's REST spans API (127.0.0.1).

The real Phoenix is exercised in test_phoenix_real.py (slow)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clawspec.config.settings import Settings
from clawspec.traces.backends.phoenix import PhoenixBackend
from clawspec.traces.model import SpanType, TraceUnavailable
from tests.support.trace_backends import PhoenixServer, closed_port, trace_query

SESSION = "hook:clawspec:run-7f3a"
T1 = "a" * 32
T2 = "b" * 32


def _span(
    span_id: str,
    trace_id: str,
    name: str,
    kind: str,
    start: str,
    parent: str | None = None,
    **attributes: object,
) -> dict:
    return {
        "id": f"U3Bhbjo{span_id}",
        "name": name,
        "context": {"trace_id": trace_id, "span_id": span_id},
        "span_kind": kind,
        "parent_id": parent,
        "start_time": f"2026-11-02T{start}+00:00",
        "end_time": f"2026-11-02T{start}+00:00",
        "status_code": "OK",
        "status_message": "",
        "attributes": attributes,
        "events": [],
    }


def _spans() -> list[dict]:
    failed = _span("f5", T1, "openclaw.tool.execution", "TOOL", "10:00:06", "r1")
    failed["attributes"] = {"gen_ai.tool.name": "send"}
    failed["status_code"] = "ERROR"
    failed["events"] = [{"name": "exception", "attributes": {"exception.message": "boom"}}]
    return [
        _span(
            "r1",
            T1,
            "openclaw.run",
            "UNKNOWN",
            "10:00:01",
            **{"openclaw.session_key": SESSION, "openclaw.agent_id": "main"},
        ),
        _span(
            "m2",
            T1,
            "openclaw.model.call",
            "LLM",
            "10:00:02",
            "r1",
            **{
                "gen_ai.request.model": "claude-sonnet-4-6",
                "llm.token_count.prompt": 800,
                "llm.token_count.completion": 120,
            },
        ),
        _span(
            "w3", T1, "openclaw.tool.execution", "TOOL", "10:00:03", "r1", **{"tool.name": "write"}
        ),
        _span(
            "a4",
            T1,
            "invoke_agent copywriter",
            "AGENT",
            "10:00:04",
            "r1",
            **{"gen_ai.agent.name": "copywriter"},
        ),
        failed,
        _span(
            "x1",
            T2,
            "openclaw.run",
            "UNKNOWN",
            "10:00:02",
            **{"openclaw.session_key": "hook:clawspec:other"},
        ),
    ]


@pytest.fixture
def server() -> Iterator[PhoenixServer]:
    with PhoenixServer() as running:
        running.projects["default"] = _spans()
        yield running


def _backend(url: str, **observability: str) -> PhoenixBackend:
    settings = Settings(observability={"backend": "phoenix", "url": url, **observability})
    backend = PhoenixBackend(settings, {})
    backend.http.timeout_s = (1.0, 0.5)
    return backend


def test_finds_the_trace_by_session_attribute_and_maps_span_kinds(server: PhoenixServer) -> None:
    trace = _backend(server.url).find_trace(trace_query())
    assert trace is not None
    assert (trace.id, trace.backend, trace.cost_usd) == (T1, "phoenix", None)
    assert trace.url == f"{server.url}/projects/UHJvamVjdDo7/traces/{T1}"
    run, llm, tool, agent, failed = trace.spans
    assert (run.type, run.agent_name, run.parent_id) == (SpanType.AGENT, "main", None)
    assert (llm.type, llm.model, llm.input_tokens, llm.output_tokens) == (
        SpanType.LLM,
        "claude-sonnet-4-6",
        800,
        120,
    )
    assert llm.attributes["openinference.span.kind"] == "LLM"
    assert (tool.type, tool.tool_name, tool.parent_id) == (SpanType.TOOL, "write", "r1")
    assert (agent.type, agent.agent_name) == (SpanType.AGENT, "copywriter")
    assert (failed.type, failed.tool_name, failed.error) == (SpanType.TOOL, "send", "boom")
    first = server.requests[0]
    assert first["path"] == "/v1/projects/default/spans"
    assert first["query"]["attribute"] == [f'openclaw.session_key:"{SESSION}"']


@pytest.mark.parametrize(
    ("attribute", "query"),
    [
        ("session.id", trace_query()),
        ("clawspec.run_id", trace_query(session_key=None)),
        ("openclaw.run_id", trace_query(run_id="other", session_key=None)),
    ],
)
def test_finds_the_trace_by_other_correlation_attributes(
    server: PhoenixServer, attribute: str, query
) -> None:
    value = {"session.id": SESSION, "clawspec.run_id": "run-7f3a", "openclaw.run_id": "gw-5521"}
    spans = server.projects["default"]
    spans[0]["attributes"] = {attribute: value[attribute]}
    spans.append(_span("y1", "c" * 32, "other", "CHAIN", "10:00:05"))  # same window, no key
    trace = _backend(server.url).find_trace(query)
    assert trace is not None and trace.id == T1


def test_finds_the_trace_by_a_trace_id_from_the_gateway_log(server: PhoenixServer) -> None:
    for span in server.projects["default"]:
        span["attributes"].pop("openclaw.session_key", None)
    server.projects["default"].append(_span("y1", "c" * 32, "other", "CHAIN", "10:00:05"))
    query = trace_query(session_key=None, related_ids=frozenset({T1, "sess-1"}))
    assert _backend(server.url).find_trace(query).id == T1


def test_time_window_only_when_exactly_one_root_matches(server: PhoenixServer) -> None:
    backend = _backend(server.url)
    query = trace_query(session_key=None, gateway_run_id=None)
    server.projects["default"][0]["attributes"] = {}
    found = backend.find_trace(query)  # T2 belongs to another ClawSpec run: not a candidate
    assert found is not None and found.id == T1
    server.projects["default"].append(_span("y1", "c" * 32, "other", "CHAIN", "10:00:05"))
    assert backend.find_trace(query) is None


def test_unknown_project_or_no_trace_is_none(server: PhoenixServer) -> None:
    assert _backend(server.url, project="nope").find_trace(trace_query()) is None
    server.projects["default"] = []
    assert _backend(server.url).find_trace(trace_query()) is None
    server.fault = "empty"
    assert _backend(server.url).find_trace(trace_query()) is None


def test_pages_with_next_cursor(server: PhoenixServer) -> None:
    backend = _backend(server.url)
    backend.page_size = 2
    trace = backend.find_trace(trace_query())
    assert [s.id for s in trace.spans] == ["r1", "m2", "w3", "a4", "f5"]
    reads = [r["query"] for r in server.requests if "trace_id" in r["query"]]
    assert [q.get("cursor") for q in reads] == [None, ["2"], ["4"]]


def test_api_key_is_sent_as_bearer(server: PhoenixServer) -> None:
    server.api_key = "px-key-abcdef"
    settings = Settings(observability={"url": server.url})
    assert PhoenixBackend(settings, {"PHOENIX_API_KEY": "px-key-abcdef"}).find_trace(trace_query())
    with pytest.raises(TraceUnavailable) as caught:
        PhoenixBackend(settings, {}).find_trace(trace_query())
    assert caught.value.reason == (
        f"trace backend 'phoenix' at 127.0.0.1:{server.port}: HTTP 401 (check PHOENIX_API_KEY)"
    )


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("401", "HTTP 401 (check PHOENIX_API_KEY)"),
        ("500", 'HTTP 500 on GET /v1/projects/default/spans: {"message": "database is on fire"}'),
        ("hang", "timed out after 0.5 s"),
        (
            "malformed",
            "malformed answer from v1/projects/default/spans: not JSON "
            "('<html><body>Sign in</body></html>')",
        ),
        (
            "wrong_shape",
            "malformed answer from v1/projects/default/spans: expected {data: [...], next_cursor}",
        ),
    ],
)
def test_outages_raise_a_distinct_reason(server: PhoenixServer, fault: str, cause: str) -> None:
    server.fault = fault
    with pytest.raises(TraceUnavailable) as caught:
        _backend(server.url).find_trace(trace_query())
    assert caught.value.reason == f"trace backend 'phoenix' at 127.0.0.1:{server.port}: {cause}"


def test_connection_refused_even_for_an_unknown_project() -> None:
    port = closed_port()
    with pytest.raises(TraceUnavailable) as caught:
        _backend(f"http://127.0.0.1:{port}", project="nope").find_trace(trace_query())
    assert caught.value.reason == f"trace backend 'phoenix' at 127.0.0.1:{port}: connection refused"


def test_defaults() -> None:
    backend = PhoenixBackend(Settings(), {})
    assert (backend.http.base_url, backend.project) == ("http://127.0.0.1:6006/", "default")
    assert "Authorization" not in backend.http.session.headers
    assert PhoenixBackend(Settings(), {"PHOENIX_PROJECT_NAME": "clawspec"}).project == "clawspec"
