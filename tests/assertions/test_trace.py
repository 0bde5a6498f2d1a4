"""Trace assertions on hand-built traces injected into the scenario's evidence."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.assertions import REGISTRY
from clawspec.assertions.base import Status, Verdict
from clawspec.cli import main
from clawspec.config.settings import Settings
from clawspec.traces.model import Span, SpanType, Trace, TraceUnavailable
from tests.support.harness import evaluate_one, make_context
from tests.support.hooks_api import HooksServer

LLM, TOOL, AGENT, GENERAL = SpanType.LLM, SpanType.TOOL, SpanType.AGENT, SpanType.GENERAL


def span(id: str, type: SpanType, name: str | None = None, **fields: Any) -> Span:
    default = {LLM: "openclaw.model.call", TOOL: "openclaw.tool.execution"}.get(type, id)
    return Span(id=id, trace_id="t1", name=name or default, type=type, **fields)


def trace(*spans: Span, **fields: Any) -> Trace:
    return Trace("t1", "fake", tuple(spans), **fields)


def tools(*names: str) -> list[Span]:
    return [span(f"tool{i}", TOOL, tool_name=n, start_ms=float(i)) for i, n in enumerate(names)]


Evaluate = Callable[..., Verdict]


@pytest.fixture
def evaluate(tmp_path: Path) -> Evaluate:
    """Evaluate an assertion (YAML) against `found`, the scenario's cached trace evidence."""

    def run(assertion: str, found: Trace | TraceUnavailable, settings: Settings | None = None):
        ctx = make_context(tmp_path, settings)
        ctx.evidence.trace(lambda: found)
        return evaluate_one(assertion, ctx)

    return run


def outcome(verdict: Verdict) -> tuple[Status, str]:
    return verdict.status, verdict.message


# -- llm_call_count ---------------------------------------------------------------------------

THREE_CALLS = trace(
    span("a", AGENT, "openclaw.run"),
    *(span(f"l{i}", LLM) for i in range(3)),
    span("u", GENERAL, "openclaw.model.usage", input_tokens=10),  # a summary, not a call
)


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        ("max: 3", (Status.PASS, "3 LLM calls (within max 3)")),
        ("max: 2", (Status.FAIL, "3 LLM calls > max 2")),
        ("min: 3", (Status.PASS, "3 LLM calls (within min 3)")),
        ("min: 4", (Status.FAIL, "3 LLM calls < min 4")),
        ("min: 1, max: 4", (Status.PASS, "3 LLM calls (within min 1, max 4)")),
    ],
)
def test_llm_call_count_bounds_are_inclusive(
    evaluate: Evaluate, assertion: str, expected: tuple[Status, str]
) -> None:
    text = f"{{type: llm_call_count, {assertion}}}"
    assert outcome(evaluate(text, THREE_CALLS)) == expected


def test_llm_call_count_fails_min_when_the_trace_has_no_llm_span(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: llm_call_count, min: 1}", trace(*tools("read")))
    assert outcome(verdict) == (Status.FAIL, "0 LLM calls < min 1")
    assert (verdict.value, verdict.limit) == (0, {"min": 1, "max": None})


# -- tool_sequence ----------------------------------------------------------------------------

# Backends may list spans out of order: the sequence follows start times.
CALLS = trace(
    span("t3", TOOL, tool_name="resend.send", start_ms=30.0),
    span("t0", TOOL, tool_name="memory.search", start_ms=0.0),
    span("t2", TOOL, "memory.search", start_ms=20.0),  # no tool attribute: the span name
    span("t1", TOOL, tool_name="attio.read", start_ms=10.0),
    span("l", LLM, start_ms=5.0),
)
ACTUAL = "actual ['memory.search', 'attio.read', 'memory.search', 'resend.send']"


