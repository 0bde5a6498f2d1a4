"""Which of the slice's lines are the scenario's run, and what of it has not arrived yet.

`index.LogIndex` keeps what every line of the slice said; this module scopes that to the run
ClawSpec asked about:

    hook run id / session key ClawSpec sent → `gateway/hooks` line (sessionId, sessionKey,
    traceId) → embedded runs of that session → sub-agent runs (same traceId, session key
    `agent:<agentId>:subagent:<uuid>`, started under a span of a run in scope), recursively.

A bare traceId is not enough: a heartbeat run of `agent:main:main` may inherit the trace of a
hook request, so sub-agents also need the sub-agent session key and the parent span. Sub-agent
keys are flat at every depth (`agent:<id>:subagent:<uuid>`; `agent:<id>:acp:<uuid>` for the ACP
runtime): nesting shows only through the parent span, which the scoping follows.

`resolve` is run again after every poll (a sub-agent may start late) and sets what the index
answers (runs, sessions, tool calls, the calls the gateway refused (`gateway.refusals`: not
calls, and a refused `sessions_spawn` no sub-agent to wait for), sub-agents, errors); `settled`
says when waiting can end,
`missing` what is still `pending` when it did (a spawned sub-agent that never started or did not
finish, a Tool Search wrapper still running); `read_scoped` reads the scope's lines back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from clawspec.gateway.logs.facts import Hook, LineFacts
from clawspec.gateway.logs.legacy import LegacyLine, read_legacy
from clawspec.gateway.logs.model import RefusedCall, ToolCall
from clawspec.gateway.tool_search import SPAWN_TOOL, unwrap, wrapper_call_id

if TYPE_CHECKING:
    from clawspec.gateway.logs.index import LogIndex

_SUBAGENT = re.compile(r"^agent:([^:]+):(?:subagent|acp):")


def resolve(index: LogIndex) -> None:
    """Scope the lines read so far to the run, and set what the index says about it."""
    seeds, keys = set(index.seeds), set(index.seed_keys)
    sessions: set[str] = set()
    session_keys: set[str] = set(keys)
    traces: set[str] = set()
    index.hook_seen = False
    for hook in _hooks_of(index):
        index.hook_seen = True
        sessions.update(s for s in (hook.session_id,) if s)
        session_keys.update(k for k in (hook.session_key, hook.logical_key) if k)
        traces.update(t for t in (hook.trace_id,) if t)
    for session_id, key in index.gathered.keys.items():
        if key in keys or any(key.endswith(f":{k}") for k in keys):
            sessions.add(session_id)
    all_runs = index.gathered.runs
    runs = {rid for rid, run in all_runs.items() if rid in seeds or run.session_id in sessions}
    children: list[str] = []
    grew = True
    while grew:  # sub-agents of runs in scope, recursively
        spans = set().union(*(all_runs[r].spans for r in runs)) if runs else set()
        run_traces = {all_runs[r].trace_id for r in runs}
        grew = False
        for rid, run in all_runs.items():
            key = index.gathered.keys.get(run.session_id, "")
            if rid in runs or not _SUBAGENT.match(key) or run.trace_id not in run_traces:
                continue
            if run.parent_spans & spans or run.parent_spans == {None}:
                runs.add(rid)
                children.append(rid)
                grew = True
    index.run_ids = runs
    index.session_ids = sessions | {all_runs[r].session_id for r in runs}
    index.session_keys = session_keys | {
        index.gathered.keys[s] for s in index.session_ids if s in index.gathered.keys
    }
    index.trace_ids = traces | {t for r in runs if (t := all_runs[r].trace_id)}
    legacy = [entry for entry in index.gathered.legacy if entry.run_id in seeds]
    index.found = bool(runs or legacy)
    _collect(index, runs, children, legacy)


def _collect(
    index: LogIndex, runs: set[str], children: list[str], legacy: list[LegacyLine]
) -> None:
    """Set the tool calls, sub-agents, errors and legacy usage of the runs in scope."""
    calls = [c for c in index.gathered.tools if c.run_id in runs]
    keys = index.gathered.keys
    agents = [_SUBAGENT.match(keys[index.gathered.runs[c].session_id]).group(1) for c in children]
    old = read_legacy(legacy)
    calls.extend(old.calls)
    agents.extend(old.agents)
    calls.sort(key=lambda c: c.line)
    ended = index.gathered.tool_ends
    split = unwrap(
        calls,
        name=lambda c: c.name,
        call_id=lambda c: c.tool_call_id,
        ended=lambda c: (c.run_id, c.tool_call_id or "") in ended,
    )
    refusals = index.answers.refusals() if index.answers is not None else {}
    refused: list[RefusedCall] = []

    def made(calls: list[ToolCall]) -> list[ToolCall]:
        """The calls the gateway ran the tool for; the refused ones go to `refused`. A call
        made through a Tool Search wrapper is logged only once its tool runs: never refused."""
        kept = []
        for call in calls:
            key = (call.run_id, call.tool_call_id or "")
            inner = wrapper_call_id(call.tool_call_id, call.name) is not None
            if key in refusals and not inner:
                refused.append(RefusedCall(call, refusals[key].answer))
            else:
                kept.append(call)
        return kept

    index.tool_calls = made(split.calls)
    index.tool_search_calls = made(split.controls)
    index.refused_calls = sorted(refused, key=lambda r: r.call.line)
    index.open_wrappers = split.open_wrappers
    index.subagents = list(dict.fromkeys(agents))
    index.errors = [err for rid, err in index.gathered.failures if rid in runs]
    index.legacy_usage = old.usage


def settled(index: LogIndex) -> bool:
    """The run's last lines are in: hook completion seen, every sub-agent ended.

    A completion without a single run line of the run settles it too: the gateway writes a
    run's start before the completion it awaits, so none can follow (its run lines are debug
    lines, and a gateway logging at info writes only the completion; `completion`)."""
    if not index.found:
        return index.hook_seen
    if any(entry.run_id in index.seeds for entry in index.gathered.legacy):
        return True  # legacy lines have no completion marker
    if not index.hook_seen:
        unended = _unended_seeds(index)
        if unended is None or unended:  # not started yet, or not ended yet
            return False
    return not children_pending(index) and not index.open_wrappers and not answers_pending(index)


def _unended_seeds(index: LogIndex) -> list[str] | None:
    """Without a hook completion (a chat turn, a run named by id), the run's own end line is
    what says its lines are in: the reply can reach ClawSpec before the gateway's log has its
    tool lines. The runs named that started and have not ended (None: none started yet)."""
    started = [r for r in index.seeds if r in index.gathered.runs]
    if not started:
        return None
    return [r for r in started if not _ended_run(index, r)]


def answers_pending(index: LogIndex) -> bool:
    """A call of the run was answered with an error, and the plugin's records of its run,
    begun, are not complete yet: whether the tool ran (a failed call) or not (a refused one)
    is not known yet. (A run the plugin has no harness record of is never waited for.)"""
    answers = index.answers
    if answers is None or not answers.errors:
        return False
    errored = {run for run, _ in answers.errors if run in index.run_ids}
    return bool(answers.open_runs(errored))


def children_pending(index: LogIndex) -> bool:
    """The run was found and called sessions_spawn, but not every child has ended."""
    if not index.found:
        return False
    spawns = sum(1 for c in index.tool_calls if c.name == SPAWN_TOOL)
    children = [r for r in index.run_ids if _is_child(index, r)]
    return spawns > len(children) or not all(_ended_run(index, r) for r in children)


def missing(index: LogIndex) -> list[str]:
    """What the run's slice still lacks: the end of a run named without a hook, children
    spawned but never started or still running, and Tool Search wrappers that have not
    ended (each may call a tool yet)."""
    out: list[str] = []
    if not index.hook_seen:
        for run_id in _unended_seeds(index) or []:
            run = index.gathered.runs[run_id]
            out.append(f"run {run_id} (started at line {run.line}) has no end line yet")
    spawns = [c for c in index.tool_calls if c.name == SPAWN_TOOL]
    children = sorted(
        (index.gathered.runs[r] for r in index.run_ids if _is_child(index, r)), key=lambda r: r.line
    )
    for spawn in spawns[len(children) :]:
        out.append(f"sub-agent spawned {_when(spawn)} by run {spawn.run_id} never started")
    for child in children:
        if not _ended_run(index, child.run_id):
            agent = index.agent_of(child.run_id) or "?"
            out.append(
                f"sub-agent run {child.run_id} (agent '{agent}', started at line "
                f"{child.line}) did not finish"
            )
    for wrapper in index.open_wrappers:
        out.append(
            f"Tool Search call '{wrapper.name}' {_when(wrapper)} in run {wrapper.run_id} "
            "did not end (it may still call a tool)"
        )
    return out


def completion(index: LogIndex) -> tuple[Hook, int] | None:
    """The run's `gateway/hooks` completion and how many debug lines the slice holds of the
    run's request (its trace, session or ids); None when the completion is not in the slice.

    With the completion seen but no run found, none of them says the gateway logs at info
    level (the completion is an INFO line; every other line of a run is a debug line)."""
    hook = next(_hooks_of(index), None)
    if hook is None:
        return None
    ids = _scope_ids(index)
    debug = sum(
        1
        for ref in index.gathered.refs
        if ref[4].debug and (ref[4].trace_id in index.trace_ids or not ids.isdisjoint(ref[4].ids))
    )
    return hook, debug


def read_scoped(index: LogIndex) -> Iterator[tuple[int, str]]:
    """Read back the (line number, text) of every line in the run's scope, in order."""
    scope = _scope_ids(index)
    refs = index.gathered.refs
    spans = {ref[4].span_id for ref in refs if ref[4].span_id and not scope.isdisjoint(ref[4].ids)}
    wanted = [ref for ref in refs if _in_scope(ref[4], scope, index.trace_ids, spans)]
    handles: dict[int, Any] = {}
    try:
        for number, segment, offset, length, _ in wanted:
            if segment not in handles:
                handles[segment] = index.segments[segment][0].open("rb")
            handle = handles[segment]
            handle.seek(offset)
            raw = handle.read(length)
            yield number, raw.decode("utf-8", errors="replace").rstrip("\r\n")
    finally:
        for handle in handles.values():
            handle.close()


