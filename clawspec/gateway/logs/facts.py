"""What one gateway log line says about runs, worked out once per process (`facts_of`).

Every run-scoped index (`LogIndex`) of a concurrent suite reads the lines of the runs around
its own: what a line says (a run started, a tool was called, a hook answered, …) depends only on
its bytes, so it is computed once and cached (`cache.LineCache`); each index only applies
the facts, in the line's order, to its own state with its own line numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from clawspec.gateway.logs.cache import LineCache, parse_text
from clawspec.gateway.logs.cache import intern as _intern

_RUN_START = re.compile(r"embedded run start: runId=(\S+) sessionId=(\S+)")
_RUN_DONE = re.compile(r"embedded run done: runId=(\S+)")
# `[agent] run … ended`; a run OpenClaw timed out or aborted writes no `embedded run done`,
# and its `run cleanup` line ends it.
_ENDED = re.compile(r"\[agent\] run (\S+) ended|run cleanup: runId=(\S+)")
_ENDED_PREFIXES = ("[agent] run ", "run cleanup: ")  # a cheap test before the regex
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
    debug: bool = False  # written below info level: only a gateway logging at debug writes it


# tslog's level ids: 0 silly, 1 trace, 2 debug, 3 info, 4 warn, 5 error, 6 fatal.
_INFO_LEVEL = 3


def _analyse(raw: bytes) -> LineFacts:
    text, data, is_json, ids = parse_text(raw)
    if data is not None:
        trace, span = _str(data.get("traceId")), _str(data.get("spanId"))
        facts = _json_facts(data, trace, span)
        return LineFacts(_intern(trace), _intern(span), ids, facts, None, _below_info(data))
    legacy = _legacy_fields(text) if not is_json and "run_id=" in text else None
    return LineFacts(None, None, ids, (), legacy)


def _below_info(data: dict[str, Any]) -> bool:
    meta = data.get("_meta")
    level = meta.get("logLevelId") if isinstance(meta, dict) else None
    return isinstance(level, int) and level < _INFO_LEVEL


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
    elif message.startswith(_ENDED_PREFIXES) and (m := _ENDED.match(message)):
        facts.append(AgentEnded(m.group(1) or m.group(2)))
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


# -- how a run ended or how far it got: read only when a run failed (`outcome_of`) ----------
#
# These facts are not in `Fact` and never reach `LogIndex` (its handlers know the types above):
# a failed or timed-out scenario reads them from its run's scoped lines (gateway/run_failure.py).

_STAGES = re.compile(
    r"\[trace:embedded-run\] (startup|prep) stages: runId=(\S+) sessionId=(\S+) .*?\btotalMs=(\d+)"
)
_PROMPT_START = re.compile(r"embedded run prompt start: runId=(\S+) sessionId=(\S+)")
_RUN_TIMEOUT = re.compile(r"embedded run timeout: runId=(\S+) sessionId=(\S+) timeoutMs=(\d+)")
_RUN_DONE_MS = re.compile(r"embedded run done: runId=(\S+) sessionId=(\S+) durationMs=(\d+)")
_QUEUED = re.compile(r"message queued: sessionId=(\S+) sessionKey=(\S+) source=cron-isolated")
_RETRY = re.compile(r"transient same-model retry (\d+)/(\d+) for (\S+) reason=([\w.-]+)")
_OUTCOME_MARKERS = (
    b"hook agent run completed",
    b"transient same-model retry",
    b"embedded run ",
    b" stages: runId=",
    b"model_fallback_decision",
    b"source=cron-isolated",
    b"lane=hook-dispatch",
)


class HookOutcome(NamedTuple):
    """`gateway/hooks` "hook agent run completed ...": how the gateway ended a hook run."""

    run_id: str  # the hook run id the caller got back
    status: str  # ok / error / skipped
    summary: str | None  # the gateway's own cause, when the status is not ok
    agent_id: str | None
    logical_key: str | None  # the session key the caller sent
    session_id: str | None
    model: str | None


class ModelFailure(NamedTuple):
    """A `model_fallback_decision` whose candidate failed: which model, and why (`reason`:
    auth, model_not_found, timeout, ...; `status`: the HTTP status when there was one)."""

    run_id: str | None
    session_id: str | None
    provider: str | None
    model: str | None
    reason: str | None
    status: int | None
    detail: str | None


class RunStep(NamedTuple):
    """A timed step of a hook run: `queued` (its isolated session is queued; `key` is the session
    key), `start` (embedded run start: preparation begins), `startup` / `prep` (stage summaries,
    `ms` = totalMs; OpenClaw logs them at warn level when slow, ≥ 10 s in all or ≥ 5 s in one
    stage, else at trace level), `prompt` (the model is asked), `timeout` (`ms` = the run's
    timeout) and `done` (`ms` = durationMs)."""

    kind: str
    session_id: str
    run_id: str | None
    time: str | None
    ms: int | None = None
    key: str | None = None


class ModelRetry(NamedTuple):
    """`transient same-model retry 2/8 for fake/fake-model reason=server_error: delayMs=…`:
    OpenClaw retries a failing model call (the line names neither run nor session, only its
    trace)."""

    attempt: int
    limit: int
    model: str
    reason: str


class HookDispatch(NamedTuple):
    """`lane enqueue: lane=hook-dispatch`: the line's trace is a hook request's."""


Outcome = HookOutcome | ModelFailure | RunStep | HookDispatch | ModelRetry


class OutcomeLine(NamedTuple):
    trace_id: str | None
    facts: tuple[Outcome, ...]


_NO_OUTCOME = OutcomeLine(None, ())


def _analyse_outcome(raw: bytes) -> OutcomeLine:
    if not any(marker in raw for marker in _OUTCOME_MARKERS):
        return _NO_OUTCOME
    data = parse_text(raw).data
    if data is None:
        return _NO_OUTCOME
    message = _str(data.get("message")) or ""
    time, facts = _str(data.get("time")), []
    if message.startswith("hook agent run completed"):
        facts += [_hook_outcome(v) for v in _objects(data) if v.get("runId") and v.get("status")]
    elif message.startswith("model fallback decision"):
        facts += [_model_failure(v) for v in _objects(data) if _failed_candidate(v)]
    elif message.startswith("embedded run start: ") and (m := _RUN_START.match(message)):
        facts.append(RunStep("start", m.group(2), m.group(1), time))
    elif m := _STAGES.search(message):
        facts.append(RunStep(m.group(1), m.group(3), m.group(2), time, int(m.group(4))))
    elif m := _PROMPT_START.match(message):
        facts.append(RunStep("prompt", m.group(2), m.group(1), time))
    elif m := _RUN_TIMEOUT.match(message):
        facts.append(RunStep("timeout", m.group(2), m.group(1), time, int(m.group(3))))
    elif m := _RUN_DONE_MS.match(message):
        facts.append(RunStep("done", m.group(2), m.group(1), time, int(m.group(3))))
    elif m := _QUEUED.match(message):
        facts.append(RunStep("queued", m.group(1), None, time, key=m.group(2)))
    elif message.startswith("lane enqueue: lane=hook-dispatch "):
        facts.append(HookDispatch())
    elif m := _RETRY.match(message):
        facts.append(ModelRetry(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
    return OutcomeLine(_str(data.get("traceId")), tuple(facts)) if facts else _NO_OUTCOME


outcome_of = LineCache(_analyse_outcome).get


def _objects(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for k, v in data.items() if k.isdigit() and k != "0" and isinstance(v, dict)]


def _hook_outcome(value: dict[str, Any]) -> HookOutcome:
    return HookOutcome(
        str(value["runId"]), str(value["status"]), _str(value.get("summary")),
        _str(value.get("agentId")), _str(value.get("logicalSessionKey")),
        _str(value.get("sessionId")), _str(value.get("model")),
    )  # fmt: skip


def _failed_candidate(value: dict[str, Any]) -> bool:
    return value.get("event") == "model_fallback_decision" and "fail" in str(
        value.get("decision", "")
    )


def _model_failure(value: dict[str, Any]) -> ModelFailure:
    status = value.get("status")
    return ModelFailure(
        _str(value.get("runId")), _str(value.get("sessionId")),
        _str(value.get("candidateProvider")) or _str(value.get("requestedProvider")),
        _str(value.get("candidateModel")) or _str(value.get("requestedModel")),
        _str(value.get("reason")), status if isinstance(status, int) else None,
        _str(value.get("errorPreview")) or _str(value.get("fallbackStepFromFailureDetail")),
    )  # fmt: skip


def _legacy_fields(text: str) -> dict[str, str] | None:
    fields = {k: v[1:-1] if v.startswith('"') else v for k, v in _KV.findall(text)}
    first = text.split(" ", 1)[0]
    if "=" not in first:
        fields.setdefault("time", first)  # `2026-01-01T00:00:00Z level=info run_id=...`
    return fields if fields.get("run_id") else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