@pytest.mark.parametrize(
    ("mode", "expected", "status", "message"),
    [
        ("ordered", "[memory.search, resend.send]", Status.PASS, None),
        ("ordered", "[memory.search, memory.search]", Status.PASS, None),
        ("ordered", "[attio.read, memory.search, resend.send]", Status.PASS, None),
        (
            "ordered",
            "[resend.send, memory.search]",
            Status.FAIL,
            f"tool 'memory.search' after 'resend.send' not called in order; {ACTUAL}",
        ),
        (
            "ordered",
            "[memory.search, memory.search, memory.search]",
            Status.FAIL,
            f"tool 'memory.search' after 'memory.search' not called in order; {ACTUAL}",
        ),
        (
            "ordered",
            "[web.fetch]",
            Status.FAIL,
            f"tool 'web.fetch' not called in order; {ACTUAL}",
        ),
        (
            "strict",
            "[memory.search, attio.read, memory.search, resend.send]",
            Status.PASS,
            None,
        ),
        (
            "strict",
            "[memory.search, attio.read, memory.search]",
            Status.FAIL,
            "tool sequence differs at position 4: expected nothing, found 'resend.send'; " + ACTUAL,
        ),
        (
            "strict",
            "[memory.search, memory.search, attio.read, resend.send]",
            Status.FAIL,
            "tool sequence differs at position 2: expected 'memory.search', found "
            f"'attio.read'; {ACTUAL}",
        ),
        (
            "strict",
            "[memory.search, attio.read, memory.search, resend.send, resend.send]",
            Status.FAIL,
            f"tool sequence differs at position 5: expected 'resend.send', found nothing; {ACTUAL}",
        ),
        ("contains", "[resend.send, memory.search]", Status.PASS, None),
        ("contains", "[attio.read, attio.read]", Status.PASS, None),
        (
            "contains",
            "[resend.send, web.fetch, slack.post]",
            Status.FAIL,
            f"not called: 'web.fetch', 'slack.post'; {ACTUAL}",
        ),
    ],
)
def test_tool_sequence_modes_with_repeats_and_extras(
    evaluate: Evaluate, mode: str, expected: str, status: Status, message: str | None
) -> None:
    verdict = evaluate(f"{{type: tool_sequence, mode: {mode}, expected: {expected}}}", CALLS)
    assert verdict.status == status
    if message is not None:
        assert verdict.message == message
    assert verdict.value == ["memory.search", "attio.read", "memory.search", "resend.send"]


def test_tool_sequence_pass_message_shows_the_actual_sequence(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: tool_sequence, expected: [memory.search, resend.send]}", CALLS)
    assert verdict.message == f"2 expected tools matched (ordered) in [{ACTUAL[8:-1]}]"


def test_tool_sequence_fails_when_no_tool_was_called(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: tool_sequence, expected: [read]}", trace(span("l", LLM)))
    assert outcome(verdict) == (
        Status.FAIL,
        "tool 'read' not called in order; actual [] (no tool calls)",
    )


def test_tool_sequence_caps_a_long_actual_sequence(evaluate: Evaluate) -> None:
    found = trace(*tools(*(f"tool{i}" for i in range(15))))
    verdict = evaluate("{type: tool_sequence, mode: strict, expected: [tool0]}", found)
    assert verdict.message.endswith("'tool8', 'tool9' … and 5 more]")


# -- model_used -------------------------------------------------------------------------------

MODELS = trace(
    span("l1", LLM, model="claude-sonnet-4-6"),
    span("l2", LLM, model="claude-haiku-4-5"),
    span("l3", LLM, model="claude-sonnet-4-6"),
    span("u", GENERAL, "openclaw.model.usage", model="claude-opus-4-6"),  # not an LLM span
)


@pytest.mark.parametrize(
    ("assertion", "expected"),
    [
        (
            "expected: sonnet",
            (
                Status.PASS,
                "model 'claude-sonnet-4-6' used (3 LLM spans); models used: "
                "'claude-sonnet-4-6', 'claude-haiku-4-5'",
            ),
        ),
        (
            "expected: claude-opus-4-6",
            (
                Status.FAIL,
                "no model matching 'claude-opus-4-6'; models used: 'claude-sonnet-4-6', "
                "'claude-haiku-4-5'",
            ),
        ),
        (
            "not_expected: opus",
            (
                Status.PASS,
                "no model matching 'opus' in 3 LLM spans; models used: 'claude-sonnet-4-6', "
                "'claude-haiku-4-5'",
            ),
        ),
        (
            "not_expected: SONNET",
            (
                Status.FAIL,
                "model 'claude-sonnet-4-6' matching 'SONNET' used in 2 LLM spans; models used: "
                "'claude-sonnet-4-6', 'claude-haiku-4-5'",
            ),
        ),
    ],
)
def test_model_used_matches_by_substring_ignoring_case(
    evaluate: Evaluate, assertion: str, expected: tuple[Status, str]
) -> None:
    assert outcome(evaluate(f"type: model_used\n{assertion}", MODELS)) == expected


def test_model_used_skips_when_no_llm_span_records_a_model(evaluate: Evaluate) -> None:
    found = trace(span("l1", LLM), span("l2", LLM))
    for field in ("expected", "not_expected"):
        verdict = evaluate(f"{{type: model_used, {field}: opus}}", found)
        assert outcome(verdict) == (Status.SKIP, "no model recorded on the trace's 2 LLM spans")


