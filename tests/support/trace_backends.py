"""Local servers (127.0.0.1) speaking the trace backends' documented read APIs, for adapter tests.

- `OpikServer`: `POST /api/v1/private/{traces,spans}/search` answering NDJSON, paged with
  `limit` + `last_retrieved_id`; checks `Authorization: <key>` and `Comet-Workspace`.
- `LangfuseServer`: `GET /api/public/traces` (page-numbered) and `GET /api/public/v2/observations`
  (cursor paged); checks Basic auth.
- `PhoenixServer`: `GET /v1/projects/{project}/spans` (cursor paged, `trace_id`, `attribute`,
  `parent_id`, `start_time`/`end_time`), `GET /v1/projects/{project}`; unknown project → 404.

Each has a switchable `fault`: "401", "500", "hang" (answers only when the server stops),
"malformed" (an HTML page), "wrong_shape" (JSON of the wrong shape), "empty" (no data at all).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

FAULTS = ("401", "500", "hang", "malformed", "wrong_shape", "empty")


class FakeServer:
    """Base: `with Server(...) as server:`; `server.url`, `server.requests`, `server.fault`."""

    def __init__(self) -> None:
        self.fault: str | None = None
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()

    # Subclasses: check auth, then answer (status, content type, body bytes).
    def authorized(self, headers: Any) -> bool:
        raise NotImplementedError

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
        raise NotImplementedError

    def render(self, payload: Any) -> tuple[str, bytes]:
        return "application/json", json.dumps(payload).encode()

    def shaped_fault(self) -> bytes:
        return b'{"data": "not a list"}'

    def empty(self) -> bytes:
        return b'{"data": [], "meta": {}, "next_cursor": null}'

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                query = parse_qs(parts.query)
                server.requests.append(
                    {"method": method, "path": parts.path, "query": query, "body": body}
                )
                fault = server.fault
                if fault == "hang":
                    server.released.wait(60)
                    return
                if fault == "401" or not server.authorized(self.headers):
                    self._send(401, "application/json", b'{"message": "unauthorized"}')
                elif fault == "500":
                    self._send(500, "application/json", b'{"message": "database is on fire"}')
                elif fault == "malformed":
                    self._send(200, "text/html", b"<html><body>Sign in</body></html>")
                elif fault == "wrong_shape":
                    self._send(200, "application/json", server.shaped_fault())
                elif fault == "empty":
                    self._send(200, "application/json", server.empty())
                else:
                    result = server.answer(method, parts.path, query, body)
                    if isinstance(result, int):
                        self._send(result, "application/json", b'{"detail": "Not Found"}')
                    else:
                        self._send(200, *server.render(result))

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _page_after(items: list[dict[str, Any]], last_id: str | None, limit: int) -> list[Any]:
    start = 0
    if last_id:
        start = next((i + 1 for i, item in enumerate(items) if item["id"] == last_id), len(items))
    return items[start : start + limit]


class OpikServer(FakeServer):
    """Opik's REST search endpoints under `/api/` (the self-hosted base)."""

    def __init__(self, api_key: str = "opik-key-123456", workspace: str = "team-ws") -> None:
        super().__init__()
        self.api_key = api_key
        self.workspace = workspace
        self.project = "Default Project"
        self.traces: list[dict[str, Any]] = []
        self.spans: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"{self.url}/api/"

    def authorized(self, headers: Any) -> bool:
        return (
            headers.get("Authorization") == self.api_key
            and headers.get("Comet-Workspace") == self.workspace
        )

    def render(self, payload: Any) -> tuple[str, bytes]:
        lines = "".join(json.dumps(item) + "\n" for item in payload)
        return "application/octet-stream", lines.encode()

    def shaped_fault(self) -> bytes:
        return b'["not", "an", "object"]\n'

    def empty(self) -> bytes:
        return b""

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
        if method != "POST" or path not in (
            "/api/v1/private/traces/search",
            "/api/v1/private/spans/search",
        ):
            return 404
        if body.get("project_name") != self.project:
            return []
        if path.endswith("traces/search"):
            items = [t for t in self.traces if _opik_match(t, body)]
        else:
            items = [s for s in self.spans if s["trace_id"] == body.get("trace_id")]
        return _page_after(items, body.get("last_retrieved_id"), int(body.get("limit") or 100))


