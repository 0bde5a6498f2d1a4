"""The run's record as OpenClaw keeps it (its trajectory), for the runs an evidence scope covers.

A plain scenario's scope is the run its hook request started, found through the session key the
log's `gateway/hooks` line names; a conversation's turn is the run its chat request started (the
response's id); a conversation's `then` covers every turn's run. Each run is followed into the
sub-agents it spawned. The store (`openclaw_state_dir`; bring-up sets its own) is read once per
scope, after the runs ended, waiting for late events within the scenario's timeout.

Whatever keeps ClawSpec from reading it (no state folder set, no store, an unknown record
version, a store that stays locked, a run not recorded in time) becomes an `error` verdict with
the reason: an assertion on the record never passes, and is never skipped, without it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from clawspec.evidence.context import EvalContext, RunInfo, Verdict
from clawspec.evidence.log import RunLog
from clawspec.evidence.store import PluginKey
from clawspec.gateway.logs.scope import hook_session_keys
from clawspec.gateway.plugin_records import PluginRecord, read_plugin_records
from clawspec.gateway.refusals import CallKey, ToolAnswers
from clawspec.gateway.trajectory.cuts import (
    ARRAY_SIZE_LIMIT,
    OBJECT_SIZE_LIMIT,
    REDACTED,
    TRUNCATED_KEY,
    args_cuts,
    bound_marker,
    container_cut,
    credential_key,
    cut_detail,
)
from clawspec.gateway.trajectory.errors import TrajectoryError
from clawspec.gateway.trajectory.layout import SETTING_HINT, agent_of, holds_agent_stores
from clawspec.gateway.trajectory.reader import TrajectoryReader, wait_for
from clawspec.gateway.trajectory.values import SentMessage, Trajectory

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.evidence.store import Evidence

# The record's types, for the assertions that judge it (they ask the evidence layer, never the
# readers: tests/test_layers.py).
__all__ = [
    "ARRAY_SIZE_LIMIT",
    "OBJECT_SIZE_LIMIT",
    "REDACTED",
    "STATE_DIR_HINT",
    "TRUNCATED_KEY",
    "Executed",
    "RunRecords",
    "SentMessage",
    "Trajectory",
    "args_cuts",
    "bound_marker",
    "container_cut",
    "credential_key",
    "cut_detail",
    "executed",
    "report_records",
    "run_records",
    "runs_of",
]

STATE_DIR_HINT = SETTING_HINT + "; bring-up sets it itself"


@dataclass(frozen=True)
class RunRecords:
    """The runs of an evidence scope in order (one for a plain scenario or a turn, each turn's
    for a conversation), each with its sub-agents' runs in `children`."""

    runs: tuple[Trajectory, ...]
    # A whole conversation's: the runs OpenClaw started in its session on its own to announce
    # a sub-agent's result. No turn's (their text and calls are not a turn's, and a turn's
    # evidence is read before they need to have run), but their model calls are the
    # conversation's spend.
    announced: tuple[Trajectory, ...] = ()


class _Abandoned(Exception):
    """The scenario was abandoned (an interrupt) while its record was waited for."""


def run_records(
    ctx: EvalContext, until: Literal["complete", "settled"] = "settled"
) -> RunRecords | Verdict:
    """The scope's runs, or an `error` verdict saying why they cannot be had. Read once per
    scope and shared by its assertions. `until="complete"` waits only for the runs themselves
    (the reply is the parent's: its sub-agents need not end); a record read that way before its
    sub-agents ended is read again, waiting for them, when a reader needs them settled."""

    def stale(found: RunRecords | Verdict) -> bool:
        return (
            until == "settled"
            and isinstance(found, RunRecords)
            and not all(run.settled for run in found.runs)
        )

    return ctx.evidence.records(lambda: _read(ctx, until), stale)