def test_model_used_without_any_llm_span(evaluate: Evaluate) -> None:
    found = trace(*tools("read"))
    assert outcome(evaluate("{type: model_used, expected: sonnet}", found)) == (
        Status.FAIL,
        "no model matching 'sonnet'; no LLM spans",
    )
    assert evaluate("{type: model_used, not_expected: opus}", found).status == Status.PASS


# -- delegation_path --------------------------------------------------------------------------

NESTED_AGENTS = trace(
    span("root", AGENT, "openclaw.run", agent_name="orchestrator", start_ms=0.0),
    span("spawn", TOOL, tool_name="sessions_spawn", parent_id="root", start_ms=1.0),
    span("c", AGENT, "openclaw.run", agent_name="copywriter", parent_id="spawn", start_ms=2.0),
    # the copywriter's own nested run is not a new delegation
    span("c2", AGENT, "openclaw.run", agent_name="copywriter", parent_id="c", start_ms=3.0),
    span("b", AGENT, "openclaw.run", agent_name="brand-guardian", parent_id="root", start_ms=5.0),
)
OPIK_SUBAGENTS = trace(
    span("root", GENERAL, "agent-turn", start_ms=0.0),
    span("s2", GENERAL, "subagent:brand-guardian", parent_id="root", start_ms=9.0),
    span("s1", GENERAL, "subagent:copywriter", parent_id="root", start_ms=4.0),
)
SESSION_KEYS = trace(
    span("root", AGENT, "openclaw.run", start_ms=0.0),
    span(
        "x",
        GENERAL,
        "openclaw.harness.run",
        attributes={"openclaw.session_key": "agent:copywriter:subagent:7f3a"},
        start_ms=2.0,
    ),
)


@pytest.mark.parametrize(
    ("found", "expected", "status", "message"),
    [
        (
            NESTED_AGENTS,
            "[orchestrator, copywriter, brand-guardian]",
            Status.PASS,
            "delegation path orchestrator → copywriter → brand-guardian found in orchestrator → "
            "copywriter → brand-guardian (from sub-agent spans)",
        ),
        (
            NESTED_AGENTS,
            "[brand-guardian, copywriter]",
            Status.FAIL,
            "delegation to 'copywriter' after 'brand-guardian' not found; actual path "
            "orchestrator → copywriter → brand-guardian (from sub-agent spans)",
        ),
        (
            OPIK_SUBAGENTS,
            "[copywriter, brand-guardian]",
            Status.PASS,
            "delegation path copywriter → brand-guardian found in copywriter → brand-guardian "
            "(from sub-agent spans)",
        ),
        (
            SESSION_KEYS,
            "[Copywriter]",
            Status.PASS,
            "delegation path Copywriter found in copywriter (from sub-agent spans)",
        ),
    ],
)
def test_delegation_path_from_sub_agent_spans_is_an_ordered_subsequence(
    evaluate: Evaluate, found: Trace, expected: str, status: Status, message: str
) -> None:
    verdict = evaluate(f"{{type: delegation_path, expected: {expected}}}", found)
    assert outcome(verdict) == (status, message)


NO_SUBAGENTS = trace(span("root", AGENT, "openclaw.run", agent_name="main"), *tools("read"))


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("router-state.yaml", "path: [orchestrator, copywriter, brand-guardian]\n"),
        (
            "decisions.json",
            json.dumps(
                [{"agent": "orchestrator"}, {"to": "copywriter"}, {"routed_to": "brand-guardian"}]
            ),
        ),
        (
            "routing.yaml",
            "routing:\n  delegations:\n    - orchestrator\n    - copywriter\n"
            "    - {agent_id: brand-guardian}\n",
        ),
        ("top.yaml", "- orchestrator\n- copywriter\n- brand-guardian\n"),
    ],
)
def test_delegation_path_falls_back_to_routing_files_without_sub_agent_spans(
    evaluate: Evaluate, tmp_path: Path, name: str, content: str
) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    text = (
        f"{{type: delegation_path, expected: [orchestrator, brand-guardian], state_path: {name}}}"
    )
    verdict = evaluate(text, NO_SUBAGENTS)
    assert outcome(verdict) == (
        Status.PASS,
        "delegation path orchestrator → brand-guardian found in orchestrator → copywriter → "
        f"brand-guardian (from routing data '{name}')",
    )
    wrong = text.replace("[orchestrator, brand-guardian]", "[brand-guardian, orchestrator]")
    assert evaluate(wrong, NO_SUBAGENTS).status == Status.FAIL


