"""Find the scenario's trace: poll the backend with backoff until a deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

from clawspec.traces.backends.base import TraceBackend, TraceQuery
from clawspec.traces.model import Trace, TraceUnavailable
from clawspec.traces.scope import only_this_run


def poll_trace(
    backend: TraceBackend,
    query: TraceQuery,
    *,
    delay_ms: int,
    timeout_ms: int,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Trace:
    """Return the trace, polling from `delay_ms` with doubling waits until `timeout_ms`.

    Only the run's own spans are kept (`scope.only_this_run`). A trace whose spawned sub-agents
    have not all shown up and finished is polled again until `query.wait_s` has passed, then
    returned with what is still missing in `pending`.
    Raises TraceUnavailable for an outage (at once) or when no trace was found in time.
    """
    from clawspec.traces.evidence import pending_subagents

    stop = stop or threading.Event()
    started = clock()
    deadline = started + timeout_ms / 1000
    complete_by = started + max(query.wait_s, 0.0)
    wait_s = max(delay_ms / 1000, 0.05)
    attempts = 0
    found: Trace | None = None
    missing: list[str] = []
    while True:
        attempts += 1
        trace = backend.find_trace(query)
        if trace is not None:
            trace = only_this_run(trace, query)  # spans of other runs are never evidence
        if trace is not None and trace.spans:
            found, missing = trace, pending_subagents(trace)
            if not missing:
                return trace
        end = complete_by if found is not None else deadline
        remaining = end - clock()
        if found is not None and (remaining <= 0 or stop.is_set()):
            waited = f" (waited {clock() - started:.1f} s)"
            return replace(found, pending=tuple(m + waited for m in missing))
        if remaining <= 0 or stop.is_set():
            raise TraceUnavailable(
                f"no trace found in '{backend.name}' for run {query.run_id} "
                f"(session key {query.session_key or 'none'}) after {attempts} "
                f"attempt{'s' if attempts != 1 else ''} in {timeout_ms / 1000:g} s"
            )
        stop.wait(min(wait_s, remaining))
        wait_s = min(wait_s * 2, 5.0)
