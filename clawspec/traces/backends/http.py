"""The small `requests` wrapper and helpers the trace backends share.

`HttpApi` turns every outage (refused, timeout, 5xx, 401/403, malformed answer) into a
`TraceUnavailable` whose one-line reason names the backend, the host and the cause — never a
credential. Every request has a deadline, not a read timeout: the whole answer must
arrive within TIMEOUT_S's second value, and within the trace lookup's own deadline
(`poll_trace` runs the backend in a `deadline.scope`), whose expiry is passed on as
`DeadlineExceeded`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from clawspec.net import deadline as net
from clawspec.net import sessions
from clawspec.text import fmt_number, one_line
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.model import Span, Trace, TraceUnavailable
from clawspec.traces.normalize import as_float

TIMEOUT_S = (5.0, 10.0)  # (connect, the whole answer): the second one is a deadline
MAX_PAGES = 50  # a bound on paging, so a server that never ends its pages cannot hang a run
WINDOW_SLACK = timedelta(seconds=2)  # clock skew allowed around the run for the time window
SESSION_PREFIX = "hook:clawspec:"  # session keys ClawSpec gives its runs (another run's = not ours)


class HttpApi:
    """Call one backend's HTTP API; map every failure to a one-line `TraceUnavailable`."""

    def __init__(
        self,
        backend: str,
        base_url: str,
        *,
        auth_hint: str,
        headers: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
    ) -> None:
        self.backend = backend
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.host = host_of(base_url)
        self.auth_hint = auth_hint
        self.timeout_s = TIMEOUT_S
        self.session = sessions.session()
        self.session.headers.update(headers or {})
        if auth is not None:  # else the session's own, which adds no netrc login
            self.session.auth = auth

    def unavailable(self, cause: str) -> TraceUnavailable:
        """Return the outage error for `cause`."""
        return TraceUnavailable(f"trace backend '{self.backend}' at {self.host}: {cause}")

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        missing_ok: bool = False,
    ) -> requests.Response | None:
        """Send one request; return the response, or None for a 404 when `missing_ok`."""
        url = urljoin(self.base_url, path.lstrip("/"))
        where = f"{method} {urlsplit(url).path}"
        limit_s = self.timeout_s[1]
        deadline = net.Deadline.after(limit_s, f"{fmt_number(limit_s)} s")
        try:
            response = net.request(
                self.session,
                method,
                url,
                params=params,
                json=body,
                deadline=deadline,
                connect_timeout_s=self.timeout_s[0],
            )
        except net.DeadlineExceeded:
            outer = net.tightest(None)
            if outer is not None and outer.passed():
                raise  # the lookup's deadline: poll_trace reports it
            raise self.unavailable(f"timed out after {fmt_number(limit_s)} s") from None
        except requests.ConnectTimeout:
            raise self.unavailable(f"timed out connecting after {self.timeout_s[0]:g} s") from None
        except requests.Timeout:
            raise self.unavailable(f"timed out after {self.timeout_s[1]:g} s") from None
        except requests.ConnectionError as exc:
            raise self.unavailable(connection_cause(exc, self.timeout_s[1])) from None
        except net.BodyTooLarge:
            raise self.unavailable(
                f"its answer to {where} is longer than "
                f"{net.MAX_BODY_BYTES // (1024 * 1024)} MiB; not read on"
            ) from None
        except requests.RequestException as exc:
            raise self.unavailable(f"request failed ({type(exc).__name__})") from None
        status = response.status_code
        if status in (401, 403):
            raise self.unavailable(f"HTTP {status} (check {self.auth_hint})")
        if status == 404 and missing_ok:
            return None
        if status >= 400:
            excerpt = one_line(response.text, 120)
            raise self.unavailable(
                f"HTTP {status} on {where}" + (f": {excerpt}" if excerpt else "")
            )
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request and return its JSON body (None for an allowed 404)."""
        response = self.call(method, path, **kwargs)
        if response is None:
            return None
        try:
            return response.json()
        except ValueError:
            raise self.malformed(path, f"not JSON ({excerpt_of(response.text)})") from None

    def malformed(self, path: str, what: str) -> TraceUnavailable:
        """Return the outage error for an answer of the wrong shape."""
        return self.unavailable(f"malformed answer from {path.lstrip('/')}: {what}")


def host_of(url: str) -> str:
    """Return `host[:port]` of `url`, never its user-info (credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or url
    return f"{host}:{parts.port}" if parts.port else host


def connection_cause(exc: requests.ConnectionError, read_timeout_s: float) -> str:
    """Name why a connection failed, from the text of the urllib3 error chain."""
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused"
    if "timed out" in text.lower():  # a read timeout while the body streams arrives as this
        return f"timed out after {read_timeout_s:g} s"
    if any(s in text for s in ("Name or service not known", "NameResolution", "nodename")):
        return "host not found"
    if "SSL" in text:
        return "TLS handshake failed"
    if any(s in text for s in ("RemoteDisconnected", "Connection aborted", "reset by peer")):
        return "connection closed without an answer"
    return "connection failed"


def excerpt_of(text: str) -> str:
    return repr(one_line(text, 40)) if text.strip() else "empty body"


def iso_ms(value: Any) -> float | None:
    """Return epoch milliseconds of an ISO-8601 time (naive = UTC), or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp() * 1000


def iso(moment: datetime) -> str:
    """Return `moment` as UTC ISO-8601 with a Z."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten nested mappings into dotted keys (`{"a": {"b": 1}}` → `{"a.b": 1}`)."""
    if not isinstance(value, Mapping):
        return {prefix: value} if prefix else {}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(item, Mapping) and item:
            flat.update(flatten(item, name))
        else:
            flat[name] = item
    return flat


def window_params(query: TraceQuery, low: str, high: str) -> dict[str, str]:
    """The run's time window, widened by WINDOW_SLACK, as a backend's two query parameters."""
    return {low: iso(query.started_at - WINDOW_SLACK), high: iso(query.ended_at + WINDOW_SLACK)}


def in_window(start_ms: float | None, query: TraceQuery) -> bool:
    """Whether a trace that started at `start_ms` may be the run's (inside its time window)."""
    if start_ms is None:
        return False
    low = (query.started_at - WINDOW_SLACK).timestamp() * 1000
    high = (query.ended_at + WINDOW_SLACK).timestamp() * 1000
    return low <= start_ms <= high


def is_foreign_session(value: Any, query: TraceQuery) -> bool:
    """Whether `value` is another ClawSpec run's session key (so not this run's trace)."""
    return (
        isinstance(value, str) and value.startswith(SESSION_PREFIX) and value != query.session_key
    )


def run_candidates(
    traces: Iterable[dict[str, Any]], query: TraceQuery, *, start: str, session: str
) -> list[dict[str, Any]]:
    """The listed traces that may be the run's: started in its time window (`start`), and not
    another ClawSpec run's (`session`)."""
    return [
        trace
        for trace in traces
        if in_window(iso_ms(trace.get(start)), query)
        and not is_foreign_session(trace.get(session), query)
    ]


def setting(*values: str | None, default: str) -> str:
    """Return the first non-empty value (empty counts as unset), else `default`."""
    return next((v for v in values if v), default)


def merged_trace(
    backend: str,
    traces: list[dict[str, Any]],
    spans_of: Callable[[str], Iterable[Span]],
    *,
    start: str,
    cost: str,
    url_of: Callable[[Mapping[str, Any]], str | None],
    end: str | None = None,
) -> Trace | None:
    """One Trace from the run's trace(s) as the backend lists them (None when there is none),
    with the spans `spans_of(trace id)` reads for each: spans in start order, the id and link of
    the earliest trace, the envelope from the earliest `start` to the latest `end` (no `end`
    key: the latest span end), the native `cost`s summed (None when none is known)."""
    if not traces:
        return None
    spans = sorted(
        (span for trace in traces for span in spans_of(str(trace["id"]))),
        key=lambda s: (s.start_ms is None, s.start_ms or 0),
    )
    first = min(traces, key=lambda t: iso_ms(t.get(start)) or 0)
    starts = [iso_ms(t.get(start)) for t in traces]
    ends = [iso_ms(t.get(end)) for t in traces] if end else [s.end_ms for s in spans]
    known_starts = [t for t in starts if t is not None]
    known_ends = [t for t in ends if t is not None]
    known_costs = [c for c in (as_float(t.get(cost)) for t in traces) if c]
    return Trace(
        id=str(first["id"]),
        backend=backend,
        spans=tuple(spans),
        start_ms=min(known_starts) if known_starts else None,
        end_ms=max(known_ends) if known_ends else None,
        url=url_of(first),
        cost_usd=sum(known_costs) if known_costs else None,
    )
