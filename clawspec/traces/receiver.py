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
import gzip
import json
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from clawspec.net import loopback
from clawspec.text import cut
from clawspec.traces.otlp_json import MalformedRequest, spans_from_request
from clawspec.traces.otlp_proto import ProtoError, decode_export_request
from clawspec.traces.span_store import MAX_SPANS, SpanStore

DEFAULT_PORT = 4318  # the OTLP/HTTP default
MAX_BODY = 64 * 1024 * 1024
FIND_PATH = "/clawspec/v1/find"
HEALTH_PATH = "/clawspec/v1/health"
SERVICE = "clawspec-otlp-receiver"


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
            error = json.dumps({"error": cut(f"malformed OTLP request: {exc}", 500)}).encode()
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
        if host not in loopback.NAMES:
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
