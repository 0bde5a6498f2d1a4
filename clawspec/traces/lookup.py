"""Find the scenario's trace: poll the backend with backoff until a deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from clawspec.traces.backends.base import TraceBackend, TraceQuery
from clawspec.traces.model import Trace, TraceUnavailable


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

    Raises TraceUnavailable for an outage (at once) or when no trace was found in time.
    """
    stop = stop or threading.Event()
    deadline = clock() + timeout_ms / 1000
    wait_s = max(delay_ms / 1000, 0.05)
    attempts = 0
    while True:
        attempts += 1
        trace = backend.find_trace(query)
        if trace is not None and trace.spans:
            return trace
        remaining = deadline - clock()
        if remaining <= 0 or stop.is_set():
            raise TraceUnavailable(
                f"no trace found in '{backend.name}' for run {query.run_id} "
                f"(session key {query.session_key or 'none'}) after {attempts} "
                f"attempt{'s' if attempts != 1 else ''} in {timeout_ms / 1000:g} s"
            )
        stop.wait(min(wait_s, remaining))
        wait_s = min(wait_s * 2, 5.0)
