"""A local HTTP server that answers slowly, on purpose: for the deadline tests.

Every request (any method, any path) gets the same scripted answer: after `delay_s` the status
line and headers (with the full `Content-Length`), then the body — all at once, or, with
`trickle_s`, one byte every `trickle_s` seconds (a server that keeps a read timeout from ever
firing); with `trickle_head_s` the status line and headers come that way too.
Requests are recorded (method, path with query, headers, body, arrival time), and so is how many
answers went out whole (`completed`): a client that gave up at its deadline returned while its
answer was still being sent, which the deadline tests check instead of timing the call.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    status: int = 200
    body: bytes = b'{"ok": true}'
    content_type: str = "application/json"
    delay_s: float = 0.0  # before the status line
    trickle_s: float | None = None  # seconds between body bytes; None: the body at once
    # seconds between the bytes of the status line and headers too (None: they come at once)
    trickle_head_s: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    held_until: threading.Event | None = None  # the answer waits for it too (at most 30 s)


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class SlowServer:
    """Use as a context manager; `url` is its base URL."""

    def __init__(self, answer: Answer | None = None) -> None:
        self.answer = answer or Answer()
        self.seen: list[Seen] = []
        self.completed = 0  # answers whose last byte was written
        self._lock = threading.Lock()
        self._closing = threading.Event()
        handler = type("Handler", (_Handler,), {"owner": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> SlowServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # trickling handlers stop at their next byte
        self.server.shutdown()
        self.server.server_close()

    def record(self, seen: Seen) -> Answer:
        with self._lock:
            self.seen.append(seen)
            return self.answer

    def answered(self) -> None:
        with self._lock:
            self.completed += 1


class _Handler(BaseHTTPRequestHandler):
    owner: SlowServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        answer = self.owner.record(Seen(self.command, self.path, headers, body, time.monotonic()))
        closing = self.owner._closing
        if answer.delay_s and closing.wait(answer.delay_s):
            return
        if answer.held_until is not None:
            answer.held_until.wait(30)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if answer.trickle_head_s is not None:
                self._trickle_head(answer, closing)
                return
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if answer.trickle_s is None:
                self.wfile.write(answer.body)
                self.owner.answered()
                return
            for index in range(len(answer.body)):
                self.wfile.write(answer.body[index : index + 1])
                self.wfile.flush()
                # after the last byte the answer is whole: no wait, and it counts as answered
                if index + 1 < len(answer.body) and closing.wait(answer.trickle_s):
                    self.close_connection = True
                    return
            self.owner.answered()

    def _trickle_head(self, answer: Answer, closing: threading.Event) -> None:
        """The status line and headers one byte at a time, then the body at once."""
        head = (
            f"HTTP/1.1 {answer.status} OK\r\nContent-Type: {answer.content_type}\r\n"
            f"Content-Length: {len(answer.body)}\r\n\r\n"
        ).encode()
        for index in range(len(head)):
            self.wfile.write(head[index : index + 1])
            self.wfile.flush()
            if closing.wait(answer.trickle_head_s):
                self.close_connection = True
                return
        self.wfile.write(answer.body)
        self.owner.answered()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer
