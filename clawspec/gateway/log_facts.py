"""What one gateway log line says about runs, worked out once per process (`facts_of`).

Every run-scoped index (`LogIndex`) of a concurrent suite reads the lines of the runs around
its own: what a line says (a run started, a tool was called, a hook answered, …) depends only on
its bytes, so it is computed once and cached (`line_cache.LineCache`); each index only applies
the facts, in the line's order, to its own state with its own line numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from clawspec.gateway.line_cache import LineCache, parse_text
from clawspec.gateway.line_cache import intern as _intern

_RUN_START = re.compile(r"embedded run start: runId=(\S+) sessionId=(\S+)")
_RUN_DONE = re.compile(r"embedded run done: runId=(\S+)")
_AGENT_ENDED = re.compile(r"\[agent\] run (\S+) ended")
_TOOL_START = re.compile(r"embedded run tool start: runId=(\S+) tool=(\S+)(?: toolCallId=(\S+))?")
_TOOL_END = re.compile(r"embedded run tool end: runId=(\S+) tool=\S+ toolCallId=(\S+)")
_SESSION_PAIR = re.compile(r"sessionId=([\w-]+) sessionKey=(\S+)")
_KV = re.compile(r'([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"|\S*)')


@dataclass(frozen=True)
class Hook:
    run_id: str | None
    session_id: str | None
    session_key: str | None
    logical_key: str | None
    trace_id: str | None
    status: str | None


class RunStart(NamedTuple):
    run_id: str
    session_id: str
    trace_id: str | None
    span_id: str | None
    parent_span_id: str | None


class ToolStart(NamedTuple):
    name: str
    run_id: str
    time: str | None
    tool_call_id: str | None


class ToolEnd(NamedTuple):
    run_id: str
    tool_call_id: str
    time: str | None


class RunDone(NamedTuple):
    run_id: str


class AgentEnded(NamedTuple):
    run_id: str


class SessionKey(NamedTuple):
    session_id: str
    session_key: str


class Failure(NamedTuple):
    run_id: str
    error: str


Fact = RunStart | ToolStart | ToolEnd | RunDone | AgentEnded | SessionKey | Failure | Hook


class LineFacts(NamedTuple):
    trace_id: str | None
    span_id: str | None
    ids: tuple[str, ...]  # run / session ids the line names
    facts: tuple[Fact, ...]  # in the order the line states them
    legacy: dict[str, str] | None  # the fields of a legacy `key=value` line naming a run_id


def _analyse(raw: bytes) -> LineFacts:
    text, data, is_json, ids = parse_text(raw)
    if data is not None:
        trace, span = _str(data.get("traceId")), _str(data.get("spanId"))
        return LineFacts(_intern(trace), _intern(span), ids, _json_facts(data, trace, span), None)
    legacy = _legacy_fields(text) if not is_json and "run_id=" in text else None
    return LineFacts(None, None, ids, (), legacy)


facts_of = LineCache(_analyse).get


def _json_facts(data: dict[str, Any], trace: str | None, span: str | None) -> tuple[Fact, ...]:
    facts: list[Fact] = []
    message = _str(data.get("message")) or " ".join(
        v for k, v in data.items() if k.isdigit() and k != "0" and isinstance(v, str)
    )
    if message.startswith("embedded run "):
        if m := _RUN_START.match(message):
            parent = _str(data.get("parentSpanId"))
            facts.append(RunStart(m.group(1), m.group(2), trace, span, parent))
        elif m := _TOOL_START.match(message):
            facts.append(ToolStart(m.group(2), m.group(1), _str(data.get("time")), m.group(3)))
        elif m := _TOOL_END.match(message):
            facts.append(ToolEnd(m.group(1), m.group(2), _str(data.get("time"))))
        elif m := _RUN_DONE.match(message):
            facts.append(RunDone(m.group(1)))
    elif message.startswith("[agent] run ") and (m := _AGENT_ENDED.match(message)):
        facts.append(AgentEnded(m.group(1)))
    m = _SESSION_PAIR.search(message) if "sessionKey=" in message else None
    if m and m.group(1) != "unknown":
        facts.append(SessionKey(m.group(1), m.group(2)))
    for key, value in data.items():
        if key.isdigit() and key != "0" and isinstance(value, dict):
            facts += _object_facts(value, data.get("0"), trace)
    return tuple(facts)


def _object_facts(value: dict[str, Any], logger: Any, trace: str | None) -> list[Fact]:
    if value.get("event") == "embedded_run_agent_end" and value.get("isError"):
        return [Failure(str(value.get("runId")), str(value.get("error", "")))]
    if "gateway/hooks" in str(logger) and value.get("runId"):
        session_id, session_key = _str(value.get("sessionId")), _str(value.get("sessionKey"))
        hook = Hook(
            _str(value.get("runId")), session_id, session_key,
            _str(value.get("logicalSessionKey")), trace, _str(value.get("status")),
        )  # fmt: skip
        return [SessionKey(session_id, session_key), hook] if session_id and session_key else [hook]
    return []


def _legacy_fields(text: str) -> dict[str, str] | None:
    fields = {k: v[1:-1] if v.startswith('"') else v for k, v in _KV.findall(text)}
    first = text.split(" ", 1)[0]
    if "=" not in first:
        fields.setdefault("time", first)  # `2026-01-01T00:00:00Z level=info run_id=...`
    return fields if fields.get("run_id") else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
