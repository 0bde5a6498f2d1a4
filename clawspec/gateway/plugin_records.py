"""Reader for the JSON lines written by ClawSpec's OpenClaw plugin (openclaw_plugin/FORMAT.md).

Tolerant by design: the gateway may be appending while we read, so a last line without its
newline is left for the next read (the returned offset stops before it); unknown kinds and
fields are kept (`kind` as is, extra fields in `extra`) so newer plugins do not break older readers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1

# Fields lifted onto the dataclass; anything else lands in `extra`.
_FIELDS = {
    "v": "version",
    "kind": "kind",
    "event": "event",
    "ts": "ts",
    "seq": "seq",
    "phase": "phase",
    "runId": "run_id",
    "sessionKey": "session_key",
    "sessionId": "session_id",
    "agentId": "agent_id",
    "traceId": "trace_id",
    "spanId": "span_id",
    "parentSpanId": "parent_span_id",
    "provider": "provider",
    "model": "model",
    "callId": "call_id",
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "totalTokens": "total_tokens",
    "cacheReadTokens": "cache_read_tokens",
    "cacheWriteTokens": "cache_write_tokens",
    "costUsd": "cost_usd",
    "toolName": "tool_name",
    "toolCallId": "tool_call_id",
    "durationMs": "duration_ms",
    "outcome": "outcome",
    "errorCategory": "error_category",
    "error": "error",
    "isError": "is_error",
    "childRunId": "child_run_id",
    "childSessionKey": "child_session_key",
    "parentRunId": "parent_run_id",
    "parentSessionKey": "parent_session_key",
    "parentToolCallId": "parent_tool_call_id",
}


@dataclass(frozen=True)
class PluginRecord:
    """One line of plugin output. Token fields are set on model_call and model_usage records."""

    kind: str
    event: str = ""
    version: int = FORMAT_VERSION
    ts: int | None = None  # epoch milliseconds
    seq: int | None = None
    phase: str | None = None  # started / completed / error / blocked
    run_id: str | None = None
    session_key: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    provider: str | None = None
    model: str | None = None
    call_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    duration_ms: float | None = None
    outcome: str | None = None
    error_category: str | None = None
    error: str | None = None
    is_error: bool | None = None  # tool_result: the gateway answered the call with an error
    child_run_id: str | None = None
    child_session_key: str | None = None
    parent_run_id: str | None = None
    parent_session_key: str | None = None
    parent_tool_call_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    offset: int = 0  # byte offset of the line in the file

    @classmethod
    def from_json(cls, data: dict[str, Any], offset: int = 0) -> PluginRecord:
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key in _FIELDS:
                known[_FIELDS[key]] = value
            else:
                extra[key] = value
        known.setdefault("kind", "unknown")
        return cls(**known, extra=extra, offset=offset)


@dataclass(frozen=True)
class ReadResult:
    records: list[PluginRecord]
    next_offset: int  # pass back as `offset` to continue after the last complete line


def read_plugin_file(path: Path, offset: int = 0) -> ReadResult:
    """Read complete lines from `offset`; a missing file reads as empty."""
    try:
        with Path(path).open("rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return ReadResult([], offset)
    records: list[PluginRecord] = []
    pos = 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            break  # no newline yet: the writer is mid-line (or crashed); retry later
        line = data[pos:end].strip()
        line_offset = offset + pos
        pos = end + 1
        if not line:
            continue
        try:
            parsed = json.loads(line)
        except ValueError:
            continue  # a damaged line must not hide the rest
        if isinstance(parsed, dict):
            records.append(PluginRecord.from_json(parsed, line_offset))
    return ReadResult(records, offset + pos)


def read_plugin_records(path: Path, offset: int = 0) -> list[PluginRecord]:
    """All complete records from `offset` (bytes) on."""
    return read_plugin_file(path, offset).records


@dataclass(frozen=True)
class TokenUsage:
    input: int = 0
    output: int = 0
    total: int = 0
    calls: int = 0


def sum_usage(records: Iterable[PluginRecord], run_ids: Iterable[str] | None = None) -> TokenUsage:
    """Sum tokens over finished model calls (optionally only of `run_ids`).

    Uses `model_call` records, not `model_usage`: the latter is a per-run summary of the same
    calls, so adding both would count twice.
    """
    wanted = set(run_ids) if run_ids is not None else None
    inp = out = total = calls = 0
    for rec in records:
        if rec.kind != "model_call" or rec.phase not in ("completed", "error"):
            continue
        if wanted is not None and rec.run_id not in wanted:
            continue
        calls += 1
        inp += rec.input_tokens or 0
        out += rec.output_tokens or 0
        total += rec.total_tokens or (rec.input_tokens or 0) + (rec.output_tokens or 0)
    return TokenUsage(inp, out, total, calls)


def run_family(records: Iterable[PluginRecord], root_run_id: str) -> set[str]:
    """The root run id plus every sub-agent run spawned (transitively) from it."""
    children: dict[str, set[str]] = {}
    for rec in records:
        if rec.kind == "subagent" and rec.parent_run_id and rec.child_run_id:
            children.setdefault(rec.parent_run_id, set()).add(rec.child_run_id)
    family = {root_run_id}
    todo = [root_run_id]
    while todo:
        for child in children.get(todo.pop(), set()) - family:
            family.add(child)
            todo.append(child)
    return family
