"""Langfuse: find the trace by session id, then read its observations through the v2 API.

`GET /api/public/v2/observations` (cursor paged) is the real-time read path; the v1 traces list
can lag, which polling absorbs. Correlation: `sessionId` = the session key ClawSpec sent, else a
trace in the run's time window whose metadata or tags carry the run id, else the window's only
trace.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from clawspec.config.settings import Settings
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.backends.http import (
    MAX_PAGES,
    HttpApi,
    flatten,
    iso_ms,
    merged_trace,
    run_candidates,
    setting,
    window_params,
)
from clawspec.traces.model import Span, SpanType, Trace
from clawspec.traces.normalize import as_float, as_int, make_span

DEFAULT_URL = "https://cloud.langfuse.com"
TRACES_PATH = "api/public/traces"
OBSERVATIONS_PATH = "api/public/v2/observations"
# `metadata` on top of the brief's groups: OTel-ingested observations keep gen_ai.* there.
FIELDS = "core,basic,usage,model,metrics,metadata"
KINDS = {"generation": "llm", "tool": "tool", "agent": "agent"}


class LangfuseBackend:
    """Langfuse (cloud or self-hosted)."""

    name = "langfuse"
    trace_page_size = 50
    observation_page_size = 1000

    def __init__(self, settings: Settings, environ: Mapping[str, str]) -> None:
        url = setting(settings.observability.url, environ.get("LANGFUSE_HOST"), default=DEFAULT_URL)
        public_key = environ.get("LANGFUSE_PUBLIC_KEY", "")
        secret_key = environ.get("LANGFUSE_SECRET_KEY", "")
        self.http = HttpApi(
            self.name,
            url,
            auth_hint="LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY",
            headers={"Accept": "application/json"},
            auth=(public_key, secret_key),
        )
        if not (public_key and secret_key):
            raise self.http.unavailable(
                "no credentials (set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY)"
            )

    def find_trace(self, query: TraceQuery) -> Trace | None:
        """Return the run's trace, or None while it is not there."""
        return merged_trace(
            self.name,
            self._correlated(query),
            self._observations,
            start="timestamp",
            cost="totalCost",
            url_of=self._ui_url,
        )

    def _correlated(self, query: TraceQuery) -> list[dict[str, Any]]:
        if query.session_key:
            found = list(self._traces({"sessionId": query.session_key}))
            if found:
                return found
        window = window_params(query, "fromTimestamp", "toTimestamp")
        candidates = run_candidates(
            self._traces(window), query, start="timestamp", session="sessionId"
        )
        ids = {i for i in (query.run_id, query.gateway_run_id) if i}
        tagged = [t for t in candidates if ids & _labels(t)]
        if tagged:
            return tagged
        return candidates if len(candidates) == 1 else []

    def _traces(self, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Yield the traces of the (page-numbered) v1 list."""
        for page in range(1, MAX_PAGES + 1):
            data, meta = self._page(
                TRACES_PATH, {**params, "page": page, "limit": self.trace_page_size}
            )
            yield from data
            total_pages = as_int(meta.get("totalPages"))
            if not data or (total_pages is not None and page >= total_pages):
                return
            if total_pages is None and len(data) < self.trace_page_size:
                return

    def _observations(self, trace_id: str) -> Iterator[Span]:
        """Yield the trace's observations as spans, following `meta.cursor`."""
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = {"traceId": trace_id, "fields": FIELDS, "limit": self.observation_page_size}
            if cursor:
                params["cursor"] = cursor
            data, meta = self._page(OBSERVATIONS_PATH, params)
            yield from (langfuse_span(item, trace_id) for item in data)
            next_cursor = meta.get("cursor")
            if not data or not next_cursor or next_cursor == cursor:
                return
            cursor = str(next_cursor)

    def _page(
        self, path: str, params: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], Mapping[str, Any]]:
        """Return one page of a list: its `data` (objects with an id) and its `meta`."""
        answer = self.http.json("GET", path, params=params)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or any(
            not isinstance(item, dict) or not item.get("id") for item in data
        ):
            raise self.http.malformed(path, "expected {data: [{id, ...}], meta}")
        meta = answer.get("meta") if isinstance(answer.get("meta"), dict) else {}
        return data, meta

    def _ui_url(self, trace: Mapping[str, Any]) -> str:
        path = trace.get("htmlPath")
        base = self.http.base_url.rstrip("/")
        if isinstance(path, str) and path.startswith("/"):
            return base + path
        return f"{base}/trace/{trace['id']}"


def _labels(trace: Mapping[str, Any]) -> set[str]:
    """Every string a trace's tags and metadata values carry (where a run id may be)."""
    labels = {t for t in trace.get("tags") or [] if isinstance(t, str)}
    labels |= {v for v in flatten(trace.get("metadata")).values() if isinstance(v, str)}
    return labels


def langfuse_span(item: Mapping[str, Any], trace_id: str) -> Span:
    """Map one v2 observation onto the normalized Span."""
    kind = str(item.get("type") or "SPAN").lower()
    name = str(item.get("name") or "")
    attributes = flatten(item.get("metadata"))
    for key, value in list(attributes.items()):
        if key.startswith("attributes."):  # OTel-ingested: metadata.attributes.<otel key>
            attributes.setdefault(key[len("attributes.") :], value)
    attributes["langfuse.type"] = kind.upper()
    usage = _mapping(item.get("usageDetails")) or _mapping(item.get("usage"))
    costs = _mapping(item.get("costDetails"))
    error = None
    if str(item.get("level") or "").upper() == "ERROR":
        error = item.get("statusMessage") or "error"
    cost = as_float(item.get("totalCost"))
    span = make_span(
        id=str(item["id"]),
        trace_id=str(item.get("traceId") or trace_id),
        name=name,
        attributes=attributes,
        parent_id=item.get("parentObservationId") or None,
        start_ms=iso_ms(item.get("startTime")),
        end_ms=iso_ms(item.get("endTime")),
        duration_ms=_latency_ms(item.get("latency")),
        kind_hint=KINDS.get(kind, kind),
        error=error,
        model=item.get("providedModelName") or item.get("model") or None,
        input_tokens=as_int(usage.get("input")),
        output_tokens=as_int(usage.get("output")),
        total_tokens=as_int(usage.get("total")),
        cost_usd=cost if cost is not None else as_float(costs.get("total")),
    )
    if kind == "tool" and not span.tool_name:
        span = replace(span, tool_name=name)
    if span.type == SpanType.AGENT and not span.agent_name:
        span = replace(span, agent_name=name or None)
    return span


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _latency_ms(value: Any) -> float | None:
    seconds = as_float(value)  # Langfuse reports latency in seconds
    return None if seconds is None else seconds * 1000
