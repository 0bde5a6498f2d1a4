"""Find the scenario's trace: poll the backend with backoff until a deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

from clawspec.net.deadline import Deadline, DeadlineExceeded, scope
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

    The timeout is a deadline for the whole loop, requests included: every request the backend
    sends runs in a `deadline.scope` ending where the loop must end, so a request started at
    3.9 s of 4 s gets 0.1 s, and a backend that trickles its answers or takes 3 s per request
    cannot hold the loop past the timeout.
    """
    from clawspec.evidence.spans import pending_subagents

    stop = stop or threading.Event()
    started = clock()
    deadline = started + timeout_ms / 1000
    complete_by = started + max(query.wait_s, 0.0)
    wait_s = max(delay_ms / 1000, 0.05)
    attempts = 0
    found: Trace | None = None
    missing: list[str] = []
    limit = f"the trace timeout ({timeout_ms / 1000:g} s)"
    while True:
        attempts += 1
        end = complete_by if found is not None else deadline
        left_s = end - clock()  # the clock may be injected: the deadline is on the real clock
        try:
            with scope(Deadline.after(left_s, limit)):
                trace = backend.find_trace(query)
        except DeadlineExceeded as exc:
            if found is not None:
                waited = f" (waited {clock() - started:.1f} s)"
                return replace(found, pending=tuple(m + waited for m in missing))
            # The last look comes at the deadline: with no time left its request is not sent,
            # so it is not counted and says nothing about the backend's speed.
            cut = left_s > 0
            attempts -= 0 if cut else 1
            raise TraceUnavailable(
                f"no trace found in '{backend.name}' for run {query.run_id} "
                f"(session key {query.session_key or 'none'}) after {attempts} "
                f"attempt{'s' if attempts != 1 else ''} in {timeout_ms / 1000:g} s"
                + (f": {exc}" if cut else "")
            ) from None
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