def test_delegation_path_uses_the_first_routing_file_that_lists_agents(
    evaluate: Evaluate, tmp_path: Path
) -> None:
    (tmp_path / "empty.yaml").write_text("status: done\n", encoding="utf-8")
    (tmp_path / "decisions.yaml").write_text("decisions: [{to: copywriter}]\n", encoding="utf-8")
    verdict = evaluate(
        "{type: delegation_path, expected: [copywriter], routing_path: missing.yaml,"
        " routing_decisions: empty.yaml, state_path: decisions.yaml}",
        NO_SUBAGENTS,
    )
    assert outcome(verdict) == (
        Status.PASS,
        "delegation path copywriter found in copywriter (from routing data 'decisions.yaml')",
    )


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ("", "no routing fallback configured"),
        (", routing_path: missing.yaml", "'missing.yaml' not found"),
        (", state_path: empty.yaml", "no agents listed in 'empty.yaml'"),
    ],
)
def test_delegation_path_warns_without_sub_agent_spans_or_routing_data(
    evaluate: Evaluate, tmp_path: Path, fields: str, why: str
) -> None:
    (tmp_path / "empty.yaml").write_text("status: done\n", encoding="utf-8")
    verdict = evaluate(f"{{type: delegation_path, expected: [copywriter]{fields}}}", NO_SUBAGENTS)
    assert outcome(verdict) == (
        Status.WARN,
        f"no sub-agent spans in trace 't1' and no routing data ({why}); "
        "delegation path not checked",
    )


def test_delegation_path_errors_on_unreadable_routing_data(
    evaluate: Evaluate, tmp_path: Path
) -> None:
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    verdict = evaluate(
        "{type: delegation_path, expected: [a], routing_path: bad.json}", NO_SUBAGENTS
    )
    assert verdict.status == Status.ERROR
    assert verdict.message.startswith("cannot read routing data 'bad.json': Expecting property")


# -- per_span_budget --------------------------------------------------------------------------

BUDGET = trace(
    span("l1", LLM, "summarize", total_tokens=8000),
    span("l2", LLM, "plan", input_tokens=7000, output_tokens=1001),
    span("l3", LLM, "summarize-again", input_tokens=100),
    span("t", TOOL, "fetch", total_tokens=50_000),
    span("l4", LLM, "no-usage"),
)


@pytest.mark.parametrize(
    ("assertion", "status", "message"),
    [
        ("max_tokens: 8001", Status.PASS, "largest of 3 llm spans: 8,001 tokens ≤ 8,001"),
        (
            "max_tokens: 8000",
            Status.FAIL,
            "1 span over 8,000 tokens: 'plan' 8,001",
        ),
        (
            "max_tokens: 99",
            Status.FAIL,
            "3 spans over 99 tokens: 'summarize' 8,000, 'plan' 8,001, 'summarize-again' 100",
        ),
        (
            "{max_tokens: 8000, span_name: summarize}",
            Status.PASS,
            "largest of 2 llm spans named like 'summarize': 8,000 tokens ≤ 8,000",
        ),
        (
            "{max_tokens: 1000, span_type: tool}",
            Status.FAIL,
            "1 span over 1,000 tokens: 'fetch' 50,000",
        ),
        ("{max_tokens: 10, span_type: agent}", Status.SKIP, "no agent span in trace 't1'"),
        (
            "{max_tokens: 10, span_name: no-usage}",
            Status.SKIP,
            "no token counts on the trace's 1 llm span named like 'no-usage'",
        ),
    ],
)
def test_per_span_budget_at_the_limit_passes_and_one_over_fails(
    evaluate: Evaluate, assertion: str, status: Status, message: str
) -> None:
    text = f"{{type: per_span_budget, {assertion.strip('{}')}}}"
    assert outcome(evaluate(text, BUDGET)) == (status, message)


def test_per_span_budget_lists_every_violating_span_in_details(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: per_span_budget, max_tokens: 99}", BUDGET)
    assert verdict.details == (
        "llm span 'summarize' (id l1): 8,000 tokens > 99",
        "llm span 'plan' (id l2): 8,001 tokens > 99",
        "llm span 'summarize-again' (id l3): 100 tokens > 99",
    )
    assert (verdict.value, verdict.limit) == (8001, 99)


# -- trace_token_budget -----------------------------------------------------------------------

