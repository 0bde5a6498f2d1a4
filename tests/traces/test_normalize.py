"""The attribute conventions every backend maps through: OTel GenAI, OpenInference, OpenClaw."""

from __future__ import annotations

from typing import Any

import pytest

from clawspec.traces.model import Span, SpanType
from clawspec.traces.normalize import make_span, span_type


def span(name: str, attributes: dict[str, Any], **explicit: Any) -> Span:
    return make_span(id="s1", trace_id="t1", name=name, attributes=attributes, **explicit)


@pytest.mark.parametrize(
    ("name", "attributes", "kind_hint", "expected"),
    [
        ("openclaw.model.call", {}, None, SpanType.LLM),
        ("openclaw.tool.execution", {}, None, SpanType.TOOL),
        ("openclaw.run", {}, None, SpanType.AGENT),
        ("openclaw.harness.run", {}, None, SpanType.GENERAL),
        # model.usage is a summary of the calls, never an LLM call of its own
        ("openclaw.model.usage", {"gen_ai.operation.name": "chat"}, None, SpanType.GENERAL),
        ("ChatCompletion", {"openinference.span.kind": "LLM"}, None, SpanType.LLM),
        ("search", {"openinference.span.kind": "TOOL"}, None, SpanType.TOOL),
        ("router", {"openinference.span.kind": "AGENT"}, None, SpanType.AGENT),
        ("step", {"openinference.span.kind": "CHAIN"}, None, SpanType.GENERAL),
        ("chat gpt-4o", {"gen_ai.operation.name": "chat"}, None, SpanType.LLM),
        ("execute_tool x", {"gen_ai.operation.name": "execute_tool"}, None, SpanType.TOOL),
        ("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}, None, SpanType.AGENT),
        ("anything", {}, "llm", SpanType.LLM),
        ("anything", {}, "generation", SpanType.LLM),
        ("anything", {}, "guardrail", SpanType.GENERAL),
        ("anything", {}, None, SpanType.GENERAL),
    ],
)
def test_span_type_follows_openclaw_names_then_conventions_then_the_backend_kind(
    name: str, attributes: dict[str, Any], kind_hint: str | None, expected: SpanType
) -> None:
    assert span_type(name, attributes, kind_hint) == expected


def test_otel_genai_attributes_fill_model_tokens_tool_and_agent() -> None:
    result = span(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "claude-sonnet-4-6",
            "gen_ai.response.model": "claude-sonnet-4-6-20260101",
            "gen_ai.usage.input_tokens": 1200,
            "gen_ai.usage.output_tokens": "300",
            "gen_ai.tool.name": "memory.search",
            "gen_ai.agent.name": "copywriter",
        },
    )
    assert result.type == SpanType.LLM
    assert result.model == "claude-sonnet-4-6-20260101"  # the response model wins
    assert (result.input_tokens, result.output_tokens, result.total_tokens) == (1200, 300, None)
    assert result.tokens == 1500
    assert result.tool_name == "memory.search"
    assert result.agent_name == "copywriter"


def test_openinference_attributes_fill_model_tokens_cost_and_tool() -> None:
    result = span(
        "ChatCompletion",
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o-mini",
            "llm.token_count.prompt": 10,
            "llm.token_count.completion": 5,
            "llm.token_count.total": 16,
            "llm.cost.total": "0.0021",
            "tool.name": "web.fetch",
        },
    )
    assert result.model == "gpt-4o-mini"
    assert (result.input_tokens, result.output_tokens, result.total_tokens) == (10, 5, 16)
    assert result.tokens == 16  # a reported total wins over input + output
    assert result.cost_usd == pytest.approx(0.0021)
    assert result.tool_name == "web.fetch"


def test_openclaw_attributes_fill_tool_agent_and_cost() -> None:
    result = span(
        "openclaw.tool.execution",
        {
            "openclaw.tool.name": "sessions_spawn",
            "openclaw.agent_id": "main",
            "openclaw.cost_usd": 1,
        },
    )
    assert result.type == SpanType.TOOL
    assert result.tool_name == "sessions_spawn"
    assert result.agent_name == "main"
    assert result.cost_usd == 1.0


def test_explicit_backend_values_win_over_attributes() -> None:
    result = span(
        "llm",
        {"gen_ai.request.model": "attr-model", "gen_ai.usage.input_tokens": 1},
        model="native-model",
        input_tokens=0,
        cost_usd=0.0,
        kind_hint="llm",
    )
    assert result.model == "native-model"
    assert result.input_tokens == 0  # an explicit zero is a value, not "unknown"
    assert result.cost_usd == 0.0


@pytest.mark.parametrize(
    ("attributes", "error"),
    [
        ({"exception.message": "boom"}, "boom"),
        ({"error.message": "rate limited"}, "rate limited"),
        ({}, None),
    ],
)
def test_error_comes_from_exception_or_error_message(
    attributes: dict[str, Any], error: str | None
) -> None:
    assert span("x", attributes).error == error


def test_unparseable_and_empty_numbers_are_unknown_not_zero() -> None:
    result = span(
        "x",
        {
            "gen_ai.usage.input_tokens": "n/a",
            "gen_ai.usage.output_tokens": "",
            "llm.cost.total": [],
        },
    )
    assert (result.input_tokens, result.output_tokens, result.cost_usd) == (None, None, None)
    assert result.tokens is None


def test_empty_parent_id_means_a_root_span() -> None:
    assert span("x", {}, parent_id="").parent_id is None


def test_elapsed_prefers_span_times_over_the_reported_duration() -> None:
    timed = Span("s", "t", "x", SpanType.TOOL, start_ms=1000.0, end_ms=1250.0, duration_ms=9.0)
    untimed = Span("s", "t", "x", SpanType.TOOL, duration_ms=9.0)
    assert (timed.elapsed_ms, untimed.elapsed_ms) == (250.0, 9.0)
