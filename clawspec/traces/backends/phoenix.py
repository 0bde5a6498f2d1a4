"""Arize Phoenix: read the run's spans through `GET /v1/projects/{project}/spans` (cursor paged).

Correlation uses span attributes the OTLP exporter sets (`openclaw.session_key`, `session.id`,
`clawspec.run_id`, `openclaw.run_id`) and trace ids the gateway log tied to the run; a time window
only when exactly one trace's root span falls in it. An unknown project answers 404: that is "no
trace yet" (Phoenix creates the project with its first span), not an outage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

from clawspec.config.settings import Settings
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.backends.http import (
    MAX_PAGES,
    HttpApi,
    flatten,
    in_window,
    is_foreign_session,
    iso_ms,
    setting,
    window_params,
)
from clawspec.traces.model import Span, Trace
from clawspec.traces.normalize import make_span

DEFAULT_URL = "http://127.0.0.1:6006"
DEFAULT_PROJECT = "default"
PAGE_SIZE = 1000  # Phoenix's maximum
SESSION_ATTRIBUTES = ("openclaw.session_key", "session.id")
RUN_ATTRIBUTES = ("clawspec.run_id", "openclaw.run_id")
OTEL_TRACE_ID = re.compile(r"[0-9a-f]{32}")


class _Missing(Exception):
    """The project does not exist (yet)."""


class PhoenixBackend:
    """Arize Phoenix (self-hosted or cloud)."""

    name = "phoenix"
    page_size = PAGE_SIZE

    def __init__(self, settings: Settings, environ: Mapping[str, str]) -> None:
        observability = settings.observability
        url = setting(observability.url, default=DEFAULT_URL)
        self.project = setting(
            observability.project, environ.get("PHOENIX_PROJECT_NAME"), default=DEFAULT_PROJECT
        )
        headers = {"Accept": "application/json"}
        if environ.get("PHOENIX_API_KEY"):
            headers["Authorization"] = f"Bearer {environ['PHOENIX_API_KEY']}"
        self.http = HttpApi(self.name, url, auth_hint="PHOENIX_API_KEY", headers=headers)
        self._project_id: str | None = None

    @property
    def _spans_path(self) -> str:
        return f"v1/projects/{quote(self.project, safe='')}/spans"

    def find_trace(self, query: TraceQuery) -> Trace | None:
        """Return the run's trace, or None while it (or its project) is not there."""
        try:
            trace_ids = self._correlated(query)
            if not trace_ids:
                return None
            spans = [
                phoenix_span(item)
                for item in self._pages({"trace_id": sorted(trace_ids)}, self.page_size)
            ]
        except _Missing:
            return None
        spans.sort(key=lambda s: (s.start_ms is None, s.start_ms or 0))
        roots = [s for s in spans if s.parent_id is None] or spans
        root = roots[0] if roots else None
        return Trace(
            id=root.trace_id if root else sorted(trace_ids)[0],
            backend=self.name,
            spans=tuple(spans),
            start_ms=min((s.start_ms for s in roots if s.start_ms is not None), default=None),
            end_ms=max((s.end_ms for s in roots if s.end_ms is not None), default=None),
            url=self._ui_url(root.trace_id) if root else None,
        )

    def _correlated(self, query: TraceQuery) -> set[str]:
        """Return the ids of the run's traces: by attribute, by logged trace id, else window."""
        run_ids = (query.run_id, query.gateway_run_id)
        candidates = [(key, query.session_key) for key in SESSION_ATTRIBUTES]
        candidates += [(key, run_id) for run_id in run_ids for key in RUN_ATTRIBUTES]
        for key, value in candidates:
            if not value:
                continue
            params = {"attribute": f"{key}:{json.dumps(value)}"}  # quoted: always a string match
            found = {str(i["context"]["trace_id"]) for i in self._pages(params, self.page_size)}
            if found:
                return found
        logged = sorted(i for i in query.related_ids if OTEL_TRACE_ID.fullmatch(i))
        if logged:
            found = {str(i["context"]["trace_id"]) for i in self._pages({"trace_id": logged}, 1)}
            if found:
                return found
        window = {"parent_id": "null", **window_params(query, "start_time", "end_time")}
        roots = {
            str(item["context"]["trace_id"])
            for item in self._pages(window, self.page_size)
            if not item.get("parent_id")
            and in_window(iso_ms(item.get("start_time")), query)
            and not _is_foreign(item.get("attributes"), query)
        }
        return roots if len(roots) == 1 else set()

    def _pages(self, params: Mapping[str, Any], limit: int) -> Iterator[dict[str, Any]]:
        """Yield the spans matching `params`, following `next_cursor`; a 1-limit stops early."""
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            request = {**params, "limit": limit}
            if cursor:
                request["cursor"] = cursor
            answer = self.http.json("GET", self._spans_path, params=request, missing_ok=True)
            if answer is None:
                raise _Missing
            if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
                raise self.http.malformed(self._spans_path, "expected {data: [...], next_cursor}")
            for item in answer["data"]:
                if not (
                    isinstance(item, dict)
                    and isinstance(item.get("context"), dict)
                    and item["context"].get("trace_id")
                    and item["context"].get("span_id")
                ):
                    raise self.http.malformed(self._spans_path, "a span without context ids")
                yield item
            next_cursor = answer.get("next_cursor")
            if limit == 1 or not next_cursor or next_cursor == cursor:
                return
            cursor = str(next_cursor)

    def _ui_url(self, trace_id: str) -> str | None:
        """Return the trace's page in the Phoenix UI; the UI wants the project's global id."""
        if self._project_id is None:
            try:
                answer = self.http.json(
                    "GET", f"v1/projects/{quote(self.project, safe='')}", missing_ok=True
                )
            except Exception:  # a link is a nicety: never lose the trace over it
                return None
            data = answer.get("data") if isinstance(answer, dict) else None
            self._project_id = str(data.get("id") or "") if isinstance(data, dict) else ""
        if not self._project_id:
            return None
        return f"{self.http.base_url}projects/{self._project_id}/traces/{trace_id}"


def _is_foreign(attributes: Any, query: TraceQuery) -> bool:
    """Whether a root span carries another ClawSpec run's session key."""
    if not isinstance(attributes, Mapping):
        return False
    flat = flatten(attributes)
    return any(is_foreign_session(flat.get(key), query) for key in SESSION_ATTRIBUTES)


def phoenix_span(item: Mapping[str, Any]) -> Span:
    """Map one span of Phoenix's REST answer onto the normalized Span."""
    attributes = flatten(item.get("attributes") or {})
    kind = str(item.get("span_kind") or "")
    if kind and kind.upper() != "UNKNOWN":
        # Phoenix moves `openinference.span.kind` out of the attributes into `span_kind`.
        attributes.setdefault("openinference.span.kind", kind)
    error = None
    if str(item.get("status_code") or "").upper() == "ERROR":
        error = item.get("status_message") or _exception_message(item.get("events")) or "error"
    context = item["context"]
    return make_span(
        id=str(context["span_id"]),
        trace_id=str(context["trace_id"]),
        name=str(item.get("name") or ""),
        attributes=attributes,
        parent_id=item.get("parent_id") or None,
        start_ms=iso_ms(item.get("start_time")),
        end_ms=iso_ms(item.get("end_time")),
        kind_hint=kind.lower() or None,
        error=error,
    )


def _exception_message(events: Any) -> str | None:
    for event in events if isinstance(events, list) else []:
        attributes = event.get("attributes") if isinstance(event, dict) else None
        if isinstance(attributes, dict) and attributes.get("exception.message"):
            return str(attributes["exception.message"])
    return None