USAGE = trace(
    span("a", AGENT, "openclaw.run", input_tokens=9999, output_tokens=9999),  # the total again
    span("l1", LLM, input_tokens=1200, output_tokens=300, parent_id="a"),
    span("l2", LLM, input_tokens=800, output_tokens=200, parent_id="a"),
    span("u", GENERAL, "openclaw.model.usage", input_tokens=2000, output_tokens=500),
)
# No LLM span carries tokens: the innermost spans that do are summed (not their parents).
NESTED_USAGE = trace(
    span("a", AGENT, "openclaw.run", input_tokens=700, output_tokens=70),
    span("h", GENERAL, "openclaw.harness.run", parent_id="a"),
    span("u1", GENERAL, "usage", parent_id="h", input_tokens=400, output_tokens=40),
    span("u2", GENERAL, "usage", parent_id="h", input_tokens=300, output_tokens=30),
    span("l", LLM, parent_id="h"),
)


@pytest.mark.parametrize(
    ("found", "assertion", "status", "message"),
    [
        (
            USAGE,
            "max_input_tokens: 2000, max_output_tokens: 500",
            Status.PASS,
            "input tokens 2,000 ≤ 2,000, output tokens 500 ≤ 500 (summed over 2 LLM spans)",
        ),
        (
            USAGE,
            "max_input_tokens: 2000, max_output_tokens: 499",
            Status.FAIL,
            "output tokens 500 > 499, input tokens 2,000 ≤ 2,000 (summed over 2 LLM spans)",
        ),
        (
            USAGE,
            "max_input_tokens: 1999",
            Status.FAIL,
            "input tokens 2,000 > 1,999 (summed over 2 LLM spans)",
        ),
        (
            NESTED_USAGE,
            "max_input_tokens: 700, max_output_tokens: 70",
            Status.PASS,
            "input tokens 700 ≤ 700, output tokens 70 ≤ 70 (summed over 2 spans)",
        ),
        (
            trace(span("l", LLM, total_tokens=10)),
            "max_output_tokens: 5",
            Status.SKIP,
            "no input/output token counts in trace 't1'",
        ),
    ],
)
def test_trace_token_budget_sums_without_double_counting(
    evaluate: Evaluate, found: Trace, assertion: str, status: Status, message: str
) -> None:
    verdict = evaluate(f"{{type: trace_token_budget, {assertion}}}", found)
    assert outcome(verdict) == (status, message)


# -- trace_duration ---------------------------------------------------------------------------

TIMED = [
    span("a", AGENT, start_ms=1000.0, end_ms=20_000.0),
    span("l", LLM, parent_id="a", start_ms=2000.0, end_ms=42_200.0),
    span("t", TOOL, parent_id="a", start_ms=500.0, duration_ms=100.0),
]
UNTIMED = [
    span("a", AGENT, duration_ms=3000.0),
    span("l", LLM, parent_id="a", duration_ms=2500.0),  # inside its parent's time
    span("b", AGENT),  # no duration of its own: its children's
    span("b1", TOOL, parent_id="b", duration_ms=400.0),
    span("b2", TOOL, parent_id="b", duration_ms=600.0),
]


@pytest.mark.parametrize(
    ("found", "max_ms", "status", "message"),
    [
        (
            trace(*TIMED, start_ms=0.0, end_ms=30_000.0),
            30_000,
            Status.PASS,
            "trace duration 30 s ≤ 30 s (from trace envelope)",
        ),
        (
            trace(*TIMED, start_ms=0.0, end_ms=30_001.0),
            30_000,
            Status.FAIL,
            "trace duration 30 s > 30 s (from trace envelope)",
        ),
        (trace(*TIMED), 41_700, Status.PASS, "trace duration 41.7 s ≤ 41.7 s (from span times)"),
        (trace(*TIMED), 30_000, Status.FAIL, "trace duration 41.7 s > 30 s (from span times)"),
        (
            trace(*UNTIMED),
            4000,
            Status.PASS,
            "trace duration 4 s ≤ 4 s (from sum of span durations)",
        ),
        (
            trace(*UNTIMED),
            3999,
            Status.FAIL,
            "trace duration 4 s > 4 s (from sum of span durations)",
        ),
        (trace(span("x", TOOL)), 10, Status.SKIP, "no timing data in trace 't1'"),
        (
            trace(span("x", TOOL, duration_ms=250.0)),
            1000,
            Status.PASS,
            "trace duration 250 ms ≤ 1 s (from sum of span durations)",
        ),
    ],
)
def test_trace_duration_envelope_then_span_times_then_durations(
    evaluate: Evaluate, found: Trace, max_ms: int, status: Status, message: str
) -> None:
    verdict = evaluate(f"{{type: trace_duration, max_ms: {max_ms}}}", found)
    assert outcome(verdict) == (status, message)


def test_trace_duration_reports_exact_value_and_limit(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: trace_duration, max_ms: 30000}", trace(*TIMED))
    assert (verdict.value, verdict.limit) == (41_700.0, 30_000)


