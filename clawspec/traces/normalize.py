"""Map span attributes of the common conventions onto the normalized Span (one place for all
backends): OTel GenAI (`gen_ai.*`), OpenInference (`openinference.span.kind`, `llm.*`,
`tool.name`) and OpenClaw's own span names (`openclaw.model.call`, `openclaw.tool.execution`,
`openclaw.run`, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawspec.traces.model import Span, SpanType

# Backend- or convention-specific kind names → our span types.
KIND_NAMES = {
    "llm": SpanType.LLM,
    "generation": SpanType.LLM,
    "chat": SpanType.LLM,
    "text_completion": SpanType.LLM,
    "generate_content": SpanType.LLM,
    "tool": SpanType.TOOL,
    "execute_tool": SpanType.TOOL,
    "agent": SpanType.AGENT,
    "invoke_agent": SpanType.AGENT,
    "create_agent": SpanType.AGENT,
}
# OpenClaw span names (see openclaw-gateway.md "Traces"); model.usage is a summary, not a call.
OPENCLAW_NAMES = {
    "openclaw.model.call": SpanType.LLM,
    "openclaw.tool.execution": SpanType.TOOL,
    "openclaw.run": SpanType.AGENT,
    "openclaw.harness.run": SpanType.GENERAL,
    "openclaw.model.usage": SpanType.GENERAL,
}

MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "model")
INPUT_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
OUTPUT_KEYS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
TOTAL_KEYS = ("gen_ai.usage.total_tokens", "llm.token_count.total")
COST_KEYS = ("gen_ai.usage.cost", "llm.cost.total", "openclaw.cost_usd")
TOOL_KEYS = ("gen_ai.tool.name", "tool.name", "openclaw.tool.name")
AGENT_KEYS = ("gen_ai.agent.name", "gen_ai.agent.id", "openclaw.agent_id", "agent.name")


def first(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    """The first present, non-empty value among `keys`."""
    for key in keys:
        value = attributes.get(key)
        if value not in (None, ""):
            return value
    return None


def as_int(value: Any) -> int | None:
    try:
        return None if value in (None, "") else int(float(value))
    except (TypeError, ValueError):
        return None


def as_float(value: Any) -> float | None:
    try:
        return None if value in (None, "") else float(value)
    except (TypeError, ValueError):
        return None


def span_type(name: str, attributes: Mapping[str, Any], kind_hint: str | None = None) -> SpanType:
    """Decide the span's type: OpenClaw name, then OpenInference kind, GenAI operation, the
    backend's own kind, then `general`."""
    if name in OPENCLAW_NAMES:
        return OPENCLAW_NAMES[name]
    for value in (
        attributes.get("openinference.span.kind"),
        attributes.get("gen_ai.operation.name"),
        kind_hint,
    ):
        if isinstance(value, str) and value.lower() in KIND_NAMES:
            return KIND_NAMES[value.lower()]
    return SpanType.GENERAL


def make_span(
    *,
    id: str,
    trace_id: str,
    name: str,
    attributes: Mapping[str, Any],
    parent_id: str | None = None,
    start_ms: float | None = None,
    end_ms: float | None = None,
    duration_ms: float | None = None,
    kind_hint: str | None = None,
    error: str | None = None,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    total_tokens: int | None = None,
    cost_usd: float | None = None,
) -> Span:
    """Build a Span; explicit values (a backend's own fields) win over attribute conventions."""
    attrs = dict(attributes)
    return Span(
        id=id,
        trace_id=trace_id,
        name=name,
        type=span_type(name, attrs, kind_hint),
        parent_id=parent_id or None,
        start_ms=start_ms,
        end_ms=end_ms,
        duration_ms=duration_ms,
        model=model or first(attrs, MODEL_KEYS),
        input_tokens=input_tokens if input_tokens is not None else as_int(first(attrs, INPUT_KEYS)),
        output_tokens=(
            output_tokens if output_tokens is not None else as_int(first(attrs, OUTPUT_KEYS))
        ),
        total_tokens=total_tokens if total_tokens is not None else as_int(first(attrs, TOTAL_KEYS)),
        cost_usd=cost_usd if cost_usd is not None else as_float(first(attrs, COST_KEYS)),
        error=error or attrs.get("exception.message") or attrs.get("error.message") or None,
        tool_name=first(attrs, TOOL_KEYS),
        agent_name=first(attrs, AGENT_KEYS),
        attributes=attrs,
    )
