"""The run's reply: its final assistant text, read from OpenClaw's run record (trajectory).

A hook's answer carries no reply text, and the log's INFO line of a hook run does not either:
the reply is only in the agent's trajectory store (`clawspec.gateway.trajectory`), under the
state folder of the gateway (`openclaw_state_dir`; bring-up sets its own). The hook run is found
through the session key the log's `gateway/hooks` line names for it, read once per scenario run
after the run ended, waiting for its last events within the scenario's timeout.

Whatever keeps ClawSpec from reading it (no state folder set, no store, an unknown record
version, a store that stays locked, a run not recorded in time) becomes an `error` verdict with
the reason: a reply assertion never passes, and is never skipped, without the reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clawspec.evidence.context import EvalContext, Verdict
from clawspec.evidence.log import RunLog
from clawspec.gateway.logs.scope import hook_session_keys
from clawspec.gateway.trajectory import (
    Trajectory,
    TrajectoryError,
    TrajectoryReader,
    agent_of,
    wait_for,
)

__all__ = ["STATE_DIR_HINT", "Reply", "run_reply"]

STATE_DIR_HINT = (
    "set openclaw_state_dir (environment CLAWSPEC_OPENCLAW_STATE_DIR or OPENCLAW_STATE_DIR, "
    "action input openclaw_state_dir) to the state folder of the gateway (its "
    "OPENCLAW_STATE_DIR); bring-up sets it itself"
)


@dataclass(frozen=True)
class Reply:
    """A run's reply as OpenClaw recorded it. `text` None: the run wrote no final text."""

    text: str | None
    run_id: str  # the embedded run the reply was read from
    store: Path


class _Abandoned(Exception):
    """The scenario was abandoned (an interrupt) while its record was waited for."""


def run_reply(ctx: EvalContext) -> Reply | Verdict:
    """The scenario run's reply, or an `error` verdict saying why it cannot be had. Built once
    per scenario run and shared by its reply assertions."""
    return ctx.evidence.reply(lambda: _read(ctx))


def _read(ctx: EvalContext) -> Reply | Verdict:
    state = ctx.settings.openclaw_state_dir
    if not state:
        return Verdict.errored(
            "the reply is read from the gateway's run record, and ClawSpec does not know "
            f"where it is: {STATE_DIR_HINT}"
        )
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
    key = keys[-1]  # a retried request: the attempt that ran is logged last
    agent = agent_of(key) or ctx.settings.default_agent_id

    def pause(seconds: float) -> None:
        if ctx.stop.wait(seconds):
            raise _Abandoned

    with TrajectoryReader(Path(state)) as reader:
        try:
            run = wait_for(
                lambda: reader.store(agent).hook_run(key),
                timeout_s=ctx.evidence_wait_s(),
                poll_s=ctx.poll_interval_s,
                clock=ctx.clock,
                sleep=pause,
                until="complete",  # the reply is the parent's: its sub-agents need not end
            )
        except TrajectoryError as exc:
            return Verdict.errored(f"cannot read the run's reply: {exc}")
        except _Abandoned:
            return Verdict.errored("the scenario was stopped before the run's record was read")
    return _reply_of(run)


def _reply_of(run: Trajectory) -> Reply:
    return Reply(run.reply, run.run_id, run.store)
