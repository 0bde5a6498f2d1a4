"""The scenario's trace as shared evidence: pick the backend, look the trace up once per scenario.

Every trace assertion of a scenario reads the same `Trace` — or the same `TraceUnavailable`, so
they all `skip` with one reason (an unavailable backend or a missing trace is never a
`fail`). What the spans say is worked out in `evidence.spans`; the report reads the trace found
here (`Evidence.built_trace`). A scenario that did not pass and that no trace assertion looked up
gets a short lookup of its own for the report (`report_trace`), so its trace is linked where a
reader needs it most.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from clawspec.evidence.store import RunBackend
from clawspec.evidence.trace_poll import poll_trace
from clawspec.text import one_line
from clawspec.traces.backends.base import TraceBackend, TraceQuery
from clawspec.traces.model import Trace, TraceUnavailable

if TYPE_CHECKING:
    from clawspec.assertions.base import EvalContext
    from clawspec.config.settings import Settings
    from clawspec.evidence.store import Evidence

# Backend name → (module, class); imported only when chosen, so an unused backend costs nothing.
BACKENDS: dict[str, tuple[str, str]] = {
    "local": ("clawspec.traces.backends.local", "LocalBackend"),
    "opik": ("clawspec.traces.backends.opik", "OpikBackend"),
    "phoenix": ("clawspec.traces.backends.phoenix", "PhoenixBackend"),
    "langfuse": ("clawspec.traces.backends.langfuse", "LangfuseBackend"),
}
NO_BACKEND = "no observability backend configured"
# The report's own lookup (`report_trace`): short, so a failing scenario never waits out
# `trace_timeout_ms`, and a slow or down backend costs each such scenario at most this.
REPORT_LOOKUP_MS = 2000
REPORT_POLL_DELAY_MS = 250


def make_backend(settings: Settings, environ: Mapping[str, str]) -> TraceBackend | None:
    """Return the configured trace backend, or None for `none`.

    Raises ImportError when the backend's module is missing, and whatever its constructor
    raises for bad configuration; `scenario_trace` turns both into a skip reason.
    """
    name = settings.trace_backend
    if name == "none":
        return None
    module_name, class_name = BACKENDS[name]
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return backend_class(settings, environ)


def run_backend(settings: Settings, environ: Mapping[str, str]) -> RunBackend:
    """The run's backend, built once per run; a set-up failure is kept (and raised per
    scenario, where it becomes every trace assertion's skip)."""
    try:
        return RunBackend(make_backend(settings, environ))
    except Exception as exc:
        return RunBackend(failure=exc)


def scenario_trace(ctx: EvalContext) -> Trace | TraceUnavailable:
    """Return the scenario's trace, or why it cannot be had; the backend is asked once.

    The TraceUnavailable is returned (and cached), not raised, so every trace assertion of the
    scenario reports the same reason without asking the backend again.
    """
    related = related_ids(ctx.evidence)  # read before `trace`: its lock is not reentrant
    return ctx.evidence.trace(lambda: _lookup(ctx, related))


def report_trace(ctx: EvalContext, timeout_ms: int = REPORT_LOOKUP_MS) -> None:
    """Look the trace up for the report when no assertion did and a backend is configured.

    Bounded by `timeout_ms` (and `trace_timeout_ms`, if shorter), without waiting for late
    sub-agents or for the local backend's trace to settle: the report needs the trace's id and
    link, and takes the spans as they are. What it finds (or why not) is kept as the scenario's
    trace, so the report reads it as it reads one an assertion fetched. Never raises.
    """
    if ctx.evidence.built_trace() is not None or ctx.settings.trace_backend == "none":
        return
    observability = ctx.settings.observability
    related = related_ids(ctx.evidence)  # read before `trace`: its lock is not reentrant
    ctx.evidence.trace(
        lambda: _lookup(
            ctx,
            related,
            timeout_ms=min(timeout_ms, observability.trace_timeout_ms),
            delay_ms=min(REPORT_POLL_DELAY_MS, observability.trace_poll_delay_ms),
            complete=False,
        )
    )


def related_ids(evidence: Evidence) -> frozenset[str]:
    """Return the ids a log index already built for this run ties to it (never builds one)."""
    # only the indexes an assertion already built: the trace never forces reading the log
    ids: set[str] = set()
    for index in evidence.built_log_indexes():
        if index.found:
            ids |= index.run_ids | index.session_ids | index.session_keys | index.trace_ids
    return frozenset(i for i in ids if i)


def build_query(
    ctx: EvalContext, related: frozenset[str] = frozenset(), *, complete: bool = True
) -> TraceQuery:
    """Return the query naming this scenario's run (`complete=False`: the trace as it is now,
    without waiting for late spans)."""
    run = ctx.run
    return TraceQuery(
        run_id=run.run_id,
        session_key=run.session_key,
        gateway_run_id=run.gateway_run_id,
        started_at=run.started_at,
        ended_at=run.completed_at or datetime.now(run.started_at.tzinfo),
        scenario=run.scenario,
        related_ids=related,
        wait_s=ctx.evidence_wait_s() if complete else 0.0,
        complete=complete,
    )


def _backend(ctx: EvalContext) -> TraceBackend | None:
    """The run's backend: the one the runner set up once per run, else one made from settings."""
    run = ctx.evidence.trace_backend
    if run is None:
        return make_backend(ctx.settings, os.environ)
    if run.failure is not None:  # the run's set-up failed: the same reason everywhere
        raise run.failure
    return run.backend


def _lookup(
    ctx: EvalContext,
    related: frozenset[str],
    *,
    timeout_ms: int | None = None,
    delay_ms: int | None = None,
    complete: bool = True,
) -> Trace | TraceUnavailable:
    name = ctx.settings.trace_backend
    try:
        backend = _backend(ctx)
    except TraceUnavailable as exc:
        return exc
    except Exception as exc:  # a missing module or bad configuration must not crash the run
        return TraceUnavailable(f"trace backend '{name}' could not be set up: {_cause(exc)}")
    if backend is None:
        return TraceUnavailable(NO_BACKEND)
    name = getattr(backend, "name", name)
    observability = ctx.settings.observability
    try:
        return poll_trace(
            backend,
            build_query(ctx, related, complete=complete),
            delay_ms=observability.trace_poll_delay_ms if delay_ms is None else delay_ms,
            timeout_ms=observability.trace_timeout_ms if timeout_ms is None else timeout_ms,
            stop=ctx.stop,
        )
    except TraceUnavailable as exc:
        return exc
    except Exception as exc:  # requests errors, malformed data: skip with the cause, never fail
        return TraceUnavailable(f"trace backend '{name}' failed to return the trace: {_cause(exc)}")


def _cause(exc: Exception) -> str:
    text = one_line(str(exc), 200)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
