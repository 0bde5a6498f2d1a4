"""ClawSpec's embedded OTLP/HTTP trace receiver (`observability.backend: local`).

A small HTTP server on 127.0.0.1 that accepts `POST /v1/traces` in both OTLP encodings
(`application/json` and `application/x-protobuf`, optionally gzip-compressed) and keeps the spans
in memory, bounded (oldest traces are dropped first) and indexed by trace id and by correlation
attributes (session keys, session ids, run ids). `clawspec.traces.backends.local.LocalBackend`
reads them back.

Where the receiver runs:
- bring-up mode: `gateway_for_run` starts one before the gateway, points ClawSpec's OpenClaw
  plugin at it (`otlpEndpoint`) and stops it after the run; the backend reads it in-process.
- target mode (your own gateway) with `observability.backend: local`: ClawSpec starts one for the
  run on `observability.url` if that is a free loopback address, else on 127.0.0.1:4318; point the
  plugin's `otlpEndpoint` (or any OTLP/HTTP exporter) at it.
- standalone: `python -m clawspec.traces.receiver --port 4318` keeps one running across ClawSpec
  runs; set `observability.url` to the endpoint it prints and ClawSpec queries it over HTTP
  (`GET /clawspec/v1/find`), since its spans live in that process.

The one piece of module state is `_REGISTRY`: the receivers running in this process, keyed by
endpoint, so a backend constructed from settings finds the receiver the run started.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import gzip
import json
import re
import sys
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from clawspec.traces.otlp_proto import ProtoError, decode_export_request

DEFAULT_PORT = 4318  # the OTLP/HTTP default
MAX_SPANS = 200_000
MAX_BODY = 64 * 1024 * 1024
FIND_PATH = "/clawspec/v1/find"
HEALTH_PATH = "/clawspec/v1/health"
SERVICE = "clawspec-otlp-receiver"
_HEX = re.compile(r"^[0-9a-fA-F]*$")
# Attribute keys whose string values identify a run or session (normalized: lower case, no `.`/`_`).
_CORRELATION_SUFFIXES = ("sessionkey", "sessionid", "runid", "conversationid", "threadid")
_MAX_KEY_VALUE = 512


class MalformedRequest(ValueError):
    """The body is not a valid OTLP export request (HTTP 400)."""


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as received; times in epoch nanoseconds (0: unknown)."""

    trace_id: str
    span_id: str
    name: str
    parent_span_id: str | None = None
    kind: int = 0
    start_ns: int = 0
    end_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=dict)
    resource: Mapping[str, Any] = field(default_factory=dict)
    scope: str | None = None
    status_code: int = 0  # 0 unset, 1 ok, 2 error
    status_message: str | None = None
    events: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["events"] = list(self.events)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReceivedSpan:
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        values["events"] = tuple(values.get("events") or ())
        return cls(**values)


# -- OTLP/JSON (and decoded protobuf) → ReceivedSpan -----------------------------------------


def _id(value: Any, size: int, what: str) -> str:
    """OTLP/JSON ids are hex; tolerate base64 (protobuf-JSON mapping) too. Empty → ''."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise MalformedRequest(f"{what} is not a string")
    if len(value) == size * 2 and _HEX.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size:
        return raw.hex()
    raise MalformedRequest(f"{what} {value[:40]!r} is not {size} bytes of hex")


def _nanos(value: Any, what: str) -> int:
    if value in (None, ""):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise MalformedRequest(f"{what} {value!r} is not an integer") from exc


def any_value(value: Any) -> Any:
    """An OTLP AnyValue object → a plain Python value."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError) as exc:
            raise MalformedRequest(f"intValue {value['intValue']!r} is not an integer") from exc
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError) as exc:
            raise MalformedRequest(f"doubleValue {value['doubleValue']!r} is not a number") from exc
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values"))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any) -> dict[str, Any]:
    if items in (None, ""):
        return {}
    if not isinstance(items, list):
        raise MalformedRequest("attributes is not a list")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise MalformedRequest("attribute without a string key")
        out[item["key"]] = any_value(item.get("value"))
    return out


def _list(value: Any, what: str) -> list[Any]:
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise MalformedRequest(f"{what} is not a list")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise MalformedRequest(f"{what} is not an object")
    return value