# -- trace_cost -------------------------------------------------------------------------------

PRICING = Settings.model_validate(
    {
        "model_pricing": {
            "claude": {"input_per_mtok": 100, "output_per_mtok": 100},
            "claude-sonnet": {"input_per_mtok": 2, "output_per_mtok": 4},
        }
    }
)
PRICED = trace(
    span("l1", LLM, model="claude-sonnet-4-6", input_tokens=500_000, output_tokens=125_000),
    span("l2", LLM, model="Claude-Sonnet-4-6", input_tokens=0, output_tokens=125_000),
)


@pytest.mark.parametrize(
    ("found", "settings", "max_usd", "status", "message"),
    [
        (
            trace(span("l", LLM, cost_usd=0.5), cost_usd=0.0712),
            None,
            0.0712,
            Status.PASS,
            "trace cost $0.0712 ≤ $0.0712 (native cost of trace 't1')",
        ),
        (
            trace(span("l", LLM, cost_usd=0.5), cost_usd=0.0712),
            None,
            0.07,
            Status.FAIL,
            "trace cost $0.0712 > $0.07 (native cost of trace 't1')",
        ),
        (
            trace(
                span("l1", LLM, cost_usd=0.25),
                span("l2", LLM, cost_usd=0.5),
                span("u", GENERAL, "openclaw.model.usage", cost_usd=0.75),
            ),
            None,
            0.75,
            Status.PASS,
            "trace cost $0.75 ≤ $0.75 (native cost of 2 LLM spans)",
        ),
        (
            trace(span("l1", LLM), span("u", GENERAL, "openclaw.model.usage", cost_usd=1.5)),
            PRICING,
            1.25,
            Status.FAIL,
            "trace cost $1.5 > $1.25 (native cost of 1 span)",
        ),
        (
            PRICED,
            PRICING,
            2.0,
            Status.PASS,
            "trace cost $2 ≤ $2 (estimated from model_pricing for 2 spans)",
        ),
        (
            PRICED,
            PRICING,
            1.999999,
            Status.FAIL,
            "trace cost $2 > $1.999999 (estimated from model_pricing for 2 spans)",
        ),
        (
            PRICED,
            None,
            2.0,
            Status.WARN,
            "no cost data and no model_pricing for 'claude-sonnet-4-6', 'Claude-Sonnet-4-6'; "
            "cost not checked",
        ),
        (
            trace(
                span("l1", LLM, model="claude-sonnet-4-6", input_tokens=1_000_000),
                span("l2", LLM, model="gpt-4o", input_tokens=1_000_000),
            ),
            PRICING,
            1.0,
            Status.FAIL,
            "trace cost $2 > $1 (estimated from model_pricing for 1 span; not priced: 'gpt-4o')",
        ),
        (
            trace(
                span("l1", LLM, model="claude-sonnet-4-6", input_tokens=1000),
                span("l2", LLM, model="gpt-4o", input_tokens=1000),
            ),
            PRICING,
            1.0,
            Status.WARN,
            "no cost data and no model_pricing for 'gpt-4o'; cost not checked",
        ),
        (
            trace(span("l", LLM)),
            PRICING,
            1.0,
            Status.WARN,
            "no cost data and no token counts in trace 't1'; cost not checked",
        ),
    ],
)
def test_trace_cost_native_then_model_pricing_then_warn(
    evaluate: Evaluate,
    found: Trace,
    settings: Settings | None,
    max_usd: float,
    status: Status,
    message: str,
) -> None:
    verdict = evaluate(f"{{type: trace_cost, max_usd: {max_usd}}}", found, settings)
    assert outcome(verdict) == (status, message)


def test_trace_cost_uses_the_longest_matching_price_key(evaluate: Evaluate) -> None:
    # 'claude' (100/Mtok) also matches, but 'claude-sonnet' (2/4 per Mtok) is more specific.
    verdict = evaluate("{type: trace_cost, max_usd: 5}", PRICED, PRICING)
    assert verdict.value == 2.0


# -- no_span_errors ---------------------------------------------------------------------------


def test_no_span_errors_passes_with_the_span_count(evaluate: Evaluate) -> None:
    verdict = evaluate("type: no_span_errors", trace(*tools("a", "b"), span("l", LLM, error="")))
    assert outcome(verdict) == (Status.PASS, "no errors in 3 spans")


