"""Opik (Comet): read the run's trace through the REST search endpoints (NDJSON, paged)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from clawspec.config.settings import Settings
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.backends.http import (
    MAX_PAGES,
    HttpApi,
    excerpt_of,
    flatten,
    iso_ms,
    merged_trace,
    run_candidates,
    setting,
    window_params,
)
from clawspec.traces.model import Span, SpanType, Trace
from clawspec.traces.normalize import as_float, as_int, make_span

DEFAULT_URL = "https://www.comet.com/opik/api/"
DEFAULT_PROJECT = "Default Project"
SUBAGENT_PREFIX = "subagent:"  # the OpenClaw→Opik plugin's name for a sub-agent's general span


class OpikBackend:
    """Opik (Comet cloud or self-hosted)."""

    name = "opik"
    trace_page_size = 100
    span_page_size = 500

    def __init__(self, settings: Settings, environ: Mapping[str, str]) -> None:
        observability = settings.observability
        url = setting(observability.url, environ.get("OPIK_URL_OVERRIDE"), default=DEFAULT_URL)
        self.workspace = setting(observability.workspace, environ.get("OPIK_WORKSPACE"), default="")
        self.project = setting(
            observability.project, environ.get("OPIK_PROJECT_NAME"), default=DEFAULT_PROJECT
        )
        api_key = environ.get("OPIK_API_KEY", "")
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = api_key  # Opik wants the bare key, no "Bearer"
        if self.workspace:
            headers["Comet-Workspace"] = self.workspace
        self.http = HttpApi(self.name, url, auth_hint="OPIK_API_KEY", headers=headers)
        if not api_key and self.http.host.endswith("comet.com"):
            raise self.http.unavailable("no API key (set OPIK_API_KEY)")

    def find_trace(self, query: TraceQuery) -> Trace | None:
        """Return the run's trace: exact correlation first, a time window only if unambiguous."""
        return merged_trace(
            self.name,
            self._correlated(query),
            self._spans,
            start="start_time",
            end="end_time",
            cost="total_estimated_cost",
            url_of=self._ui_url,
        )

    def _correlated(self, query: TraceQuery) -> list[dict[str, Any]]:
        """Return the run's traces (several when one session produced several)."""
        exact: list[dict[str, Any]] = []
        if query.session_key:
            exact.append({"field": "thread_id", "operator": "=", "value": query.session_key})
        for run_id in dict.fromkeys(i for i in (query.run_id, query.gateway_run_id) if i):
            exact.append({"field": "metadata", "key": "run_id", "operator": "=", "value": run_id})
        for condition in exact:
            found = list(self._search("v1/private/traces/search", {"filters": [condition]}))
            if found:
                return found
        window = window_params(query, "from_time", "to_time")
        candidates = run_candidates(
            self._search("v1/private/traces/search", window),
            query,
            start="start_time",
            session="thread_id",
        )
        return candidates if len(candidates) == 1 else []

    def _spans(self, trace_id: str) -> list[Span]:
        return [
            opik_span(item, trace_id)
            for item in self._search(
                "v1/private/spans/search", {"trace_id": trace_id}, self.span_page_size
            )
        ]

    def _search(
        self, path: str, body: Mapping[str, Any], page_size: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield every object of an NDJSON search, paging with `last_retrieved_id`."""
        limit = page_size or self.trace_page_size
        last_id: str | None = None
        for _ in range(MAX_PAGES):
            request = {"project_name": self.project, **body, "limit": limit}
            if last_id:
                request["last_retrieved_id"] = last_id
            response = self.http.call("POST", path, body=request)
            assert response is not None  # missing_ok is False
            page = self._ndjson(path, response.text)
            yield from page
            if len(page) < limit or str(page[-1]["id"]) == last_id:
                return
            last_id = str(page[-1]["id"])

    def _ndjson(self, path: str, text: str) -> list[dict[str, Any]]:
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                raise self.http.malformed(
                    path, f"line {number} is not JSON ({excerpt_of(line)})"
                ) from None
            if not isinstance(item, dict) or not item.get("id"):
                raise self.http.malformed(path, f"line {number} is not an object with an 'id'")
            items.append(item)
        return items

    def _ui_url(self, trace: Mapping[str, Any]) -> str | None:
        """Return the trace's page in the Opik UI (the API base without `api/`), if derivable."""
        project_id = trace.get("project_id")
        base = self.http.base_url
        if not project_id or not base.endswith("/api/"):
            return None
        workspace = self.workspace or "default"
        return f"{base[: -len('api/')]}{workspace}/projects/{project_id}/traces?trace={trace['id']}"


def opik_span(item: Mapping[str, Any], trace_id: str) -> Span:
    """Map one Opik span (fields as the REST API returns them) onto the normalized Span."""
    kind = str(item.get("type") or "general").lower()
    name = str(item.get("name") or "")
    usage = item.get("usage") if isinstance(item.get("usage"), Mapping) else {}
    error_info = item.get("error_info") if isinstance(item.get("error_info"), Mapping) else {}
    attributes = flatten(item.get("metadata"))
    for key in ("provider", "tags"):
        if item.get(key):
            attributes.setdefault(key, item[key])
    attributes["opik.type"] = kind
    span = make_span(
        id=str(item["id"]),
        trace_id=str(item.get("trace_id") or trace_id),
        name=name,
        attributes=attributes,
        parent_id=item.get("parent_span_id") or None,
        start_ms=iso_ms(item.get("start_time")),
        end_ms=iso_ms(item.get("end_time")),
        duration_ms=as_float(item.get("duration")),  # already milliseconds in Opik
        kind_hint=kind,
        error=error_info.get("message") or error_info.get("exception_type") or None,
        model=item.get("model") or None,
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        total_tokens=as_int(usage.get("total_tokens")),
        cost_usd=as_float(item.get("total_estimated_cost")),  # native cost lives here, not usage
    )
    if kind == "general" and name.startswith(SUBAGENT_PREFIX):
        span = replace(span, type=SpanType.AGENT, agent_name=name[len(SUBAGENT_PREFIX) :] or None)
    elif kind in ("llm", "tool"):
        span = replace(span, type=SpanType(kind))
    if span.type == SpanType.TOOL and not span.tool_name:
        span = replace(span, tool_name=name)
    return span
