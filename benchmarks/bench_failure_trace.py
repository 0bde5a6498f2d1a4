"""What the report's trace lookup costs a scenario that failed without trace assertions.

`report_trace` (clawspec/evidence/trace.py) against real local servers: ClawSpec's own OTLP
receiver holding the run's spans (found), the same receiver without them (never found: the
bound), the Opik test server holding the trace, and an Opik URL nothing listens on (down).
Prints the median time per failing scenario and its spread next to the goal: found at once,
never more than the bound (2 s), a backend that is down at once. Asserts nothing.

    .venv/bin/python benchmarks/bench_failure_trace.py [--quick]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests

from benchmarks.harness import QUICK, Figure, repeat, row
from clawspec.config.settings import Settings
from clawspec.evidence.context import RunInfo
from clawspec.evidence.store import Evidence, RunBackend
from clawspec.evidence.trace import REPORT_LOOKUP_MS, report_trace
from clawspec.traces.backends.local import LocalBackend
from clawspec.traces.backends.opik import OpikBackend
from clawspec.traces.receiver import OtlpReceiver
from tests.support.harness import make_context
from tests.support.trace_backends import OpikServer, closed_port
from tests.traces.test_local_backend import T0, TRACE_A, run_spans

KEY = "opik-key-123456"
WS = "team-ws"
RUN = RunInfo(
    "bench", "run-1", T0, session_key="hook:clawspec:run-1", completed_at=T0 + timedelta(seconds=5)
)
OPIK_TRACE = {
    "id": "t1",
    "project_id": "p1",
    "start_time": "2026-11-02T10:00:00.500Z",
    "thread_id": "*",
    "metadata": {},
}
OPIK_SPAN = {"id": "s1", "trace_id": "t1", "name": "write", "type": "tool", "start_time": None}


def timed(settings: Settings, make: Callable[[], object]) -> Callable[[], float]:
    """Seconds one failing scenario spends in `report_trace` (a fresh scenario each time)."""

    def measure() -> float:
        with tempfile.TemporaryDirectory() as folder:
            evidence = Evidence(requests.Session(), trace_backend=RunBackend(make()))  # type: ignore[arg-type]
            ctx = make_context(Path(folder), settings, evidence=evidence, run=RUN)
            start = time.perf_counter()
            report_trace(ctx)
            return time.perf_counter() - start

    return measure


def show(name: str, figure: Figure, goal: str) -> None:
    row(name, f"{figure.median * 1000:.1f} ms", figure.spread("ms", 1000, 1), goal)


def main() -> None:
    times = 3 if QUICK else 7
    bound = f"≤ {REPORT_LOOKUP_MS / 1000:g} s"
    print(f"report_trace per failing scenario ({times} repeats; bound {bound})")
    with OtlpReceiver(0) as full, OtlpReceiver(0) as empty:
        full.store.add(run_spans(TRACE_A, "r1", logical="hook:clawspec:run-1"))
        cases = [("local, trace there", full, "at once"), ("local, no trace", empty, bound)]
        for name, receiver, goal in cases:
            local = Settings(observability={"backend": "local", "url": receiver.endpoint})
            show(name, repeat(times, timed(local, lambda s=local: LocalBackend(s, {}))), goal)
    opik_key = {"OPIK_API_KEY": KEY}
    with OpikServer(KEY, WS) as server:
        server.traces, server.spans = [OPIK_TRACE], [OPIK_SPAN]
        opik = Settings(observability={"backend": "opik", "url": server.base_url, "workspace": WS})
        show("opik, trace there", repeat(times, timed(opik, lambda: OpikBackend(opik, opik_key))),
             "at once")  # fmt: skip
    url = f"http://127.0.0.1:{closed_port()}/api/"
    down = Settings(observability={"backend": "opik", "url": url})
    show("opik, nothing listening", repeat(times, timed(down, lambda: OpikBackend(down, opik_key))),
         "at once")  # fmt: skip


if __name__ == "__main__":
    main()
