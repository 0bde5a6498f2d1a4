"""The backend protocol and the query that identifies a scenario's run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from clawspec.traces.model import Trace


@dataclass(frozen=True)
class TraceQuery:
    """What ClawSpec knows about the run it needs the trace of (correlated by the
    exact keys ClawSpec controls; a time window only when exactly one trace matches)."""

    run_id: str  # ClawSpec's run id
    session_key: str | None  # the session key ClawSpec sent (hook:clawspec:<run_id>)
    gateway_run_id: str | None  # the hook run id the gateway returned
    started_at: datetime  # the scenario's start (aware)
    ended_at: datetime  # when the agent run completed (aware)
    scenario: str
    # Ids the gateway log tied to the run (embedded run ids, session keys/ids, trace ids).
    related_ids: frozenset[str] = frozenset()
    # How long late spans (sub-agents that start after the answer) may still be waited for:
    # derived from the scenario's timeout (EvalContext.evidence_wait_s).
    wait_s: float = 0.0
    # False: the trace as it is now will do (the report's own lookup wants its id and link), so
    # a backend need not wait for it to settle.
    complete: bool = True


class TraceBackend(Protocol):
    """One observability backend."""

    name: str

    def find_trace(self, query: TraceQuery) -> Trace | None:
        """Return the run's trace, or None when it is not (yet) there.

        Raise TraceUnavailable for outages: unreachable, timeout, 5xx, auth failure, malformed
        answer — with a one-line reason naming the backend and the cause (never a secret).
        """
        ...
