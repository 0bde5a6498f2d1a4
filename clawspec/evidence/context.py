"""What an assertion is evaluated with and what it answers: the run (`RunInfo`), everything an
evaluator may use (`EvalContext`) and its `Verdict`.

Below the assertions, so evidence readers (`log`) can answer with a verdict of their own (a run
not found in the log is `error`) without importing the assertions that read them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec.inputs.paths import resolve_in_workspace
from clawspec.status import Status

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.evidence.store import Evidence


@dataclass(frozen=True)
class Verdict:
    """What an evaluator returns: a status, a one-line message, and the measured value/limit."""

    status: Status
    message: str
    value: Any = None
    limit: Any = None
    details: tuple[str, ...] = ()
    # Judge calls: {"model", "calls", "input_tokens", "output_tokens", "cost_usd"}.
    usage: dict[str, Any] | None = None

    @classmethod
    def passed(
        cls, message: str, value: Any = None, limit: Any = None, details: tuple[str, ...] = ()
    ) -> Verdict:
        return cls(Status.PASS, message, value, limit, details)

    @classmethod
    def failed(
        cls, message: str, value: Any = None, limit: Any = None, details: tuple[str, ...] = ()
    ) -> Verdict:
        return cls(Status.FAIL, message, value, limit, details)

    @classmethod
    def skipped(cls, reason: str) -> Verdict:
        return cls(Status.SKIP, reason)

    @classmethod
    def warned(cls, message: str, value: Any = None, limit: Any = None) -> Verdict:
        return cls(Status.WARN, message, value, limit)

    @classmethod
    def errored(cls, message: str) -> Verdict:
        return cls(Status.ERROR, message)


# Late evidence is waited for at least this share of the scenario's timeout after the answer,
# and never less than MIN_EVIDENCE_WAIT_S (EvalContext.evidence_wait_s).
EVIDENCE_FLOOR = 0.25
MIN_EVIDENCE_WAIT_S = 5.0


@dataclass(frozen=True)
class RunInfo:
    """Identity of one scenario run (ClawSpec's own id and the gateway's ids)."""

    scenario: str
    run_id: str
    started_at: datetime
    session_key: str | None = None
    gateway_run_id: str | None = None
    completed_at: datetime | None = None  # when the gateway reported the agent run complete
    agent_id: str | None = None  # the agent that ran it, when ClawSpec chose it (a chat run)
    # A conversation's runs in this scope, by the chat responses' ids (a turn: its own; the
    # conversation's `then`: every turn's); empty for a hook run.
    chat_run_ids: tuple[str, ...] = ()
    # The conversation's session: its record is looked up by it (an index of OpenClaw's covers
    # it), while a turn's log lines are scoped by its run alone.
    chat_session_key: str | None = None
    # A conversation: what was said in this scope, in order (a turn: its own exchange); None
    # for a plain scenario, whose reply is read from its run's record.
    transcript: tuple[Exchange, ...] | None = None
    # The scope is a whole conversation (its `then`, its report), not one turn: the runs
    # OpenClaw starts in its session to announce a sub-agent's result are its spend too.
    whole_conversation: bool = False


@dataclass(frozen=True)
class Exchange:
    """One turn of a conversation: the user's message and the agent's reply (None: no reply)."""

    turn: int  # 0-based; text says "turn 1" for 0
    say: str
    reply: str | None
    # The chat response's usage (input, output, total tokens); None: it gave none.
    usage: tuple[int, int, int] | None = None


@dataclass
class EvalContext:
    """Everything an evaluator may use. Shared evidence is lazy and built once per run."""

    workspace: Path
    settings: Settings
    run: RunInfo
    evidence: Evidence
    poll_interval_s: float = 1.0
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic
    timeout_s: float = 60.0  # the scenario's timeout: what evidence waits are derived from
    started_clock: float | None = None  # `clock()` when the run started (None: not started)

    def evidence_wait_s(self) -> float:
        """How much longer a run's late evidence (log lines, sub-agents, spans) is waited for.

        Until the scenario's timeout runs out, counted from the run's start, and at least a
        quarter of the timeout from now (never under MIN_EVIDENCE_WAIT_S): a run that used its
        whole timeout still gives the sub-agents it spawned time to show up. A busy machine
        slows the gateway, its sub-agents and its log alike, so the scenario's timeout, which
        the user raises for a slow agent, is the one scale every wait follows.
        """
        elapsed = 0.0 if self.started_clock is None else self.clock() - self.started_clock
        return max(self.timeout_s - elapsed, EVIDENCE_FLOOR * self.timeout_s, MIN_EVIDENCE_WAIT_S)

    def path(self, value: str) -> Path:
        """Resolve a contract path against the workspace (raises PathEscapeError on escape)."""
        return resolve_in_workspace(value, self.workspace)

    def wait_until(self, predicate: Callable[[], bool], timeout_s: float) -> bool:
        """Poll `predicate` every poll interval until it holds or `timeout_s` passes.

        Returns the last result. The wait ends early when the scenario is abandoned (`stop`:
        a second interrupt, or the end of the grace period after the first).
        """
        deadline = self.clock() + timeout_s
        while True:
            if predicate():
                return True
            remaining = deadline - self.clock()
            if remaining <= 0 or self.stop.is_set():
                return False
            self.stop.wait(min(self.poll_interval_s, remaining))