def spans_from_request(doc: Any) -> list[ReceivedSpan]:
    """An ExportTraceServiceRequest in OTLP/JSON shape → spans. Raises MalformedRequest."""
    if not isinstance(doc, Mapping):
        raise MalformedRequest("the request is not a JSON object")
    out: list[ReceivedSpan] = []
    for raw_rs in _list(doc.get("resourceSpans"), "resourceSpans"):
        rs = _mapping(raw_rs, "resourceSpans[]")
        resource = attributes(_mapping(rs.get("resource"), "resource").get("attributes"))
        scope_spans = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")
        for raw_ss in _list(scope_spans, "scopeSpans"):
            ss = _mapping(raw_ss, "scopeSpans[]")
            scope = _mapping(ss.get("scope"), "scope").get("name")
            for raw in _list(ss.get("spans"), "spans"):
                out.append(_span(_mapping(raw, "span"), resource, scope))
    return out


def _span(raw: Mapping[str, Any], resource: dict[str, Any], scope: Any) -> ReceivedSpan:
    trace_id = _id(raw.get("traceId"), 16, "traceId")
    span_id = _id(raw.get("spanId"), 8, "spanId")
    if not trace_id or not span_id:
        raise MalformedRequest("a span without traceId or spanId")
    status = _mapping(raw.get("status"), "status")
    code = status.get("code", 0)
    if isinstance(code, str):  # protobuf-JSON enums may come as names
        code = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, 0)
    events = tuple(
        {
            "name": event.get("name", ""),
            "time_ns": _nanos(event.get("timeUnixNano"), "event timeUnixNano"),
            "attributes": attributes(event.get("attributes")),
        }
        for event in (_mapping(e, "event") for e in _list(raw.get("events"), "events"))
    )
    kind = raw.get("kind", 0)
    return ReceivedSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=_id(raw.get("parentSpanId"), 8, "parentSpanId") or None,
        name=str(raw.get("name") or ""),
        kind=kind if isinstance(kind, int) else 0,
        start_ns=_nanos(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        end_ns=_nanos(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
        attributes=attributes(raw.get("attributes")),
        resource=resource,
        scope=scope if isinstance(scope, str) else None,
        status_code=int(code) if isinstance(code, int) else 0,
        status_message=status.get("message") or None,
        events=events,
    )


def correlation_values(attrs: Mapping[str, Any]) -> set[str]:
    """String values of attributes naming a session or run (`openclaw.session_key`,
    `session.id`, `openclaw.run_id`, `gen_ai.conversation.id`, ...)."""
    out = set()
    for key, value in attrs.items():
        norm = key.lower().replace("_", "").replace(".", "").replace("-", "")
        if (
            isinstance(value, str)
            and 0 < len(value) <= _MAX_KEY_VALUE
            and norm.endswith(_CORRELATION_SUFFIXES)
        ):
            out.add(value)
    return out


# -- the store -------------------------------------------------------------------------------


@dataclass
class _Trace:
    spans: dict[str, ReceivedSpan] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    updated: float = 0.0  # monotonic time of the last span received


@dataclass(frozen=True)
class TraceMatch:
    """What `SpanStore.find` found: the spans of the matching trace(s), and how."""

    by: str  # "key", "window", "none" (nothing matched) or "ambiguous" (window: several)
    trace_ids: tuple[str, ...] = ()
    spans: tuple[ReceivedSpan, ...] = ()
    idle_ms: float = 0.0  # time since the last of these spans arrived
    candidates: int = 0  # traces that matched (window: how many overlapped)

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "traceIds": list(self.trace_ids),
            "spans": [span.to_json() for span in self.spans],
            "idleMs": self.idle_ms,
            "candidates": self.candidates,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TraceMatch:
        return cls(
            by=str(data["by"]),
            trace_ids=tuple(data.get("traceIds") or ()),
            spans=tuple(ReceivedSpan.from_json(s) for s in data.get("spans") or ()),
            idle_ms=float(data.get("idleMs") or 0.0),
            candidates=int(data.get("candidates") or 0),
        )


class SpanStore:
    """Thread-safe, bounded in-memory spans indexed by trace id and correlation values.

    When more than `max_spans` are held, whole traces are dropped, oldest first.
    """

    def __init__(self, max_spans: int = MAX_SPANS, clock: Any = time.monotonic) -> None:
        self.max_spans = max_spans
        self._clock = clock
        self._lock = threading.Lock()
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._by_key: dict[str, set[str]] = {}
        self._owner: dict[str, str] = {}  # span id → trace id (for cross-trace parent links)
        self._count = 0
        self.dropped_traces = 0

    def __len__(self) -> int:
        with self._lock:
            return self._count

    @property
    def trace_count(self) -> int:
        with self._lock:
            return len(self._traces)

    def add(self, spans: Iterable[ReceivedSpan]) -> int:
        now = self._clock()
        added = 0
        with self._lock:
            for span in spans:
                trace = self._traces.get(span.trace_id)
                if trace is None:
                    trace = self._traces[span.trace_id] = _Trace()
                    self._index(span.trace_id, span.trace_id, trace)
                if span.span_id not in trace.spans:
                    self._count += 1
                trace.spans[span.span_id] = span  # a re-sent span replaces the earlier copy
                trace.updated = now
                self._owner[span.span_id] = span.trace_id
                for value in correlation_values(span.attributes) | correlation_values(
                    span.resource
                ):
                    self._index(value, span.trace_id, trace)
                added += 1
            while self._count > self.max_spans and len(self._traces) > 1:
                self._drop_oldest()
        return added

    def _index(self, value: str, trace_id: str, trace: _Trace) -> None:
        if value not in trace.keys:
            trace.keys.add(value)
            self._by_key.setdefault(value, set()).add(trace_id)

    def _drop_oldest(self) -> None:
        trace_id, trace = self._traces.popitem(last=False)
        self._count -= len(trace.spans)
        self.dropped_traces += 1
        for value in trace.keys:
            ids = self._by_key.get(value)
            if ids is not None:
                ids.discard(trace_id)
                if not ids:
                    del self._by_key[value]
        for span_id in trace.spans:
            if self._owner.get(span_id) == trace_id:
                del self._owner[span_id]

    def find(
        self,
        keys: Iterable[str],
        window: tuple[int, int] | None = None,
    ) -> TraceMatch:
        """The trace(s) any of `keys` names (trace ids or correlation values); when none, the
        single trace overlapping `window` (epoch ns, inclusive) — never a guess among several.
        Traces linked by a parent span id in another matched trace are merged in."""
        with self._lock:
            matched: set[str] = set()
            for key in keys:
                if key:
                    matched |= self._by_key.get(key, set())
            by = "key"
            candidates = len(matched)
            if not matched and window is not None:
                overlapping = [tid for tid, t in self._traces.items() if _overlaps(t, window)]
                candidates = len(overlapping)
                if len(overlapping) == 1:
                    matched, by = set(overlapping), "window"
                elif overlapping:
                    return TraceMatch(by="ambiguous", candidates=candidates)
            if not matched:
                return TraceMatch(by="none")
            matched = self._linked(matched)
            ordered = [tid for tid in self._traces if tid in matched]
            spans = [s for tid in ordered for s in self._traces[tid].spans.values()]
            spans.sort(key=lambda s: (s.start_ns, s.end_ns))
            idle = self._clock() - max(self._traces[tid].updated for tid in ordered)
            return TraceMatch(by, tuple(ordered), tuple(spans), idle * 1000.0, candidates)

    def _linked(self, matched: set[str]) -> set[str]:
        """Add traces whose spans name a parent span held by a matched trace (a sub-agent
        exported with its own trace id), and the traces holding a matched span's parent."""
        grew = True
        while grew:
            grew = False
            span_ids = {sid for tid in matched for sid in self._traces[tid].spans}
            for tid in list(matched):
                for span in self._traces[tid].spans.values():
                    owner = self._owner.get(span.parent_span_id or "")
                    if owner is not None and owner not in matched:
                        matched.add(owner)
                        grew = True
            for tid, trace in self._traces.items():
                if tid in matched:
                    continue
                for span in trace.spans.values():
                    if span.parent_span_id and span.parent_span_id in span_ids:
                        matched.add(tid)
                        grew = True
                        break
        return matched


def _overlaps(trace: _Trace, window: tuple[int, int]) -> bool:
    starts = [s.start_ns for s in trace.spans.values() if s.start_ns]
    ends = [s.end_ns or s.start_ns for s in trace.spans.values() if s.end_ns or s.start_ns]
    if not starts:
        return False
    return min(starts) <= window[1] and max(ends) >= window[0]


# -- the HTTP server -------------------------------------------------------------------------

_REGISTRY: dict[str, OtlpReceiver] = {}
_REGISTRY_LOCK = threading.Lock()


def running_receiver(endpoint: str | None = None) -> OtlpReceiver | None:
    """The receiver running in this process at `endpoint` (base URL); with no endpoint, the only
    one running (None when there are none or several)."""
    with _REGISTRY_LOCK:
        if endpoint:
            return _REGISTRY.get(normalize_endpoint(endpoint))
        return next(iter(_REGISTRY.values())) if len(_REGISTRY) == 1 else None


def normalize_endpoint(url: str) -> str:
    """`http://localhost:4318/v1/traces/` → `http://localhost:4318` (the registry key)."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1/traces"):
        url = url[: -len("/v1/traces")]
    return url.rstrip("/")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = SERVICE

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: exporters post often

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path != "/v1/traces":
            self._drain()
            return self._reply(404, b'{"error":"not found"}', "application/json")
        ctype = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        is_json = ctype == "application/json"
        is_proto = ctype in ("application/x-protobuf", "application/protobuf")
        if not (is_json or is_proto):
            self._drain()
            self.server.receiver.rejected += 1
            message = f"unsupported content type {ctype or '(none)'}; use application/json or "
            message += "application/x-protobuf"
            return self._reply(415, json.dumps({"error": message}).encode(), "application/json")
        try:
            length = int(self.headers.get("Content-Length", "-1"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            return self._reply(
                413 if length > MAX_BODY else 411, b'{"error":"bad length"}', "application/json"
            )
        body = self.rfile.read(length)
        try:
            body = _decompress(body, self.headers.get("Content-Encoding", ""))
            doc = decode_export_request(body) if is_proto else json.loads(body or b"{}")
            spans = spans_from_request(doc)
        except (MalformedRequest, ProtoError, ValueError, OSError, EOFError, zlib.error) as exc:
            self.server.receiver.rejected += 1
            error = json.dumps({"error": f"malformed OTLP request: {exc}"[:500]}).encode()
            return self._reply(400, error, "application/json")
        self.server.receiver.store.add(spans)
        self.server.receiver.requests += 1
        if is_proto:
            return self._reply(200, b"", "application/x-protobuf")
        return self._reply(200, b"{}", "application/json")

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        receiver = self.server.receiver
        if parts.path == HEALTH_PATH:
            body = {
                "ok": True,
                "service": SERVICE,
                "spans": len(receiver.store),
                "traces": receiver.store.trace_count,
            }
            return self._reply(200, json.dumps(body).encode(), "application/json")
        if parts.path == FIND_PATH:
            query = parse_qs(parts.query)
            try:
                window = None
                if query.get("start_ns") and query.get("end_ns"):
                    window = (int(query["start_ns"][0]), int(query["end_ns"][0]))
            except ValueError:
                return self._reply(400, b'{"error":"bad window"}', "application/json")
            match = receiver.store.find(query.get("key", []), window)
            return self._reply(200, json.dumps(match.to_json()).encode(), "application/json")
        self._reply(404, b'{"error":"not found"}', "application/json")

    def _drain(self) -> None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = 0
        if 0 < length <= MAX_BODY:
            self.rfile.read(length)
        else:
            self.close_connection = True

    def _reply(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _decompress(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    raise MalformedRequest(f"unsupported Content-Encoding {encoding}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    receiver: OtlpReceiver


class OtlpReceiver:
    """The receiver: `with OtlpReceiver(port=0) as r:` serves on 127.0.0.1 until the block ends.

    `endpoint` is the base URL (`http://127.0.0.1:<port>`); exporters post to
    `<endpoint>/v1/traces`. While running it is registered for `running_receiver(endpoint)`.
    """

    def __init__(
        self, port: int = 0, host: str = "127.0.0.1", *, max_spans: int = MAX_SPANS
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the receiver only binds to loopback")
        self.host = host
        self.port = port
        self.store = SpanStore(max_spans)
        self.requests = 0
        self.rejected = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def traces_url(self) -> str:
        return f"{self.endpoint}/v1/traces"

    def start(self) -> OtlpReceiver:
        """Bind and serve in a daemon thread. Raises OSError when the port is taken."""
        server = _Server((self.host, self.port), _Handler)
        server.receiver = self
        self._server = server
        self.port = int(server.server_address[1])
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"clawspec-otlp-{self.port}",
            daemon=True,
        )
        self._thread.start()
        with _REGISTRY_LOCK:
            _REGISTRY[self.endpoint] = self
        return self

    def stop(self) -> None:
        with _REGISTRY_LOCK:
            if _REGISTRY.get(self.endpoint) is self:
                del _REGISTRY[self.endpoint]
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OtlpReceiver:
        return self.start() if self._server is None else self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clawspec.traces.receiver",
        description="Run ClawSpec's OTLP/HTTP trace receiver on 127.0.0.1 until interrupted.",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0: any free one)")
    parser.add_argument("--max-spans", type=int, default=MAX_SPANS)
    args = parser.parse_args(argv)
    try:
        receiver = OtlpReceiver(args.port, max_spans=args.max_spans).start()
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"OTLP/HTTP trace receiver listening: {receiver.traces_url}", flush=True)
    print(f"set observability.url: {receiver.endpoint}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        receiver.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
