"""OpenClaw gateway log adapter: index the run's slice of the log once, scoped to the run.

The gateway writes tslog JSON lines (`"0"` logger, `"1"`.. arguments, `message`, `time`,
`traceId`/`spanId`/`parentSpanId`); older ClawSpec setups write `key=value` lines carrying
`run_id=`. `LogIndex.build` streams the log from the offset recorded when the scenario started
(following a rotation into `<stem>.1<ext>` / `<path>.1`; a log with no recorded offset from its
last `tail_bytes`; in bounded blocks: `log_reader`), keeps only the structural
lines (run starts, tool starts, hook completions, session keys, legacy lines) plus a small
reference per line, then scopes them to the run (SPEC §9 "Logs"):

    hook run id / session key ClawSpec sent → `gateway/hooks` line (sessionId, sessionKey,
    traceId) → embedded runs of that session → sub-agent runs (same traceId, session key
    `agent:<agentId>:subagent:<uuid>`, started under a span of a run in scope), recursively.

A bare traceId is not enough: a heartbeat run of `agent:main:main` may inherit the trace of a
hook request, so sub-agents also need the sub-agent session key and the parent span. Sub-agent
keys are flat at every depth (`agent:<id>:subagent:<uuid>`; `agent:<id>:acp:<uuid>` for the ACP
runtime): nesting shows only through the parent span, which the scoping follows.

Tool Search wrappers (`tool_call`, `tool_search_code`) count as the calls they make
(`gateway.tool_search`). Evidence that has not arrived when the wait ends is named in
`pending` (a spawned sub-agent that never started or did not finish, a wrapper still running):
an assertion whose verdict more lines could change reports `error` with it, never a pass.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawspec.gateway.log_facts import (
    AgentEnded,
    Failure,
    Hook,
    LineFacts,
    RunDone,
    RunStart,
    SessionKey,
    ToolEnd,
    ToolStart,
    facts_of,
)
from clawspec.gateway.log_reader import SegmentReader, segments_of, tail_start
from clawspec.gateway.plugin_records import PluginRecord, TokenUsage
from clawspec.gateway.tool_search import SPAWN_TOOL, unwrap

DEBUG_HINT = "run lines need logging.level: debug"

_AGENT_KEY = re.compile(r"^agent:([^:]+):")
_SUBAGENT = re.compile(r"^agent:([^:]+):(?:subagent|acp):")
# Without any run-start line a short while into the wait, the log has no debug lines (or is
# not the gateway's): waiting out the whole budget would only delay the same answer.
NO_RUN_LINES_GRACE_S = 5.0
_LEGACY_TOKENS = {
    "input_tokens": "input", "prompt_tokens": "input", "output_tokens": "output",
    "completion_tokens": "output", "total_tokens": "total",
}  # fmt: skip
_TOOL_END_EVENTS = ("_end", "_result", "_done", "_error", "_completed")


@dataclass(frozen=True)
class ToolCall:
    """One tool start: name (exact), the run that called it, when, and where in the log."""

    name: str
    run_id: str
    time: str | None
    line: int  # 1-based, counted from the start offset of the indexed slice
    tool_call_id: str | None = None


@dataclass
class _Run:
    run_id: str
    session_id: str
    trace_id: str | None
    spans: set[str]
    parent_spans: set[str | None]
    line: int
    done: bool = False


@dataclass(frozen=True)
class _Legacy:
    run_id: str
    fields: dict[str, str]
    line: int


# Where a line is and what it names, read back only for log_entry: (line number, segment,
# offset, length, the line's facts). A plain tuple: one per line per run index, and a run index
# reads a few hundred lines at concurrency 16 (a named tuple is built by a Python function).
_Ref = tuple[int, int, int, int, LineFacts]


@dataclass
class LogIndex:
    """Everything the log says about one run, built once from the run's slice of the log."""

    path: Path
    seeds: tuple[str, ...]  # run ids asked for (ClawSpec's, the gateway's, or the contract's)
    seed_keys: tuple[str, ...]  # session keys asked for
    exists: bool = True
    segments: list[tuple[Path, int]] = field(default_factory=list)
    found: bool = False
    hook_seen: bool = False
    run_ids: set[str] = field(default_factory=set)  # embedded runs in scope
    session_ids: set[str] = field(default_factory=set)
    session_keys: set[str] = field(default_factory=set)
    trace_ids: set[str] = field(default_factory=set)
    tool_calls: list[ToolCall] = field(default_factory=list)  # real calls (wrappers unwrapped)
    tool_search_calls: list[ToolCall] = field(default_factory=list)  # Tool Search's controls
    subagents: list[str] = field(default_factory=list)  # agent ids delegated to, in order
    pending: list[str] = field(default_factory=list)  # evidence still missing when waiting ended
    waited_s: float = 0.0  # how long the build waited for the run's lines
    errors: list[str] = field(default_factory=list)  # failures reported for runs in scope
    legacy_usage: TokenUsage | None = None
    lines_read: int = 0
    run_starts_seen: int = 0  # `embedded run start` lines of any run in the slice
    # Bytes at the start of the file left unread: a log with no start offset for the run,
    # larger than `tail_bytes`, is read from its last `tail_bytes` on (0: read from `offset`).
    skipped_bytes: int = 0
    # raw material, kept for re-scoping while waiting for the last lines
    _runs: dict[str, _Run] = field(default_factory=dict, repr=False)
    _keys: dict[str, str] = field(default_factory=dict, repr=False)
    _hooks: list[Hook] = field(default_factory=list, repr=False)
    _tools: list[ToolCall] = field(default_factory=list, repr=False)
    _failures: list[tuple[str, str]] = field(default_factory=list, repr=False)
    _legacy: list[_Legacy] = field(default_factory=list, repr=False)
    _refs: list[_Ref] = field(default_factory=list, repr=False)
    _ended: set[str] = field(default_factory=set, repr=False)
    _tool_ends: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)
    _scoped_lines: list[tuple[int, str]] | None = field(default=None, repr=False)
    _open_wrappers: list[ToolCall] = field(default_factory=list, repr=False)

    @classmethod
    def build(
        cls,
        path: Path,
        offset: int = 0,
        *,
        run_ids: Iterable[str | None] = (),
        session_keys: Iterable[str | None] = (),
        started_at: float | None = None,
        inode: int | None = None,
        wait_s: float = 0.0,
        subagent_wait_s: float = 0.0,
        poll_interval_s: float = 0.25,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
        tail_bytes: int | None = None,
    ) -> LogIndex:
        """Index `path` from `offset` for the run named by `run_ids` / `session_keys`.

        With no offset (0: a log whose size was not recorded when the run started, such as an
        explicit `log_path`) and `tail_bytes`, only the file's last `tail_bytes` are read, from
        the first line starting there (`skipped_bytes`: where that is).

        The gateway may flush its last lines just after the hook call returns, so this waits
        up to `wait_s` (pacing `poll_interval_s`, ending early on `stop`) until the hook
        completion line is there and every run in scope (sub-agents included) has ended.
        `started_at` (epoch seconds) and `inode` help detect a rotation during the run.
        A found run whose sub-agents have not all started or ended yet gets up to
        `subagent_wait_s` instead: the hook answers when the parent ends, and a child may
        start many seconds later on a busy machine. What is still missing then is in
        `pending`. A slice without a single run-start line after NO_RUN_LINES_GRACE_S ends
        the wait early: the log has no debug lines, and waiting longer cannot find the run.
        """
        seeds = tuple(dict.fromkeys(r for r in run_ids if r))
        keys = tuple(dict.fromkeys(k for k in session_keys if k))
        index = cls(Path(path), seeds, keys)
        stop = stop or threading.Event()
        started = clock()
        reader: SegmentReader | None = None
        try:
            while True:
                if reader is None and Path(path).exists():
                    index.segments = segments_of(Path(path), offset, started_at, inode)
                    if offset <= 0 and tail_bytes is not None:
                        index.skipped_bytes = tail_start(Path(path), tail_bytes)
                        index.segments = [(Path(path), index.skipped_bytes)]
                    reader = SegmentReader(index.segments)
                if reader is not None:
                    reader.read(index._feed, final=False)
                    index._resolve()
                    if index._settled():
                        break
                budget = subagent_wait_s if index._children_pending() else wait_s
                elapsed = clock() - started
                remaining = max(budget, wait_s) - elapsed
                no_run_lines = not index.run_starts_seen and not index.found
                if no_run_lines and elapsed >= min(NO_RUN_LINES_GRACE_S, wait_s):
                    break
                if remaining <= 0 or stop.is_set():
                    break
                stop.wait(min(poll_interval_s, remaining))
            if reader is None:
                index.exists = False
                return index
            before = reader.lines
            reader.read(index._feed, final=True)
        finally:
            if reader is not None:
                reader.close()
        if reader.lines != before:  # else the loop's last resolve is still current
            index._resolve()
        index.lines_read = reader.lines
        index.waited_s = max(0.0, clock() - started)
        index.pending = index._missing() if index.found else []
        return index

    # -- what assertions ask -------------------------------------------------------------

    @property
    def start_offset(self) -> int:
        """The byte offset the indexed slice starts at (0: the file's first line)."""
        return self.segments[0][1] if self.segments else 0

    def tool_counts(self) -> dict[str, int]:
        """Return {tool name: calls} in order of first call."""
        counts: dict[str, int] = {}
        for call in self.tool_calls:
            counts[call.name] = counts.get(call.name, 0) + 1
        return counts

    def tool_ended_at(self, call: ToolCall) -> str | None:
        """When the call's `tool end` line was written (None: not logged, or no call id)."""
        return self._tool_ends.get((call.run_id, call.tool_call_id or ""))

    def agent_of(self, run_id: str) -> str | None:
        """The agent id of an embedded run, from its session key (`agent:<id>:...`)."""
        run = self._runs.get(run_id)
        match = _AGENT_KEY.match(self._keys.get(run.session_id, "")) if run else None
        return match.group(1) if match else None

    def lines(self) -> list[tuple[int, str]]:
        """Return the (line number, text) of every line in the run's scope, read once."""
        if self._scoped_lines is None:
            self._scoped_lines = list(self._read_scoped())
        return self._scoped_lines

    def usage_from_plugin(self, records: Iterable[PluginRecord]) -> TokenUsage | None:
        """Sum the plugin's model-call usage of the runs in scope (None: no record of them).

        `model_call` records are summed (`model_usage` is a per-turn summary of the same calls
        and is used only when no call record exists). Records are matched by runId, else by
        session; never by traceId alone (a heartbeat run may share the hook's trace).
        """
        calls: list[PluginRecord] = []
        summaries: list[PluginRecord] = []
        for rec in records:
            if not self.owns(rec):
                continue
            if rec.kind == "model_call" and rec.phase in ("completed", "error"):
                calls.append(rec)
            elif rec.kind == "model_usage":
                summaries.append(rec)
        chosen = calls or summaries
        if not chosen:
            return None
        inp = sum(r.input_tokens or 0 for r in chosen)
        out = sum(r.output_tokens or 0 for r in chosen)
        total = sum(
            r.total_tokens or (r.input_tokens or 0) + (r.output_tokens or 0) for r in chosen
        )
        return TokenUsage(inp, out, total, len(chosen))

    def plugin_settled(self, records: Iterable[PluginRecord]) -> bool:
        """Every harness run of the runs in scope has ended in `records` (the plugin writes a
        run's last model-call usage after `run.completed`; `harness` completion comes last)."""
        open_runs: dict[str, int] = {}
        for rec in records:
            if rec.kind == "harness" and rec.run_id in self.run_ids:
                step = 1 if rec.phase == "started" else -1
                open_runs[rec.run_id] = open_runs.get(rec.run_id, 0) + step
        return all(count <= 0 for count in open_runs.values())

    def owns(self, rec: PluginRecord) -> bool:
        """The record is about a run in scope: by runId, else by session (never traceId)."""
        if rec.run_id:
            return rec.run_id in self.run_ids
        return bool(
            (rec.session_key and rec.session_key in self.session_keys)
            or (rec.session_id and rec.session_id in self.session_ids)
        )

    # -- reading -------------------------------------------------------------------------

    def _feed(self, lines: list[bytes], segment: int, number: int, offset: int) -> None:
        """Apply consecutive lines of `segment`, the first numbered `number + 1`, at `offset`.

        The hot loop of a busy run (every line written while the run ran, for every run):
        what a line says is worked out once per process (`facts_of`); here only its facts
        are applied, each by the handler of its type."""
        refs = self._refs.append
        handlers = _HANDLERS
        for raw in lines:
            number += 1
            line = facts_of(raw)
            for fact in line.facts:
                handlers[type(fact)](self, number, fact)
            if line.legacy is not None:
                self._legacy.append(_Legacy(line.legacy["run_id"], line.legacy, number))
            if line.trace_id or line.ids:
                refs((number, segment, offset, len(raw), line))
            offset += len(raw)

    def _run_start(self, lineno: int, fact: RunStart) -> None:
        self.run_starts_seen += 1
        run = self._runs.get(fact.run_id)
        if run is None:
            run = _Run(fact.run_id, fact.session_id, fact.trace_id, set(), set(), lineno)
            self._runs[run.run_id] = run
        if fact.span_id:
            run.spans.add(fact.span_id)
        run.parent_spans.add(fact.parent_span_id)

    def _tool_start(self, lineno: int, fact: ToolStart) -> None:
        self._tools.append(ToolCall(fact.name, fact.run_id, fact.time, lineno, fact.tool_call_id))

    def _tool_end(self, lineno: int, fact: ToolEnd) -> None:
        self._tool_ends[(fact.run_id, fact.tool_call_id)] = fact.time

    def _run_done(self, lineno: int, fact: RunDone) -> None:
        if fact.run_id in self._runs:
            self._runs[fact.run_id].done = True

    def _agent_ended(self, lineno: int, fact: AgentEnded) -> None:
        self._ended.add(fact.run_id)

    def _session_key(self, lineno: int, fact: SessionKey) -> None:
        self._keys.setdefault(fact.session_id, fact.session_key)

    def _failure(self, lineno: int, fact: Failure) -> None:
        self._failures.append((fact.run_id, fact.error))

    def _hook(self, lineno: int, fact: Hook) -> None:
        self._hooks.append(fact)

    # -- scoping -------------------------------------------------------------------------

    def _resolve(self) -> None:
        seeds, keys = set(self.seeds), set(self.seed_keys)
        sessions: set[str] = set()
        session_keys: set[str] = set(keys)
        traces: set[str] = set()
        self.hook_seen = False
        for hook in self._hooks:
            if hook.run_id in seeds or {hook.logical_key, hook.session_key} & keys:
                self.hook_seen = True
                sessions.update(s for s in (hook.session_id,) if s)
                session_keys.update(k for k in (hook.session_key, hook.logical_key) if k)
                traces.update(t for t in (hook.trace_id,) if t)
        for session_id, key in self._keys.items():
            if key in keys or any(key.endswith(f":{k}") for k in keys):
                sessions.add(session_id)
        runs = {
            rid for rid, run in self._runs.items() if rid in seeds or run.session_id in sessions
        }
        children: list[str] = []
        grew = True
        while grew:  # sub-agents of runs in scope, recursively
            spans = set().union(*(self._runs[r].spans for r in runs)) if runs else set()
            run_traces = {self._runs[r].trace_id for r in runs}
            grew = False
            for rid, run in self._runs.items():
                key = self._keys.get(run.session_id, "")
                if rid in runs or not _SUBAGENT.match(key) or run.trace_id not in run_traces:
                    continue
                if run.parent_spans & spans or run.parent_spans == {None}:
                    runs.add(rid)
                    children.append(rid)
                    grew = True
        self.run_ids = runs
        self.session_ids = sessions | {self._runs[r].session_id for r in runs}
        self.session_keys = session_keys | {
            self._keys[s] for s in self.session_ids if s in self._keys
        }
        self.trace_ids = traces | {t for r in runs if (t := self._runs[r].trace_id)}
        legacy = [entry for entry in self._legacy if entry.run_id in seeds]
        self.found = bool(runs or legacy)
        self._collect(runs, children, legacy, seeds)

    def _collect(self, runs, children, legacy, seeds) -> None:
        calls = [c for c in self._tools if c.run_id in runs]
        agents = [_SUBAGENT.match(self._keys[self._runs[c].session_id]).group(1) for c in children]
        usage = {"input": 0, "output": 0, "total": 0}
        has_usage = False
        usage_lines = 0
        for entry in legacy:
            f = entry.fields
            event = f.get("event", "")
            if f.get("tool") and not event.endswith(_TOOL_END_EVENTS):
                calls.append(ToolCall(f["tool"], entry.run_id, _legacy_time(f), entry.line))
            target = f.get("to_agent") or f.get("delegate")
            if not target and any(w in event for w in ("deleg", "spawn", "handoff")):
                target = f.get("agent")
            if target:
                agents.append(target)
            tokens = {slot: 0 for slot in usage}
            for name, slot in _LEGACY_TOKENS.items():
                if f.get(name, "").isdigit():
                    tokens[slot] += int(f[name])
                    has_usage = True
            tokens["total"] = tokens["total"] or tokens["input"] + tokens["output"]
            usage_lines += any(tokens.values())
            for slot, value in tokens.items():
                usage[slot] += value
        calls.sort(key=lambda c: c.line)
        ended = self._tool_ends
        split = unwrap(
            calls,
            name=lambda c: c.name,
            call_id=lambda c: c.tool_call_id,
            ended=lambda c: (c.run_id, c.tool_call_id or "") in ended,
        )
        self.tool_calls = split.calls
        self.tool_search_calls = split.controls
        self._open_wrappers = split.open_wrappers
        self.subagents = list(dict.fromkeys(agents))
        self.errors = [err for rid, err in self._failures if rid in runs]
        self.legacy_usage = (
            TokenUsage(usage["input"], usage["output"], usage["total"], usage_lines)
            if has_usage
            else None
        )

    def _settled(self) -> bool:
        """The run's last lines are in: hook completion seen, every sub-agent ended."""
        if not self.found:
            return False
        if any(entry.run_id in self.seeds for entry in self._legacy):
            return True  # legacy lines have no completion marker
        if not self.hook_seen and not set(self.seeds) & set(self._runs):
            return False
        return not self._children_pending() and not self._open_wrappers

    def _children_pending(self) -> bool:
        """The run was found and called sessions_spawn, but not every child has ended."""
        if not self.found:
            return False
        spawns = sum(1 for c in self.tool_calls if c.name == SPAWN_TOOL)
        children = [r for r in self.run_ids if self._is_child(r)]
        return spawns > len(children) or not all(self._ended_run(r) for r in children)

    def _ended_run(self, run_id: str) -> bool:
        return self._runs[run_id].done or run_id in self._ended

    def _missing(self) -> list[str]:
        """What the run's slice still lacks: children spawned but never started or still
        running, and Tool Search wrappers that have not ended (each may call a tool yet)."""
        missing: list[str] = []
        spawns = [c for c in self.tool_calls if c.name == SPAWN_TOOL]
        children = sorted(
            (self._runs[r] for r in self.run_ids if self._is_child(r)), key=lambda r: r.line
        )
        for spawn in spawns[len(children) :]:
            missing.append(f"sub-agent spawned {_when(spawn)} by run {spawn.run_id} never started")
        for child in children:
            if not self._ended_run(child.run_id):
                agent = self.agent_of(child.run_id) or "?"
                missing.append(
                    f"sub-agent run {child.run_id} (agent '{agent}', started at line "
                    f"{child.line}) did not finish"
                )
        for wrapper in self._open_wrappers:
            missing.append(
                f"Tool Search call '{wrapper.name}' {_when(wrapper)} in run {wrapper.run_id} "
                "did not end (it may still call a tool)"
            )
        return missing

    def _is_child(self, run_id: str) -> bool:
        return bool(_SUBAGENT.match(self._keys.get(self._runs[run_id].session_id, "")))

    def _read_scoped(self) -> Iterator[tuple[int, str]]:
        scope = self.run_ids | self.session_ids | self.session_keys | set(self.seeds)
        scope |= {h.run_id for h in self._hooks if h.session_id in self.session_ids and h.run_id}
        spans = {
            ref[4].span_id
            for ref in self._refs
            if ref[4].span_id and not scope.isdisjoint(ref[4].ids)
        }
        wanted = [ref for ref in self._refs if _in_scope(ref[4], scope, self.trace_ids, spans)]
        handles: dict[int, Any] = {}
        try:
            for number, segment, offset, length, _ in wanted:
                if segment not in handles:
                    handles[segment] = self.segments[segment][0].open("rb")
                handle = handles[segment]
                handle.seek(offset)
                raw = handle.read(length)
                yield number, raw.decode("utf-8", errors="replace").rstrip("\r\n")
        finally:
            for handle in handles.values():
                handle.close()


def _in_scope(line: LineFacts, scope: set[str], traces: set[str], spans: set[str | None]) -> bool:
    """A line naming ids is in scope when it names one of the run's; a line naming none, when
    it was written in a span of the run's trace that lines of the run also use."""
    if line.ids:
        return not scope.isdisjoint(line.ids)
    return line.trace_id in traces and line.span_id in spans


_HANDLERS: dict[type, Callable[[LogIndex, int, Any], None]] = {
    RunStart: LogIndex._run_start,
    ToolStart: LogIndex._tool_start,
    ToolEnd: LogIndex._tool_end,
    RunDone: LogIndex._run_done,
    AgentEnded: LogIndex._agent_ended,
    SessionKey: LogIndex._session_key,
    Failure: LogIndex._failure,
    Hook: LogIndex._hook,
}


def _when(call: ToolCall) -> str:
    return f"at {call.time}" if call.time else f"at line {call.line}"


def _legacy_time(fields: dict[str, str]) -> str | None:
    return fields.get("ts") or fields.get("time")
