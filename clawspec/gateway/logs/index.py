"""Index the run's slice of the gateway log once, polling until the run's last lines are in.

The gateway writes tslog JSON lines (`"0"` logger, `"1"`.. arguments, `message`, `time`,
`traceId`/`spanId`/`parentSpanId`); older ClawSpec setups write `key=value` lines carrying
`run_id=`. `LogIndex.build` streams the log from the offset recorded when the scenario started
(following a rotation into `<stem>.1<ext>` / `<path>.1`; a log with no recorded offset from its
last `tail_bytes`; in bounded blocks: `reader`) and keeps only what each line says about runs
(run starts, tool starts, hook completions, session keys, legacy lines: `facts`) plus a small
reference per line. This module is that polling loop and the bookkeeping of the facts; what the
index answers is worked out from them by `scope` (which runs and lines are the scenario's,
and what is still missing) and `legacy` (the `key=value` lines); the runs' token
usage comes from the plugin's records (`usage_from_plugin`).

Tool Search wrappers (`tool_call`, `tool_search_code`) count as the calls they make
(`gateway.tool_search`). Evidence that has not arrived when the wait ends is named in
`pending` (a spawned sub-agent that never started or did not finish, a wrapper still running):
an assertion whose verdict more lines could change reports `error` with it, never a pass.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawspec.gateway.logs import scope
from clawspec.gateway.logs.facts import (
    AgentEnded,
    Failure,
    Hook,
    RunDone,
    RunStart,
    SessionKey,
    ToolEnd,
    ToolStart,
    facts_of,
)
from clawspec.gateway.logs.legacy import LegacyLine
from clawspec.gateway.logs.model import Gathered, RefusedCall, Run, ToolCall
from clawspec.gateway.logs.reader import SegmentReader, segments_of, tail_start
from clawspec.gateway.plugin_records import PluginRecord, TokenUsage
from clawspec.gateway.refusals import AnswerReader, ToolAnswers

DEBUG_HINT = "run lines need logging.level: debug"

_AGENT_KEY = re.compile(r"^agent:([^:]+):")
# Without any run-start line a short while into the wait, the log has no debug lines (or is
# not the gateway's): waiting out the whole budget would only delay the same answer.
NO_RUN_LINES_GRACE_S = 5.0


@dataclass
class LogIndex:
    """Everything the log says about one run, built once from the run's slice of the log."""

    path: Path
    seeds: tuple[str, ...]  # run ids asked for (ClawSpec's, the gateway's, or the contract's)
    seed_keys: tuple[str, ...]  # session keys asked for
    # The gateway's run id of the hook request that ran: with it, a completion logged for the
    # session key by an earlier attempt the gateway refused (then retried) is not the run's.
    hook_run: str | None = None
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
    # Calls the gateway answered without running the tool (e.g. "Tool X not found"): not calls.
    refused_calls: list[RefusedCall] = field(default_factory=list)
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
    # raw material, kept for re-scoping (`scope`) while waiting for the last lines
    gathered: Gathered = field(default_factory=Gathered, repr=False)
    # The plugin's answers to the calls (None: no plugin output): which calls were refused.
    answers: ToolAnswers | None = field(default=None, repr=False)
    open_wrappers: list[ToolCall] = field(default_factory=list, repr=False)  # still running
    _scoped_lines: list[tuple[int, str]] | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        path: Path,
        offset: int = 0,
        *,
        run_ids: Iterable[str | None] = (),
        session_keys: Iterable[str | None] = (),
        hook_run: str | None = None,
        started_at: float | None = None,
        inode: int | None = None,
        wait_s: float = 0.0,
        subagent_wait_s: float = 0.0,
        poll_interval_s: float = 0.25,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
        tail_bytes: int | None = None,
        answers: AnswerReader | None = None,
        later: Callable[[], Sequence[Path]] | None = None,
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
        `answers` (the plugin's output, read along) tells the calls the gateway refused from
        real ones (`gateway.refusals`): a call answered with an error is waited for until the
        plugin's records of its run are complete.
        `later`: the files the log went on in after `path` (the next days' files of a dated
        log), asked at every poll; each is read from its start once it exists.
        """
        seeds = tuple(dict.fromkeys(r for r in run_ids if r))
        keys = tuple(dict.fromkeys(k for k in session_keys if k))
        index = cls(Path(path), seeds, keys, hook_run)
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
                if later is not None:
                    reader = index._follow(reader, later())
                if reader is not None:
                    reader.read(index._feed, final=False)
                    index.answers = answers.read() if answers is not None else None
                    scope.resolve(index)
                    if scope.settled(index):
                        break
                budget = subagent_wait_s if scope.children_pending(index) else wait_s
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
        if answers is not None:
            index.answers = answers.read()
        if reader.lines != before or answers is not None:  # else the last resolve is current
            scope.resolve(index)
        index.lines_read = reader.lines
        index.waited_s = max(0.0, clock() - started)
        index.pending = scope.missing(index) if index.found else []
        return index

    def _follow(self, reader: SegmentReader | None, files: Sequence[Path]) -> SegmentReader | None:
        """Add the files the log went on in (read from their start, after what is there) to
        the segments the reader reads: the reader shares the list."""
        known = {segment for segment, _ in self.segments}
        new = [(file, 0) for file in files if file not in known]
        if not new:
            return reader
        self.segments.extend(new)
        return reader if reader is not None else SegmentReader(self.segments)

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
        return self.gathered.tool_ends.get((call.run_id, call.tool_call_id or ""))

    def agent_of(self, run_id: str) -> str | None:
        """The agent id of an embedded run, from its session key (`agent:<id>:...`)."""
        run = self.gathered.runs.get(run_id)
        match = _AGENT_KEY.match(self.gathered.keys.get(run.session_id, "")) if run else None
        return match.group(1) if match else None

    def lines(self) -> list[tuple[int, str]]:
        """Return the (line number, text) of every line in the run's scope, read once."""
        if self._scoped_lines is None:
            self._scoped_lines = list(scope.read_scoped(self))
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
        refs = self.gathered.refs.append
        handlers = _HANDLERS
        for raw in lines:
            number += 1
            line = facts_of(raw)
            for fact in line.facts:
                handlers[type(fact)](self, number, fact)
            if line.legacy is not None:
                self.gathered.legacy.append(LegacyLine(line.legacy["run_id"], line.legacy, number))
            if line.trace_id or line.ids:
                refs((number, segment, offset, len(raw), line))
            offset += len(raw)

    def _run_start(self, lineno: int, fact: RunStart) -> None:
        self.run_starts_seen += 1
        run = self.gathered.runs.get(fact.run_id)
        if run is None:
            run = Run(fact.run_id, fact.session_id, fact.trace_id, set(), set(), lineno)
            self.gathered.runs[run.run_id] = run
        if fact.span_id:
            run.spans.add(fact.span_id)
        run.parent_spans.add(fact.parent_span_id)

    def _tool_start(self, lineno: int, fact: ToolStart) -> None:
        self.gathered.tools.append(
            ToolCall(fact.name, fact.run_id, fact.time, lineno, fact.tool_call_id)
        )

    def _tool_end(self, lineno: int, fact: ToolEnd) -> None:
        self.gathered.tool_ends[(fact.run_id, fact.tool_call_id)] = fact.time

    def _run_done(self, lineno: int, fact: RunDone) -> None:
        if fact.run_id in self.gathered.runs:
            self.gathered.runs[fact.run_id].done = True

    def _agent_ended(self, lineno: int, fact: AgentEnded) -> None:
        self.gathered.ended.add(fact.run_id)

    def _session_key(self, lineno: int, fact: SessionKey) -> None:
        self.gathered.keys.setdefault(fact.session_id, fact.session_key)

    def _failure(self, lineno: int, fact: Failure) -> None:
        self.gathered.failures.append((fact.run_id, fact.error))

    def _hook(self, lineno: int, fact: Hook) -> None:
        self.gathered.hooks.append(fact)


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