def test_no_span_errors_lists_every_errored_span_with_type_and_message(
    evaluate: Evaluate,
) -> None:
    found = trace(
        span("t", TOOL, "resend.send", error="401 Unauthorized", start_ms=5.0),
        span("l", LLM, error="rate limited\nretry after 30 s", start_ms=1.0),
        span("ok", TOOL, "read", start_ms=2.0),
    )
    verdict = evaluate("type: no_span_errors", found)
    assert outcome(verdict) == (
        Status.FAIL,
        "2 spans with errors: llm 'openclaw.model.call': rate limited retry after 30 s "
        "… and 1 more",
    )
    assert verdict.details == (
        "llm 'openclaw.model.call': rate limited retry after 30 s",
        "tool 'resend.send': 401 Unauthorized",
    )


# -- tool_not_invoked -------------------------------------------------------------------------


def test_tool_not_invoked_passes_when_the_trace_shows_other_tools(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: tool_not_invoked, tool: resend.send}", CALLS)
    assert outcome(verdict) == (
        Status.FAIL,
        "tool 'resend.send' invoked 1 time (in 5 spans of trace 't1')",
    )
    verdict = evaluate("{type: tool_not_invoked, tool: slack.post}", CALLS)
    assert outcome(verdict) == (
        Status.PASS,
        "tool 'slack.post' not invoked among 4 tool calls: 'memory.search', 'attio.read', "
        "'resend.send'",
    )


def test_tool_not_invoked_counts_every_call(evaluate: Evaluate) -> None:
    verdict = evaluate("{type: tool_not_invoked, tool: memory.search}", CALLS)
    assert verdict.status == Status.FAIL
    assert verdict.message.startswith("tool 'memory.search' invoked 2 times")


# -- skip propagation -------------------------------------------------------------------------

EVERY_TRACE_ASSERTION = [
    "{type: llm_call_count, min: 1}",
    "{type: tool_sequence, expected: [read]}",
    "{type: model_used, not_expected: opus}",
    "{type: delegation_path, expected: [a], state_path: routing.yaml}",
    "{type: per_span_budget, max_tokens: 1}",
    "{type: trace_token_budget, max_input_tokens: 1}",
    "{type: trace_duration, max_ms: 1}",
    "{type: trace_cost, max_usd: 0}",
    "{type: no_span_errors}",
    "{type: tool_not_invoked, tool: resend.send}",
]


@pytest.mark.parametrize("assertion", EVERY_TRACE_ASSERTION)
def test_every_trace_assertion_skips_with_the_reason_when_the_trace_is_unavailable(
    evaluate: Evaluate, tmp_path: Path, assertion: str
) -> None:
    # Routing data does not stand in for a missing trace: no trace → skip, for all ten.
    (tmp_path / "routing.yaml").write_text("path: [a]\n", encoding="utf-8")
    reason = "trace backend 'phoenix' unreachable at 127.0.0.1:6006: connection refused"
    verdict = evaluate(assertion, TraceUnavailable(reason))
    assert outcome(verdict) == (Status.SKIP, reason)


def test_every_trace_type_is_covered_here() -> None:
    names = {
        text.strip("{}").split(",")[0].removeprefix("type: ") for text in EVERY_TRACE_ASSERTION
    }
    trace_types = {name for name, spec in REGISTRY.items() if spec.category == "trace"}
    assert names == trace_types


# -- through the runner -----------------------------------------------------------------------

TOKEN = "hook-token-5a4b3c2d1e"
TRACE_ONLY = """version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: traced
    when: {invoke: "/send-newsletter"}
    then:
      - type: llm_call_count
        max: 4
      - type: tool_not_invoked
        tool: resend.send
"""


@pytest.fixture
def hooks(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, workspace) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        yield server


def test_runner_skips_trace_assertions_without_a_backend_and_honours_the_skip_budget(
    workspace: Path, write_contract: Callable[..., Path], hooks: HooksServer
) -> None:
    config = workspace / "clawspec.yaml"
    config.write_text("report_dir: reports\nobservability: {backend: none}\n", encoding="utf-8")
    write_contract(TRACE_ONLY)
    assert main(["run", "."]) == 0
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    (scenario,) = report["scenarios"]
    assert scenario["status"] == "skip"
    assert scenario["trace"] is None
    assert [(a["status"], a["message"]) for a in scenario["assertions"]] == [
        ("skip", "no observability backend configured"),
        ("skip", "no observability backend configured"),
    ]
    assert len(hooks.requests) == 1  # the agent ran; only the trace evidence is missing
    assert main(["run", ".", "--max-skipped", "0"]) == 1