def hook_session_keys(index: LogIndex) -> list[str]:
    """The session keys the run's `gateway/hooks` lines name (`agent:<id>:cron:<job id>:run:
    <session id>`), in log order: where OpenClaw recorded the hook's run."""
    return [hook.session_key for hook in _hooks_of(index) if hook.session_key]


def _hooks_of(index: LogIndex) -> Iterator[Hook]:
    """The `gateway/hooks` completions of the run asked for (by run id or session key).

    A session key also names the completions of attempts the gateway refused before the run
    started (ClawSpec retries those): when the hook run that ran is known, only its counts."""
    seeds, keys = set(index.seeds), set(index.seed_keys)
    for hook in index.gathered.hooks:
        by_key = bool({hook.logical_key, hook.session_key} & keys)
        if hook.run_id in seeds or (
            by_key and (index.hook_run is None or hook.run_id in (None, index.hook_run))
        ):
            yield hook


def _scope_ids(index: LogIndex) -> set[str]:
    """Every run / session id and session key a line of the run's scope may name."""
    scope = index.run_ids | index.session_ids | index.session_keys | set(index.seeds)
    scope |= {
        h.run_id for h in index.gathered.hooks if h.session_id in index.session_ids and h.run_id
    }
    return scope


def _in_scope(line: LineFacts, scope: set[str], traces: set[str], spans: set[str | None]) -> bool:
    """A line naming ids is in scope when it names one of the run's; a line naming none, when
    it was written in a span of the run's trace that lines of the run also use."""
    if line.ids:
        return not scope.isdisjoint(line.ids)
    return line.trace_id in traces and line.span_id in spans


def _is_child(index: LogIndex, run_id: str) -> bool:
    return bool(
        _SUBAGENT.match(index.gathered.keys.get(index.gathered.runs[run_id].session_id, ""))
    )


def _ended_run(index: LogIndex, run_id: str) -> bool:
    return index.gathered.runs[run_id].done or run_id in index.gathered.ended


def _when(call: ToolCall) -> str:
    return f"at {call.time}" if call.time else f"at line {call.line}"