def _read(ctx: EvalContext, until: Literal["complete", "settled"]) -> RunRecords | Verdict:
    state = ctx.settings.openclaw_state_dir
    if not state:
        return Verdict.errored(
            "this is read from the gateway's run record, and ClawSpec does not know where it "
            f"is: {STATE_DIR_HINT}"
        )
    run = ctx.run
    wrong = _no_agent_stores(Path(state))
    if wrong is not None:
        return Verdict.errored(f"cannot read the run's record: {wrong}")

    def pause(seconds: float) -> None:
        if ctx.stop.wait(seconds):
            raise _Abandoned

    def waited(read: Callable[[], Trajectory]) -> Trajectory:
        return wait_for(
            read,
            timeout_s=ctx.evidence_wait_s(),
            poll_s=ctx.poll_interval_s,
            clock=ctx.clock,
            sleep=pause,
            until=until,
        )

    return _lookup(
        Path(state), run, ctx.settings.default_agent_id, lambda: _hook_session_key(ctx), waited
    )


def _no_agent_stores(state: Path) -> str | None:
    """Why `state` cannot be the state folder of the gateway that ran the scope's runs, else
    None. The runs have ended when their record is read, and OpenClaw makes an agent's store
    (under agents/) before its first run ends: waiting would find nothing, so this is said at
    once, not after the scenario's timeout."""
    if holds_agent_stores(state):
        return None
    if not state.exists():
        what = "does not exist"
    elif not state.is_dir():
        what = "is not a folder"
    else:
        what = "holds no agents/ folder: no OpenClaw agent ever ran with it as its state folder"
    return f"{state} {what}; {STATE_DIR_HINT}"


def _lookup(
    state: Path,
    run: RunInfo,
    default_agent: str,
    hook_key: Callable[[], str | Verdict],
    waited: Callable[[Callable[[], Trajectory]], Trajectory],
) -> RunRecords | Verdict:
    """The scope's runs from the stores under `state`: a conversation's by its chat runs' ids,
    a hook run by the session `hook_key` gives."""
    with TrajectoryReader(state) as reader:
        try:
            if run.chat_run_ids:
                session = run.chat_session_key or run.session_key
                agent = run.agent_id or agent_of(session or "") or default_agent
                runs = tuple(
                    waited(lambda rid=rid: reader.chat_run(agent, rid, session))
                    for rid in run.chat_run_ids
                )
                if not run.whole_conversation:  # a turn: its own runs
                    return RunRecords(runs)
                return RunRecords(runs, _announcements(reader, agent, session, runs))
            key = hook_key()
            if isinstance(key, Verdict):
                return key
            agent = agent_of(key) or default_agent
            return RunRecords((waited(lambda: reader.hook_run(agent, key)),))
        except TrajectoryError as exc:
            return Verdict.errored(f"cannot read the run's record: {exc}")
        except _Abandoned:
            return Verdict.errored("the scenario was stopped before the run's record was read")


# OpenClaw's id of the run announcing a sub-agent's result: this, the sub-agent's session key,
# then an id of its own (read on 2026.9.6).
ANNOUNCE_PREFIX = "announce:v1:"


def _announcements(
    reader: TrajectoryReader, agent: str, session: str | None, runs: tuple[Trajectory, ...]
) -> tuple[Trajectory, ...]:
    """The runs of the session announcing the result of one of `runs`' sub-agents."""
    keys = {c.session_key for run in runs for c in runs_of(run.children) if c.session_key}
    if not keys or not session:
        return ()
    prefixes = tuple(f"{ANNOUNCE_PREFIX}{key}:" for key in keys)
    # Only these are followed into their sub-agents: the turns' runs were read already.
    session_runs = reader.store(agent).session_runs(session)
    return tuple(reader.follow(r) for r in session_runs if r.run_id.startswith(prefixes))


