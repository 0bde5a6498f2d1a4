"""Trace assertions: evaluate the run's spans from the observability backend."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from clawspec.assertions.base import Assertion, Need, WorkspacePath
from clawspec.assertions.registry import register


@register(category="trace", needs={Need.TRACE}, implemented=False, example="min: 1\nmax: 4")
class LlmCallCount(Assertion):
    """The number of LLM spans in the trace is within bounds."""

    one_of = (("min", "max"),)
    type: Literal["llm_call_count"]
    min: int | None = Field(None, ge=0, description="Minimum number of LLM calls.")
    max: int | None = Field(None, ge=0, description="Maximum number of LLM calls.")


@register(
    category="trace",
    needs={Need.TRACE},
    implemented=False,
    example="expected: [memory.search, resend.send]\nmode: ordered",
)
class ToolSequence(Assertion):
    """Tool calls appear in the expected order (ordered, strict or contains)."""

    type: Literal["tool_sequence"]
    expected: list[str] = Field(min_length=1, description="Tool names in order.")
    mode: Literal["ordered", "strict", "contains"] = Field("ordered", description="Match mode.")


@register(
    category="trace", needs={Need.TRACE}, implemented=False, example="expected: claude-sonnet-4-6"
)
class ModelUsed(Assertion):
    """A model (by substring) was, or was not, used in the LLM spans."""

    exactly_one_of = (("expected", "not_expected"),)
    type: Literal["model_used"]
    expected: str | None = Field(None, description="Substring that must appear in a model name.")
    not_expected: str | None = Field(None, description="Substring no model name may contain.")


@register(
    category="trace",
    needs={Need.TRACE},
    implemented=False,
    example="expected: [orchestrator, copywriter, brand-guardian]",
)
class DelegationPath(Assertion):
    """Sub-agent delegations followed the expected path (ordered subsequence)."""

    type: Literal["delegation_path"]
    expected: list[str] = Field(min_length=1, description="Agent names, in order.")
    routing_path: WorkspacePath | None = Field(None, description="Fallback routing data file.")
    routing_decisions: WorkspacePath | None = Field(None, description="Fallback routing file.")
    state_path: WorkspacePath | None = Field(None, description="Fallback router state file.")


@register(
    category="trace",
    needs={Need.TRACE},
    implemented=False,
    example="max_tokens: 8000\nspan_type: llm",
)
class PerSpanBudget(Assertion):
    """No single span exceeds a token budget."""

    type: Literal["per_span_budget"]
    max_tokens: int = Field(ge=0, description="Maximum tokens per span.")
    span_type: Literal["llm", "tool", "agent", "general"] = Field("llm", description="Span type.")
    span_name: str | None = Field(None, description="Only spans whose name contains this.")


@register(
    category="trace",
    needs={Need.TRACE},
    implemented=False,
    example="max_input_tokens: 20000\nmax_output_tokens: 8000",
)
class TraceTokenBudget(Assertion):
    """Total token usage across all spans stays within bounds."""

    one_of = (("max_input_tokens", "max_output_tokens"),)
    type: Literal["trace_token_budget"]
    max_input_tokens: int | None = Field(None, ge=0, description="Maximum total input tokens.")
    max_output_tokens: int | None = Field(None, ge=0, description="Maximum total output tokens.")


@register(category="trace", needs={Need.TRACE}, implemented=False, example="max_ms: 30000")
class TraceDuration(Assertion):
    """The trace's wall-clock duration does not exceed a maximum."""

    type: Literal["trace_duration"]
    max_ms: float = Field(ge=0, description="Maximum duration in milliseconds.")


@register(category="trace", needs={Need.TRACE}, implemented=False, example="max_usd: 0.05")
class TraceCost(Assertion):
    """The trace's total cost does not exceed a maximum (native cost, else model_pricing)."""

    type: Literal["trace_cost"]
    max_usd: float = Field(ge=0, description="Maximum cost in USD.")


@register(category="trace", needs={Need.TRACE}, implemented=False, example="{}")
class NoSpanErrors(Assertion):
    """No span in the trace has an error."""

    type: Literal["no_span_errors"]


@register(category="trace", needs={Need.TRACE}, implemented=False, example="tool: resend.send")
class ToolNotInvoked(Assertion):
    """A tool was not called in the trace; needs the trace found."""

    type: Literal["tool_not_invoked"]
    tool: str = Field(description="Tool name that must not appear in any tool span.")
