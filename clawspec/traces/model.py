"""The one normalized span model every trace backend maps into ."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class SpanType(StrEnum):
    """What a span stands for; the `span_type` values contracts filter on."""

    LLM = "llm"
    TOOL = "tool"
    AGENT = "agent"
    GENERAL = "general"


@dataclass(frozen=True)
class Span:
    """One span. Times are epoch milliseconds; tokens and cost are None when unknown."""

    id: str
    trace_id: str
    name: str
    type: SpanType
    parent_id: str | None = None
    start_ms: float | None = None
    end_ms: float | None = None
    duration_ms: float | None = None  # as reported by the backend (Opik: already ms)
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None
    tool_name: str | None = None  # for tool spans: the tool (gen_ai.tool.name, tool.name, ...)
    agent_name: str | None = None  # for agent spans: the (sub-)agent id
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int | None:
        """Total tokens: the reported total, else input + output, else None."""
        if self.total_tokens is not None:
            return self.total_tokens
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    @property
    def elapsed_ms(self) -> float | None:
        """The span's duration: end - start when both are known, else the reported duration."""
        if self.start_ms is not None and self.end_ms is not None:
            return max(0.0, self.end_ms - self.start_ms)
        return self.duration_ms


@dataclass(frozen=True)
class Trace:
    """A scenario's trace: its spans in start order, and the envelope times when known."""

    id: str
    backend: str
    spans: tuple[Span, ...]
    start_ms: float | None = None  # the trace envelope (backends that have one)
    end_ms: float | None = None
    url: str | None = None  # a link to the trace in the backend's UI, where it has one
    cost_usd: float | None = None  # native total cost of the trace, where the backend has it
    # Evidence still missing when the wait for it ended (a spawned sub-agent that never showed
    # up or did not finish): verdicts the missing spans could change are `error`.
    pending: tuple[str, ...] = ()

    def of_type(self, span_type: SpanType) -> list[Span]:
        return [span for span in self.spans if span.type == span_type]


class TraceUnavailable(Exception):
    """The trace cannot be had: every trace assertion of the scenario is `skip` with `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