def test_a_scenario_whose_trace_assertions_skipped_counts_against_the_skip_budget(
    workspace: Path,
    write_contract: Callable[..., Path],
    hooks: HooksServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The backend down while the scenario's file assertion passed: the scenario passes, but
    the outage is said, and `--max-skipped 0` (the guard against silent outages) fails it."""
    summary = workspace / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    config = workspace / "clawspec.yaml"
    config.write_text("report_dir: reports\nobservability: {backend: none}\n", encoding="utf-8")
    write_contract(
        TRACE_ONLY.replace(
            "    then:\n", "    then:\n      - {type: file_absent, path: never/written.md}\n", 1
        )
    )
    assert main(["run", "."]) == 0
    out = capsys.readouterr().out
    assert "SKIP  2 assertions in 1 scenario that ran: no observability backend configured" in out
    said = "**2 assertions** in 1 scenario that ran: no observability backend configured"
    assert said in summary.read_text("utf-8")
    assert main(["run", ".", "--max-skipped", "0"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: 1 scenario with skipped assertions, over max_skipped (0)" in out
    assert main(["run", ".", "--max-skipped", "1"]) == 0


# -- Tool Search wrappers and late sub-agents ----------------------------------------------------


def _wrapped(*names: str) -> list[Span]:
    """Each call made through Tool Search's `tool_call`: the wrapper span, then the inner one."""
    spans: list[Span] = []
    for i, name in enumerate(names):
        spans.append(span(f"w{i}", TOOL, tool_name="tool_call", start_ms=2.0 * i,
                          attributes={"gen_ai.tool.call.id": f"call_{i}"}))  # fmt: skip
        inner = f"tool_search_code:call_{i}:{name}:1"
        spans.append(span(f"i{i}", TOOL, tool_name=name, start_ms=2.0 * i + 1,
                          attributes={"gen_ai.tool.call.id": inner}))  # fmt: skip
    return spans


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        ("type: tool_sequence\nmode: strict\nexpected: [sessions_spawn, write]", Status.PASS),
        ("type: tool_not_invoked\ntool: tool_call", Status.FAIL),  # a control, named: counted
        ("type: tool_not_invoked\ntool: exec", Status.PASS),
        ("type: tool_not_invoked\ntool: write", Status.FAIL),
    ],
)
def test_tool_search_wrappers_count_as_the_tools_they_call(
    evaluate: Evaluate, assertion: str, status: Status
) -> None:
    found = trace(*_wrapped("sessions_spawn"), *tools("x", "write")[1:])
    assert evaluate(assertion, found).status == status


PENDING = ("sub-agent spawned at 2026-11-25T10:00:00.000+00:00 never appeared in the trace "
           "(waited 60.0 s)",)  # fmt: skip


@pytest.mark.parametrize(
    "assertion",
    [
        "type: tool_not_invoked\ntool: exec",
        "type: no_span_errors",
        "type: llm_call_count\nmax: 10",
        "type: llm_call_count\nmin: 5",
        "type: tool_sequence\nmode: strict\nexpected: [sessions_spawn]",
        "type: tool_sequence\nexpected: [sessions_spawn, write]",
        "type: model_used\nnot_expected: gpt",
        "type: model_used\nexpected: claude",
        "type: trace_token_budget\nmax_input_tokens: 1000",
        "type: per_span_budget\nmax_tokens: 1000",
        "type: trace_duration\nmax_ms: 100000",
        "type: delegation_path\nexpected: [main, brand]",
    ],
)
def test_an_incomplete_trace_makes_verdicts_the_missing_spans_could_change_errors(
    evaluate: Evaluate, assertion: str
) -> None:
    spans = [*_wrapped("sessions_spawn"), span("l0", LLM, model="fake-model", input_tokens=10,
             output_tokens=1, start_ms=0.0, end_ms=5.0)]  # fmt: skip
    status, message = outcome(evaluate(assertion, trace(*spans, pending=PENDING)))
    assert status == Status.ERROR, message
    assert f"but the trace is incomplete: {PENDING[0]} (the wait follows" in message


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        ("type: tool_not_invoked\ntool: sessions_spawn", Status.FAIL),
        ("type: llm_call_count\nmin: 1", Status.PASS),
        ("type: llm_call_count\nmax: 0", Status.FAIL),
        ("type: tool_sequence\nmode: contains\nexpected: [sessions_spawn]", Status.PASS),
    ],
)
def test_verdicts_more_spans_cannot_change_stand_on_an_incomplete_trace(
    evaluate: Evaluate, assertion: str, status: Status
) -> None:
    spans = [*_wrapped("sessions_spawn"), span("l0", LLM, model="fake-model")]
    assert evaluate(assertion, trace(*spans, pending=PENDING)).status == status
