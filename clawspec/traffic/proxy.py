"""The model traffic proxy: an HTTP server between the gateway and its model provider.

Why the standard library (`http.server.ThreadingHTTPServer` + `http.client`) and no framework:
the proxy needs exact control of the bytes of a streamed answer (SSE lines are passed on and
replayed verbatim, flushed event by event), runs inside the CLI process next to the runner (no
event loop to share), handles a handful of concurrent calls, and must add no start-up cost or
dependency to the container image. A thread per connection is plenty for that.

URLs: `http://127.0.0.1:<port>/<provider>/<rest>`; in record mode `<rest>` is appended to the
provider's upstream base URL (`/fake/chat/completions` -> `http://127.0.0.1:18080/v1/chat/...`).
The provider API is told by the path's end: `chat/completions`, `responses`, `messages`.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

from clawspec.net.deadline import Deadline, safe_url
from clawspec.traffic.attribution import Registration
from clawspec.traffic.cassette import RecordedRequest, RecordedResponse, SseEvent, kept_headers
from clawspec.traffic.normalize import endpoint_of

log = logging.getLogger("clawspec.traffic")
# A deadline for a whole upstream call (connect, headers, the last byte of the answer), not a
# read timeout: at it the upstream connection is shut down (`_cut_at`), so a provider that
# trickles its answer cannot hold a model call, and with it the scenario, any longer.
UPSTREAM_TIMEOUT_S = 600
# On stop, how long to let model calls already under way finish (and be recorded): the gateway
# has just been stopped, but a call it made a moment before (a sub-agent's result announced to
# its parent) may still be streaming from the provider.
DRAIN_TIMEOUT_S = 10.0
# Never forwarded upstream: hop-by-hop headers and what http.client sets itself.
_DROPPED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "accept-encoding"}
)


@dataclass(frozen=True)
class Unmatched:
    """Replay found no recording for a request; `message` says why (sent back to the gateway)."""

    message: str


class TrafficHandler(Protocol):
    """What the proxy asks of the run (implemented by `session.TrafficSession`)."""

    mode: str

    def upstream(self, provider: str) -> str | None: ...

    def attribute(self, headers: dict[str, str], body: Any) -> Registration | None: ...

    def replay(
        self, registration: Registration | None, request: RecordedRequest
    ) -> RecordedResponse | Unmatched: ...

    def recorded(
        self, registration: Registration | None, request: RecordedRequest, answer: RecordedResponse
    ) -> None: ...

    def models(self, provider: str) -> dict[str, Any]: ...


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: TrafficHandler) -> None:
        super().__init__(address, _Handler)
        self.traffic = handler
        self._busy = 0  # model calls being answered (not idle keep-alive connections)
        self._idle = threading.Condition()

    @contextmanager
    def answering(self) -> Iterator[None]:
        with self._idle:
            self._busy += 1
        try:
            yield
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def drain(self, timeout_s: float) -> bool:
        """Wait until no call is being answered; False if some still were after `timeout_s`."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout_s)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A gateway that hangs up (it was stopped while a call was answered) is no error of
        ClawSpec's: a debug line, not a traceback on the user's terminal."""
        import sys

        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            log.debug("clawspec proxy: the gateway hung up on %s: %s", client_address, error)
            return
        log.warning("clawspec proxy: a model call failed", exc_info=error)


class ModelProxy:
    """`with ModelProxy(handler) as proxy:` serves on `proxy.base_url` (127.0.0.1 only)."""

    def __init__(self, handler: TrafficHandler, port: int = 0, host: str = "127.0.0.1") -> None:
        self._server = _Server((host, port), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="clawspec-model-proxy",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ModelProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()  # no new connections; calls under way finish and are recorded
        self._server.drain(DRAIN_TIMEOUT_S)
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ModelProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive for the gateway's client; streams are chunked

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("proxy: " + format, *args)

    # -- routing ---------------------------------------------------------------------------
    def _split(self) -> tuple[str, str]:
        """`/<provider>/<rest>` -> (provider, '/<rest>')."""
        path = self.path if self.path.startswith("/") else "/" + self.path
        provider, _, rest = path[1:].partition("/")
        return provider, "/" + rest

    def do_GET(self) -> None:
        provider, rest = self._split()
        traffic = self.server.traffic
        if traffic.mode == "replay":
            if rest.split("?", 1)[0].rstrip("/").endswith("/models"):
                self._send_json(200, traffic.models(provider))
            else:
                self._error(404, f"clawspec replay: nothing recorded for GET {rest}")
            return
        self._forward(provider, rest, b"", None, None)

    def do_POST(self) -> None:
        with self.server.answering():
            self._post()

    def _post(self) -> None:
        provider, rest = self._split()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        traffic = self.server.traffic
        endpoint = endpoint_of(rest)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if endpoint is None or body is None:
            if traffic.mode == "replay":
                self._error(404, f"clawspec replay: POST {rest} is not a model call it can replay")
            else:
                self._forward(provider, rest, raw, None, None)
            return
        headers = {k: v for k, v in self.headers.items()}
        registration = traffic.attribute(headers, body)
        request = RecordedRequest(
            method="POST",
            path=rest,
            endpoint=endpoint,
            provider=provider,
            headers=kept_headers(self.headers.items()),
            body=body,
        )
        if traffic.mode == "replay":
            answer = traffic.replay(registration, request)
            if isinstance(answer, Unmatched):
                self._error(400, answer.message, anthropic=endpoint == "messages")
            else:
                self._play(answer)
            return
        self._forward(provider, rest, raw, request, registration)

    # -- record: forward and tee -------------------------------------------------------------
    def _forward(
        self,
        provider: str,
        rest: str,
        raw: bytes,
        request: RecordedRequest | None,
        registration: Registration | None,
    ) -> None:
        traffic = self.server.traffic
        upstream = traffic.upstream(provider)
        if not upstream:
            self._error(502, f"clawspec proxy: no upstream base URL for provider '{provider}'")
            return
        url = urlsplit(upstream.rstrip("/") + rest)
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        deadline = Deadline.after(UPSTREAM_TIMEOUT_S)
        conn = kind(url.hostname or "127.0.0.1", url.port, timeout=UPSTREAM_TIMEOUT_S)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _DROPPED}
        headers["Accept-Encoding"] = "identity"  # SSE lines must arrive as text
        target = url.path + (f"?{url.query}" if url.query else "")
        host = f"{url.scheme}://{url.netloc}"
        with _cut_at(deadline, conn):
            self._exchange(conn, target, headers, raw, request, registration, host, deadline)

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        target: str,
        headers: dict[str, str],
        raw: bytes,
        request: RecordedRequest | None,
        registration: Registration | None,
        host: str,
        deadline: Deadline,
    ) -> None:
        """Send the call upstream and pass its answer on (recorded) before `deadline`."""
        where = f"{self.command} {safe_url(host + target)}"  # no query: it may carry a key
        try:
            conn.request(self.command, target, body=raw or None, headers=headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            if deadline.passed():
                self._error(504, f"clawspec proxy: upstream {deadline.exceeded(where)}")
            else:
                self._error(502, f"clawspec proxy: upstream {host} failed: {exc}")
            return
        # The answer is recorded before its last byte goes out, so that a caller that got the
        # whole answer sees it counted (the scenario's calls, the cassette order).
        try:
            content_type = response.getheader("Content-Type", "application/json")
            if "text/event-stream" in content_type:
                try:
                    events = self._tee_stream(response, content_type)
                except (OSError, http.client.HTTPException, ValueError) as exc:
                    cause = deadline.exceeded(where) if deadline.passed() else exc
                    log.warning("clawspec proxy: upstream stream cut off: %s", cause)
                    self.close_connection = True  # the caller sees an incomplete answer
                    return
                if deadline.passed():  # cut at the deadline: the caller sees it end early
                    log.warning("clawspec proxy: upstream %s", deadline.exceeded(where))
                    self.close_connection = True
                    return
                self._record(request, registration, response.status, content_type, events=events)
                self._end_stream()
            else:
                try:
                    data = response.read()
                except (OSError, http.client.HTTPException) as exc:
                    if deadline.passed():
                        self._error(504, f"clawspec proxy: upstream {deadline.exceeded(where)}")
                    else:
                        self._error(502, f"clawspec proxy: upstream {host} failed: {exc}")
                    return
                if deadline.passed():  # an answer without a length ends where it was cut
                    self._error(504, f"clawspec proxy: upstream {deadline.exceeded(where)}")
                    return
                self._record(request, registration, response.status, content_type, _decoded(data))
                self._send_bytes(response.status, content_type, data)
        finally:
            conn.close()

    def _record(
        self,
        request: RecordedRequest | None,
        registration: Registration | None,
        status: int,
        content_type: str,
        body: Any = None,
        events: list[SseEvent] | None = None,
    ) -> None:
        if request is not None:
            answer = RecordedResponse(
                status=status, content_type=content_type, body=body, events=events
            )
            self.server.traffic.recorded(registration, request, answer)

    def _tee_stream(self, response: http.client.HTTPResponse, content_type: str) -> list[SseEvent]:
        """Pass each SSE event on as soon as it is complete; return them all (stream left open)."""
        self._start_stream(response.status, content_type)
        events: list[SseEvent] = []
        lines: list[str] = []
        last = time.monotonic()
        while True:
            raw = response.readline()
            if not raw:
                break
            line = raw.decode("utf-8").rstrip("\r\n")
            if line:
                lines.append(line)
                continue
            if lines:
                now = time.monotonic()
                events.append(SseEvent(lines=lines, delay_ms=int((now - last) * 1000)))
                last = now
                self._chunk(_event_bytes(lines))
                lines = []
        if lines:  # a last event without its blank line
            events.append(SseEvent(lines=lines, delay_ms=0))
            self._chunk(_event_bytes(lines))
        return events  # the caller ends the stream

    # -- replay ------------------------------------------------------------------------------
    def _play(self, answer: RecordedResponse) -> None:
        if answer.events is None:
            body = answer.body
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self._send_bytes(answer.status, answer.content_type, data)
            return
        self._start_stream(answer.status, answer.content_type)
        for event in answer.events:
            self._chunk(_event_bytes(event.lines))
        self._end_stream()

    # -- writing -----------------------------------------------------------------------------
    def _send_bytes(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, payload: Any) -> None:
        self._send_bytes(status, "application/json", json.dumps(payload).encode())

    def _error(self, status: int, message: str, anthropic: bool = False) -> None:
        kind = "invalid_request_error" if status < 500 else "api_error"
        if anthropic:
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind, "code": "clawspec_proxy"}}
        self._send_json(status, payload)

    def _start_stream(self, status: int, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


@contextmanager
def _cut_at(deadline: Deadline, conn: http.client.HTTPConnection) -> Iterator[None]:
    """Shut the upstream connection down when `deadline` passes while the block runs.

    `shutdown` (not `close`) wakes a read blocked in another thread: it returns end-of-file, so
    the call ends at the deadline whatever the upstream sends."""

    def cut() -> None:
        sock = conn.sock
        if sock is not None:
            with suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(deadline.remaining(), 0.0), cut)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _event_bytes(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def _decoded(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", errors="replace")