def report_records(
    evidence: Evidence,
    run: RunInfo,
    settings: Settings | None,
    hook_session_keys: Sequence[str],
    wait_s: float,
    stop: threading.Event | None = None,
) -> RunRecords | None:
    """The scope's runs for the report: as an assertion read them when they are complete, else
    read now, waiting at most `wait_s` for sub-agents still running (the report must not slow
    a scenario down). `hook_session_keys`: the sessions the report's log index names for the
    hook run. None when they cannot be had (no state folder, not recorded in time, a record an
    assertion already found unreadable): the report then counts from the other evidence."""
    found = evidence.built_records()
    if isinstance(found, Verdict):
        return None  # already waited for within the scenario's timeout: not read again
    if found is not None and all(r.settled for r in found.runs):
        return found
    if settings is None or not settings.openclaw_state_dir:
        return None
    if not holds_agent_stores(Path(settings.openclaw_state_dir)):
        # No agent of any gateway ever ran with this folder, while the scope's run has ended:
        # a wrong `openclaw_state_dir`. Waiting a second per scenario would find nothing.
        return None
    halt = stop or threading.Event()

    def pause(seconds: float) -> None:
        if halt.wait(seconds):
            raise _Abandoned

    def waited(read: Callable[[], Trajectory]) -> Trajectory:
        return wait_for(read, timeout_s=wait_s, poll_s=min(0.1, wait_s), sleep=pause)

    def hook_key() -> str | Verdict:
        keys = [key for key in hook_session_keys if agent_of(key)]
        return keys[-1] if keys else Verdict.errored("no session named for the hook run")

    read = _lookup(
        Path(settings.openclaw_state_dir), run, settings.default_agent_id, hook_key, waited
    )
    return read if isinstance(read, RunRecords) else None


def _hook_session_key(ctx: EvalContext) -> str | Verdict:
    """The session a hook run ran in, as the log's `gateway/hooks` line names it."""
    log = RunLog.load(ctx, None, None)
    if log.problem is not None:
        return Verdict.errored(
            "the run's record is found through the gateway log's `gateway/hooks` line: "
            + log.problem.message
        )
    keys = [key for key in hook_session_keys(log.index) if agent_of(key)]
    if not keys:
        return Verdict.errored(
            f"run {log.label}: the gateway log names no session for the hook run (no "
            "`gateway/hooks` line with a session key), so its record cannot be found"
        )
    return keys[-1]  # a retried request: the attempt that ran is logged last


def runs_of(runs: tuple[Trajectory, ...]) -> Iterator[Trajectory]:
    """Every run of `runs` and, after each, its sub-agents' runs (depth first)."""
    for run in runs:
        yield run
        yield from runs_of(run.children)


@dataclass(frozen=True)
class Executed:
    """The scope's runs with the calls ClawSpec's plugin saw refused marked so, and the failed
    calls it could not tell yet (their runs' plugin records were not complete in time)."""

    runs: tuple[Trajectory, ...]
    undecided: frozenset[CallKey]
    waited_s: float = 0.0


def executed(ctx: EvalContext, found: RunRecords) -> Executed:
    """`found` with refusals decided as the log-based assertions decide them
    (`clawspec.gateway.refusals`): the record itself tells only a "not found" answer from a call
    that ran, so a failed call is looked up in the plugin's records (a `before_tool_call` block,
    arguments that did not validate). Without plugin output, or without the plugin's record of
    a run, no call of it counts as refused (as for the log); a run the plugin saw start is
    waited for until its records are complete, within the scenario's timeout."""
    plugin = ctx.evidence.plugin_output
    doubtful = {
        (run.run_id, call.tool_call_id)
        for run in runs_of(found.runs)
        for call in run.tool_calls
        if call.success is False and not call.refused
    }
    if plugin is None or not doubtful:
        return Executed(found.runs, frozenset())
    offset = ctx.evidence.plugin_offset
    run_ids = tuple(sorted({run_id for run_id, _ in doubtful}))
    started = ctx.clock()

    def load() -> list[PluginRecord]:
        records: list[PluginRecord] = []

        def settled() -> bool:
            records[:] = read_plugin_records(plugin, offset)
            return not _answers(records).open_runs(run_ids)

        ctx.wait_until(settled, ctx.evidence_wait_s())
        return records

    answers = _answers(ctx.evidence.plugin_records(PluginKey(plugin, offset, run_ids), load))
    refused = answers.refusals()
    runs = tuple(run.with_refusals(refused.keys()) for run in found.runs)
    still_open = set(answers.open_runs(run_ids))
    undecided = frozenset(key for key in doubtful if key[0] in still_open)
    return Executed(runs, undecided, ctx.clock() - started)


def _answers(records: Iterable[PluginRecord]) -> ToolAnswers:
    answers = ToolAnswers()
    for record in records:
        answers.add(record)
    return answers
