"""`observability.backend: local`: read the run's spans from ClawSpec's own OTLP receiver.

The receiver (`clawspec.traces.receiver`) is found by `observability.url`: the receiver running
in this process at that endpoint (bring-up mode starts one and sets the url), else the same url
over HTTP (a receiver started with `python -m clawspec.traces.receiver`). With no url: the one
receiver running in this process, else `http://127.0.0.1:4318`.

Correlation: exact keys first — the gateway's hook run id (on the plugin's
`openclaw.hook` span) when the gateway returned one, else the session key ClawSpec sent (=
OpenClaw's `logicalSessionKey`, on the same span) and ClawSpec's run id; then the ids the gateway
log tied to the run (embedded run ids, session keys and ids, trace ids); a time window only when
exactly one trace overlaps it. The hook spans of attempts the gateway refused before they started
(the client retries those; they share the session key) are not part of the run's trace. The
trace is every span with the matched trace id(s) — sub-agent runs share their parent's trace id
on OpenClaw; spans of another trace whose parent span is in the matched one are merged in as well.

Spans arrive in batches while and just after the run, so a trace is only returned once it has
been quiet for `observability.trace_settle_ms`, or once it has been visible for half of
`observability.trace_timeout_ms` (then as it is); the report's own lookup for a scenario that
did not pass (`TraceQuery.complete` false) takes it as it is at once. Sub-agents that start
late are waited for by `poll_trace`, up to the scenario's evidence window, for every backend
alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Protocol

import requests

from clawspec.config.settings import Settings
from clawspec.net import deadline as net
from clawspec.net import sessions
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.model import Span, Trace, TraceUnavailable
from clawspec.traces.normalize import make_span
from clawspec.traces.otlp_json import ReceivedSpan
from clawspec.traces.receiver import DEFAULT_PORT, FIND_PATH, normalize_endpoint, running_receiver
from clawspec.traces.span_store import TraceMatch

DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
WINDOW_SLACK_NS = 1_000_000_000  # clocks of the gateway and ClawSpec differ a little


class _Source(Protocol):
    def find(self, keys: Iterable[str], window: tuple[int, int] | None = None) -> TraceMatch: ...


class _HttpSource:
    """A receiver in another process, asked over its read endpoint."""

    def __init__(self, url: str, timeout_s: float = 5.0) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._session = sessions.session()

    def find(self, keys: Iterable[str], window: tuple[int, int] | None = None) -> TraceMatch:
        params: list[tuple[str, str | int]] = [("key", key) for key in keys]
        if window is not None:
            params += [("start_ns", window[0]), ("end_ns", window[1])]
        where = f"local trace receiver at {self.url}"
        # A deadline for the whole answer (and the lookup's, when `poll_trace` set one).
        deadline = net.Deadline.after(self.timeout_s)
        try:
            resp = net.request(
                self._session,
                "GET",
                self.url + FIND_PATH,
                params=params,
                deadline=deadline,
                connect_timeout_s=self.timeout_s,
            )
        except net.DeadlineExceeded:
            outer = net.tightest(None)
            if outer is not None and outer.passed():
                raise  # the lookup's deadline: poll_trace reports it
            raise TraceUnavailable(
                f"{where}: no whole answer within {self.timeout_s:g} s"
            ) from None
        except requests.RequestException as exc:
            raise TraceUnavailable(f"{where} unreachable ({type(exc).__name__})") from exc
        if resp.status_code == 404:
            raise TraceUnavailable(f"{where} is not a ClawSpec receiver (HTTP 404)")
        if resp.status_code != 200:
            raise TraceUnavailable(f"{where} answered HTTP {resp.status_code}")
        try:
            return TraceMatch.from_json(resp.json())
        except (ValueError, KeyError, TypeError) as exc:
            raise TraceUnavailable(f"{where} sent a malformed answer") from exc


class LocalBackend:
    """TraceBackend over ClawSpec's embedded OTLP receiver."""

    name = "local"

    def __init__(
        self,
        settings: Settings,
        environ: Mapping[str, str] | None = None,
        *,
        settle_ms: float | None = None,
        max_settle_ms: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        del environ  # the local backend needs no credentials
        obs = settings.observability
        self.url = normalize_endpoint(obs.url) if obs.url else None
        self.settle_ms = settle_ms if settle_ms is not None else obs.trace_settle_ms
        # Past half of the lookup's own timeout a never-quiet trace is taken as it is, so the
        # lookup still answers within `trace_timeout_ms`.
        self.max_settle_ms = (
            max_settle_ms if max_settle_ms is not None else obs.trace_timeout_ms / 2
        )
        self._clock = clock
        self._first_seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._http: _HttpSource | None = None

    def _source(self) -> _Source:
        receiver = running_receiver(self.url)
        if receiver is not None:
            return receiver.store
        url = self.url or DEFAULT_URL
        if self._http is None or self._http.url != url:
            self._http = _HttpSource(url)
        return self._http

    def find_trace(self, query: TraceQuery) -> Trace | None:
        # The hook run id names the one attempt that ran. The session key does not: an attempt
        # the gateway refused before its run started (retried by the client) carries it too.
        first = (
            [query.gateway_run_id] if query.gateway_run_id else [query.session_key, query.run_id]
        )
        keys = [*first, *sorted(query.related_ids)]
        window = (
            _ns(query.started_at) - WINDOW_SLACK_NS,
            _ns(query.ended_at) + WINDOW_SLACK_NS,
        )
        match = self._source().find(list(dict.fromkeys(k for k in keys if k)), window)
        if match.by not in ("key", "window") or not match.spans:
            return None
        if query.complete and not self._settled(query.run_id, match):
            return None
        match = without_other_attempts(match, query.gateway_run_id)
        return build_trace(match) if match.spans else None

    def _settled(self, run_id: str, match: TraceMatch) -> bool:
        now = self._clock()
        with self._lock:
            first = self._first_seen.setdefault(run_id, now)
        if (now - first) * 1000 >= self.max_settle_ms:
            return True
        return match.idle_ms >= self.settle_ms


def without_other_attempts(match: TraceMatch, hook_run_id: str | None) -> TraceMatch:
    """Drop the hook spans of attempts other than `hook_run_id` (refused before they started,
    then retried), and the traces left with nothing else."""
    if not hook_run_id:
        return match

    def other_attempt(span: ReceivedSpan) -> bool:
        run = span.attributes.get("openclaw.hook_run_id")
        return span.name == "openclaw.hook" and run is not None and run != hook_run_id

    spans = tuple(s for s in match.spans if not other_attempt(s))
    if len(spans) == len(match.spans):
        return match
    kept = {s.trace_id for s in spans}
    trace_ids = tuple(t for t in match.trace_ids if t in kept) or match.trace_ids
    return replace(match, trace_ids=trace_ids, spans=spans)


def build_trace(match: TraceMatch) -> Trace:
    """The normalized Trace of a match: spans in start order, envelope times."""
    spans = tuple(to_span(s) for s in match.spans)
    starts = [s.start_ms for s in spans if s.start_ms is not None]
    ends = [s.end_ms for s in spans if s.end_ms is not None]
    ids = {s.span_id for s in match.spans}
    roots = [s for s in match.spans if not s.parent_span_id or s.parent_span_id not in ids]
    trace_id = roots[0].trace_id if roots else match.trace_ids[0]
    return Trace(
        id=trace_id,
        backend=LocalBackend.name,
        spans=spans,
        start_ms=min(starts) if starts else None,
        end_ms=max(ends) if ends else None,
    )


def to_span(span: ReceivedSpan) -> Span:
    attrs = {**span.resource, **span.attributes}
    error = None
    if span.status_code == 2:
        error = span.status_message or _exception_message(span) or "error"
    return make_span(
        id=span.span_id,
        trace_id=span.trace_id,
        name=span.name,
        attributes=attrs,
        parent_id=span.parent_span_id,
        start_ms=span.start_ns / 1e6 if span.start_ns else None,
        end_ms=span.end_ns / 1e6 if span.end_ns else None,
        error=error,
    )


def _exception_message(span: ReceivedSpan) -> str | None:
    for event in span.events:
        if event.get("name") == "exception":
            attrs = event.get("attributes") or {}
            message = attrs.get("exception.message") or attrs.get("exception.type")
            if message:
                return str(message)
    return None


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)
