"""`ScenarioResult.evidence` from recorded real gateway logs and plugin output, and from traces."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import requests

from clawspec.assertions.base import RunInfo
from clawspec.evidence.store import Evidence, LogKey
from clawspec.gateway.logs.index import LogIndex
from clawspec.reports.evidence import MAX_SPANS, scenario_evidence
from clawspec.reports.model import TokenTotals
from clawspec.traces.model import Span, SpanType, Trace
from tests.gateway.test_logs import EMBEDDED, HOOK_RUN, LEGACY_LOG, REAL_LOG, REAL_PLUGIN

STARTED = datetime(2026, 11, 22, 1, 43, tzinfo=UTC)


def run_info(name: str) -> RunInfo:
    """The run as the runner knows it: its own id, the hook's run id and the session key."""
    return RunInfo(name, "clawspec0000001", STARTED, f"hook:clawspec:{name}", HOOK_RUN[name])


def evidence_for(log: Path | None = REAL_LOG, plugin: Path | None = REAL_PLUGIN) -> Evidence:
    return Evidence(requests.Session(), log, 0, plugin, 0)


def test_tools_in_order_with_lane_times_and_plugin_tokens() -> None:
    result = scenario_evidence(evidence_for(), run_info("w1"))
    assert result is not None
    assert [(t.name, t.agent, t.run_id, t.error) for t in result.tools] == [
        ("write", "main", EMBEDDED["w1"], False)
    ]
    tool = result.tools[0]
    assert tool.started_at == "2026-11-22T01:43:34.443+00:00"
    assert tool.ended_at == "2026-11-22T01:43:34.480+00:00"  # the log's `tool end` line
    assert result.tokens == TokenTotals(
        input=2100, output=57, total=2157, cost_usd=0, source="plugin"
    )
    assert result.delegations == [] and result.spans == []


def test_delegation_puts_the_sub_agent_tools_in_the_sub_agent_lane() -> None:
    result = scenario_evidence(evidence_for(), run_info("s1"))
    assert result is not None
    assert [(t.name, t.run_id) for t in result.tools] == [
        ("sessions_spawn", EMBEDDED["s1"]),
        ("write", EMBEDDED["s1-child"]),
    ]
    assert all(t.agent == "main" for t in result.tools)  # the recorded child is a `main` sub-agent
    assert result.delegations == ["main"]
    assert result.tokens is not None and result.tokens.total == 1768
    assert all(t.started_at and t.ended_at and t.ended_at >= t.started_at for t in result.tools)


def test_the_index_an_assertion_built_is_reused_not_rebuilt(tmp_path: Path) -> None:
    evidence = evidence_for(tmp_path / "missing.log", None)  # a rebuild would find nothing
    built = LogIndex.build(REAL_LOG, run_ids=[HOOK_RUN["w1"]])
    evidence.log_index(LogKey(Path("somewhere"), 0, (), ()), lambda: built)
    result = scenario_evidence(evidence, run_info("w1"))
    assert result is not None and [t.name for t in result.tools] == ["write"]
    assert result.tokens is None  # no plugin output configured, no usage lines


def test_plugin_errors_mark_the_tool_call(tmp_path: Path) -> None:
    lines = []
    for raw in REAL_PLUGIN.read_text("utf-8").splitlines():
        record = json.loads(raw)
        ours = record.get("kind") == "tool" and record.get("runId") == EMBEDDED["w1"]
        if ours and record["phase"] == "completed":
            record["phase"] = "error"
        lines.append(json.dumps(record))
    plugin = tmp_path / "plugin.jsonl"
    plugin.write_text("\n".join(lines) + "\n", "utf-8")
    result = scenario_evidence(evidence_for(REAL_LOG, plugin), run_info("w1"))
    assert result is not None and [(t.name, t.error) for t in result.tools] == [("write", True)]


def test_no_log_and_no_trace_gives_no_evidence(tmp_path: Path) -> None:
    assert scenario_evidence(evidence_for(None, None), run_info("w1")) is None
    assert scenario_evidence(evidence_for(tmp_path / "absent.log"), run_info("w1")) is None


def test_run_missing_from_the_log_gives_no_evidence(tmp_path: Path) -> None:
    log = tmp_path / "other.log"
    log.write_text(LEGACY_LOG.read_text("utf-8"), "utf-8")  # lines of other runs only
    assert scenario_evidence(evidence_for(log, None), run_info("w1")) is None


def test_legacy_usage_lines_count_as_log_tokens() -> None:
    run = RunInfo("legacy", "abc", STARTED)
    result = scenario_evidence(evidence_for(LEGACY_LOG, None), run)
    assert result is not None
    assert [t.name for t in result.tools] == ["resend.send", "memory.search"]
    assert result.delegations == ["agents-marketing-brand"]
    # The legacy lines name no model: the cost is unknown, never 0.
    assert result.tokens == TokenTotals(
        input=2000, output=450, total=2450, unpriced=["unknown model"], source="log"
    )


def _span(i: int, **kw) -> Span:
    data = {"id": f"s{i}", "trace_id": "t", "name": f"span {i}", "type": SpanType.GENERAL,
            "start_ms": 1_000.0 + i, "end_ms": 1_010.0 + i}  # fmt: skip
    data.update(kw)
    return Span(**data)


def test_without_a_log_the_trace_gives_tools_lanes_tokens_and_capped_spans() -> None:
    spans = [
        _span(0, type=SpanType.AGENT, name="orchestrator", agent_name="orchestrator"),
        _span(1, type=SpanType.LLM, parent_id="s0", model="m", input_tokens=10, output_tokens=5,
              cost_usd=0.25),
        _span(2, type=SpanType.TOOL, parent_id="s0", name="tool", tool_name="sessions_spawn"),
        _span(3, type=SpanType.AGENT, parent_id="s2", name="brand", agent_name="brand"),
        _span(4, type=SpanType.TOOL, parent_id="s3", tool_name="write", error="disk full"),
        *[_span(i, parent_id="s3") for i in range(5, MAX_SPANS + 10)],
    ]  # fmt: skip
    evidence = evidence_for(None, None)
    evidence.trace(lambda: Trace("t", "local", tuple(spans)))
    result = scenario_evidence(evidence, run_info("w1"))
    assert result is not None
    assert [(t.name, t.agent, t.error) for t in result.tools] == [
        ("sessions_spawn", "orchestrator", False),
        ("write", "brand", True),
    ]
    assert result.tools[0].started_at == "1970-01-01T00:00:01.002+00:00"
    assert result.delegations == ["brand"]
    assert result.tokens == TokenTotals(input=10, output=5, total=15, cost_usd=0.25, source="trace")
    assert len(result.spans) == MAX_SPANS and result.spans_omitted == 10
    assert result.spans[1].model == "m" and result.spans[4].error == "disk full"
    assert [s.id for s in result.spans[:3]] == ["s0", "s1", "s2"]