def _opik_match(trace: dict[str, Any], body: dict[str, Any]) -> bool:
    for condition in body.get("filters") or []:
        assert condition["operator"] == "="
        if condition["field"] == "thread_id" and trace.get("thread_id") == "*":
            continue  # "*": a canned trace for whatever session ClawSpec asks about (CLI tests)
        if condition["field"] == "metadata":
            value = (trace.get("metadata") or {}).get(condition["key"])
        else:
            value = trace.get(condition["field"])
        if value != condition["value"]:
            return False
    start = trace.get("start_time", "")
    if body.get("from_time") and start < body["from_time"]:
        return False
    return not (body.get("to_time") and start > body["to_time"])


class LangfuseServer(FakeServer):
    """Langfuse's public API: v1 traces list and v2 observations."""

    def __init__(self, public_key: str = "pk-lf-1234", secret_key: str = "sk-lf-5678") -> None:
        super().__init__()
        self.credentials = base64.b64encode(f"{public_key}:{secret_key}".encode()).decode()
        self.traces: list[dict[str, Any]] = []
        self.observations: list[dict[str, Any]] = []

    def authorized(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Basic {self.credentials}"

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
        one: Callable[[str], str | None] = lambda key: (query.get(key) or [None])[0]  # noqa: E731
        if path == "/api/public/traces":
            items = self.traces
            if one("sessionId"):
                items = [t for t in items if t.get("sessionId") == one("sessionId")]
            if one("fromTimestamp"):
                items = [t for t in items if t["timestamp"] >= one("fromTimestamp")]
            if one("toTimestamp"):
                items = [t for t in items if t["timestamp"] <= one("toTimestamp")]
            page, limit = int(one("page") or 1), int(one("limit") or 50)
            total_pages = max(1, -(-len(items) // limit))
            return {
                "data": items[(page - 1) * limit : page * limit],
                "meta": {"page": page, "limit": limit, "totalItems": len(items)}
                | {"totalPages": total_pages},
            }
        if path == "/api/public/v2/observations":
            items = [o for o in self.observations if o["traceId"] == one("traceId")]
            limit = int(one("limit") or 50)
            last_id = base64.b64decode(one("cursor")).decode() if one("cursor") else None
            page = _page_after(items, last_id, limit)
            more = page and page[-1] is not items[-1]
            cursor = base64.b64encode(page[-1]["id"].encode()).decode() if more else None
            return {"data": page, "meta": {"cursor": cursor} if cursor else {}}
        return 404


class PhoenixServer(FakeServer):
    """Phoenix's REST spans API (`/v1/projects/{project}/spans`)."""

    def __init__(self, api_key: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.projects: dict[str, list[dict[str, Any]]] = {}

    def authorized(self, headers: Any) -> bool:
        return self.api_key is None or headers.get("Authorization") == f"Bearer {self.api_key}"

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
        parts = path.strip("/").split("/")
        if parts[:2] != ["v1", "projects"] or len(parts) < 3 or parts[2] not in self.projects:
            return 404
        name = parts[2]
        if len(parts) == 3:
            return {"data": {"id": f"UHJvamVjdDo{len(name)}", "name": name}}
        spans = self.projects[name]
        if query.get("trace_id"):
            spans = [s for s in spans if s["context"]["trace_id"] in query["trace_id"]]
        for condition in query.get("attribute", []):
            key, value = condition.split(":", 1)
            spans = [s for s in spans if s["attributes"].get(key) == json.loads(value)]
        if query.get("parent_id") == ["null"]:
            spans = [s for s in spans if not s.get("parent_id")]
        if query.get("start_time"):
            spans = [s for s in spans if s["start_time"] >= query["start_time"][0]]
        if query.get("end_time"):
            spans = [s for s in spans if s["start_time"] < query["end_time"][0]]
        limit = int((query.get("limit") or ["100"])[0])
        start = int((query.get("cursor") or ["0"])[0])
        page = spans[start : start + limit]
        more = start + limit < len(spans)
        return {"data": page, "next_cursor": str(start + limit) if more else None}


RUN_START = "2026-11-02T10:00:00+00:00"
RUN_END = "2026-11-02T10:01:00+00:00"


def trace_query(
    run_id: str = "run-7f3a",
    *,
    session_key: str | None = "hook:clawspec:run-7f3a",
    gateway_run_id: str | None = "gw-5521",
    related_ids: frozenset[str] = frozenset(),
) -> Any:
    """Return a TraceQuery for a run between RUN_START and RUN_END."""
    from datetime import datetime

    from clawspec.traces.backends.base import TraceQuery

    return TraceQuery(
        run_id=run_id,
        session_key=session_key,
        gateway_run_id=gateway_run_id,
        started_at=datetime.fromisoformat(RUN_START),
        ended_at=datetime.fromisoformat(RUN_END),
        scenario="writes-draft",
        related_ids=related_ids,
    )


def closed_port() -> int:
    """Return a 127.0.0.1 port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
