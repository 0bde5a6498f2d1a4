"""What a trace says: the facts the trace assertions judge and the report shows (tool calls with
Tool Search unwrapped, delegations, routing, token counts, duration, cost, pending sub-agents).
Pure functions of a `Trace`; finding the trace is `evidence.trace`'s job. The trace assertions
read spans through this module only (with the span types it gives them), never the trace readers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from clawspec.gateway.tool_search import CONTROLS, SPAWN_TOOL, Unwrapped, unwrap
from clawspec.text import pluralize
from clawspec.traces.model import Span, SpanType, Trace, TraceUnavailable
from clawspec.traces.scope import CHILD_SESSION

# The trace assertions take the model's types from here, with the facts below.
__all__ = [
    "Span",
    "SpanType",
    "Trace",
    "TraceUnavailable",
    "by_start",
    "counted_spans",
    "delegation_spans",
    "estimate_cost",
    "pending_subagents",
    "routing_agents",
    "span_usage",
    "tool_names",
    "tool_names_judged",
    "tool_spans",
    "trace_duration_ms",
]

# -- What the trace says: derived facts the trace assertions judge -------------------------------


def tool_names(trace: Trace, *, raw: bool = False) -> list[str]:
    """Return the tool calls' names in start order (tool_name, else the span name).

    Tool Search's wrappers count as the calls they make (their inner spans are there), and
    its look-ups call nothing: both are left out unless `raw` (every tool span)."""
    if raw:
        return [_tool_name(span) for span in by_start(trace.of_type(SpanType.TOOL))]
    return [_tool_name(span) for span in tool_spans(trace)]


def tool_names_judged(trace: Trace, judged: Iterable[str]) -> list[str]:
    """`tool_names` for an assertion about the `judged` tools: every tool span when one of them
    is a Tool Search control itself (`tool_search`, `tool_call`, …), else the calls they make."""
    return tool_names(trace, raw=bool(CONTROLS.intersection(judged)))


def tool_spans(trace: Trace) -> list[Span]:
    """The spans of the run's real tool calls in start order (Tool Search's controls left out)."""
    return _tool_calls(trace).calls


def _tool_name(span: Span) -> str:
    return span.tool_name or span.name


def _tool_calls(trace: Trace) -> Unwrapped[Span]:
    # Spans are exported when they end: every wrapper in a trace has ended.
    return unwrap(
        by_start(trace.of_type(SpanType.TOOL)),
        name=_tool_name,
        call_id=lambda span: _first_str(span, CALL_ID_ATTRIBUTES),
        ended=lambda span: True,
    )


def _first_str(span: Span, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def pending_subagents(trace: Trace) -> list[str]:
    """What the trace still lacks: sub-agents a successful `sessions_spawn` started that have
    no span yet, and sub-agent sessions with spans but no finished run span (OpenClaw exports
    a run's span when the run ends)."""
    spawns = [
        span
        for span in _tool_calls(trace).calls
        if _tool_name(span) == SPAWN_TOOL and span.error is None
    ]
    if not spawns:
        return []
    seen: set[str] = set()
    finished: set[str] = set()
    for span in trace.spans:
        key = _first_str(span, SESSION_KEY_FULL)
        if key and CHILD_SESSION.search(key):
            seen.add(key)
            if span.type == SpanType.AGENT:
                finished.add(key)
    children = max(len(seen), len(delegation_spans(trace)[1]))
    missing = [
        f"sub-agent spawned at {_clock(span.start_ms)} never appeared in the trace"
        for span in spawns[children:]
    ]
    missing += [f"sub-agent session '{key}' did not finish" for key in sorted(seen - finished)]
    return missing


def _clock(epoch_ms: float | None) -> str:
    if epoch_ms is None:
        return "an unknown time"
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds")


def by_start(spans: Iterable[Span]) -> list[Span]:
    """Sort by start time, keeping the backend's order for ties and spans without one."""
    spans = list(spans)
    return sorted(spans, key=lambda s: (s.start_ms is None, s.start_ms or 0.0))


def _ancestors(span: Span, by_id: Mapping[str, Span]) -> list[Span]:
    """Return the span's ancestors, nearest first (a parent cycle in bad data ends the walk)."""
    found: list[Span] = []
    seen = {span.id}
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.id not in seen:
        seen.add(parent.id)
        found.append(parent)
        parent = by_id.get(parent.parent_id or "")
    return found


# Routing files: where a list of agents may live, and what an item's agent is called.
ROUTING_LIST_KEYS = ("path", "delegations", "decisions", "routing", "agents", "history")
ROUTING_AGENT_KEYS = ("agent", "to", "routed_to", "agent_id", "agentId", "target")
SESSION_KEY_ATTRIBUTES = ("session_key", "sessionkey", "session.key", "session.id", "thread_id")
SESSION_KEY_FULL = ("openclaw.session_key", "session.key", "session_key", "openclaw.sessionKey")
CALL_ID_ATTRIBUTES = (
    "gen_ai.tool.call.id", "openclaw.tool_call_id", "tool_call_id", "tool.call.id",
)  # fmt: skip


def _session_agent(span: Span) -> str | None:
    """The agent id of a sub-agent session key (`agent:<id>:subagent:<uuid>`) on the span."""
    for key, value in span.attributes.items():
        if not isinstance(value, str) or not CHILD_SESSION.search(value):
            continue
        if key.lower().endswith(SESSION_KEY_ATTRIBUTES):
            parts = value.split(":")
            index = next(i for i, part in enumerate(parts) if part in ("subagent", "acp"))
            return parts[index - 1] if index >= 1 and parts[index - 1] != "agent" else None
    return None


def _subagent_name(span: Span, is_nested_agent: bool) -> str | None:
    """The sub-agent this span stands for, or None when it is not a sub-agent span."""
    if span.type == SpanType.GENERAL and span.name.startswith("subagent:"):  # Opik plugin
        return span.name.split(":", 1)[1] or None
    session_agent = _session_agent(span)
    if session_agent or (span.type == SpanType.AGENT and is_nested_agent):
        return span.agent_name or session_agent or span.name
    return None


def delegation_spans(trace: Trace) -> tuple[list[str], list[str]]:
    """Return (root agent names, sub-agent names), each in start order.

    A sub-agent is an agent span below another agent span, a span carrying a sub-agent session
    key, or an Opik `subagent:<id>` span; spans nested in a sub-agent span of the same agent are
    that agent's own work, not a new delegation.
    """
    by_id = {span.id: span for span in trace.spans}

    def ancestors(span: Span) -> list[Span]:
        return _ancestors(span, by_id)

    names: dict[str, str] = {}
    for span in trace.spans:
        nested = any(a.type == SpanType.AGENT for a in ancestors(span))
        name = _subagent_name(span, nested)
        if name:
            names[span.id] = name
    subagents = [
        span
        for span in by_start(trace.spans)
        if span.id in names and not any(names.get(a.id) == names[span.id] for a in ancestors(span))
    ]
    roots = [
        span.agent_name
        for span in by_start(trace.of_type(SpanType.AGENT))
        if span.agent_name
        and span.id not in names
        and not any(a.type == SpanType.AGENT for a in ancestors(span))
    ]
    return list(dict.fromkeys(roots)), [names[span.id] for span in subagents]


def routing_agents(data: Any) -> list[str]:
    """Return the agents a routing/state file lists, in order (the shapes: docs/reference.md,
    `decision_routed_to`)."""
    if isinstance(data, dict):
        for key in ROUTING_LIST_KEYS:
            if isinstance(data.get(key), list):
                return routing_agents(data[key])
        for key in ROUTING_LIST_KEYS:  # e.g. {routing: {path: [...]}}
            if isinstance(data.get(key), dict):
                found = routing_agents(data[key])
                if found:
                    return found
        single = _item_agent(data)
        return [single] if single else []
    if isinstance(data, list):
        return [agent for item in data if (agent := _item_agent(item))]
    return []


def _item_agent(item: Any) -> str | None:
    if isinstance(item, str | int) and not isinstance(item, bool):
        return str(item)
    if isinstance(item, dict):
        for key in ROUTING_AGENT_KEYS:
            if isinstance(item.get(key), str | int) and item[key] != "":
                return str(item[key])
    return None


def counted_spans(trace: Trace, value: Callable[[Span], Any]) -> tuple[list[Span], str]:
    """Return the spans whose `value` (tokens or cost) is summed, and how they were chosen.

    Never count the same usage twice: if LLM spans carry it, only LLM spans are summed
    (OpenClaw's `openclaw.model.usage` summary and agent spans repeat their children's usage);
    otherwise every span carrying it that has no descendant carrying it (the innermost ones).
    """
    llm = [span for span in trace.of_type(SpanType.LLM) if value(span) is not None]
    if llm:
        return llm, pluralize(len(llm), "LLM span")
    carrying = [span for span in trace.spans if value(span) is not None]
    by_id = {span.id: span for span in trace.spans}
    covering = {a.id for span in carrying for a in _ancestors(span, by_id)}
    innermost = [span for span in carrying if span.id not in covering]
    return innermost, pluralize(len(innermost), "span")


def span_usage(span: Span) -> int | None:
    if span.input_tokens is None and span.output_tokens is None:
        return None
    return (span.input_tokens or 0) + (span.output_tokens or 0)


def trace_duration_ms(trace: Trace) -> tuple[float, str] | None:
    """Return the trace's duration and its source: envelope, span times, or span durations."""
    if trace.start_ms is not None and trace.end_ms is not None:
        return max(0.0, trace.end_ms - trace.start_ms), "trace envelope"
    starts = [s.start_ms for s in trace.spans if s.start_ms is not None]
    ends = [
        s.end_ms if s.end_ms is not None else s.start_ms + s.duration_ms
        for s in trace.spans
        if s.end_ms is not None or (s.start_ms is not None and s.duration_ms is not None)
    ]
    if starts and ends:
        return max(0.0, max(ends) - min(starts)), "span times"
    # No timestamps: add up the top-level spans' durations (a nested span runs inside its
    # parent's time); a span without one counts as the sum of its children.
    children: dict[str | None, list[Span]] = {}
    ids = {span.id for span in trace.spans}
    for span in trace.spans:
        children.setdefault(span.parent_id if span.parent_id in ids else None, []).append(span)

    def covered(span: Span, depth: int = 0) -> float | None:
        if span.elapsed_ms is not None or depth > 100:
            return span.elapsed_ms
        parts = [c for c in (covered(k, depth + 1) for k in children.get(span.id, [])) if c]
        return sum(parts) if parts else None

    durations = [d for d in (covered(span) for span in children.get(None, [])) if d is not None]
    if durations:
        return sum(durations), "sum of span durations"
    return None


def price_key(model: str, pricing: dict[str, Any]) -> str | None:
    """The longest model_pricing key contained in `model` (case-insensitive)."""
    matches = [key for key in pricing if key.lower() in model.lower()]
    return max(matches, key=len) if matches else None


def estimate_cost(trace: Trace, pricing: dict[str, Any]) -> tuple[float, int, list[str]]:
    """Return (estimated USD, priced spans, models without a price) from token counts."""
    spans, _ = counted_spans(trace, span_usage)
    total, priced, unpriced = 0.0, 0, []
    for span in spans:
        key = price_key(span.model, pricing) if span.model else None
        if key is None:
            unpriced.append(span.model or "unknown model")
            continue
        price = pricing[key]
        total += (span.input_tokens or 0) * price.input_per_mtok / 1_000_000
        total += (span.output_tokens or 0) * price.output_per_mtok / 1_000_000
        priced += 1
    return total, priced, list(dict.fromkeys(unpriced))
