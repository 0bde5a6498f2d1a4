"""A local server speaking OpenClaw's `/v1/chat/completions` and `/v1/models`, for client tests.

Its answers are OpenClaw 2026.9.6's, as measured on the real gateway: 401 `{"error": {"message":
"Unauthorized", "type": "unauthorized"}}` for a wrong token; with the endpoint off (`enabled=False`)
404 `text/plain` "Not Found" on both paths; 405 `text/plain` "Method Not Allowed"; 400
`invalid_request_error` for a session key in a reserved namespace; a completed turn is a
`chat.completion` with an `id` of `chatcmpl_<uuid>`, the reply in `choices[0].message.content` and
`usage`. Behaviour is chosen per request by markers in the user's message: `[status:<code>]`
answers that status with OpenClaw's error body (`[said:<text>]` sets its message),
`[echo-auth]` puts the request's Authorization header in a 500's message (a gateway that leaks
the token), `[cut]` sends half of the JSON answer and closes, `[half]` sends its first 40 bytes
as the whole body, `[notjson]` answers 200 text/html,
`[reply:<json string>]` replies with that JSON string literal as `content` (hostile text), `[null]`
replies with `content: null`, `[sleep:<s>]` delays the answer. Otherwise the reply is
`echo: <message>`. Every request is recorded (`requests`).
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RESERVED = ("subagent:", "cron:", "acp:")


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None


class _Listener(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up on a turn (its timeout) closed the connection before the
        # scripted answer went out: expected, not the server's error to print.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ChatServer:
    """`with ChatServer(token) as server:` serves on `server.base_url`."""

    def __init__(self, token: str, *, enabled: bool = True, port: int = 0) -> None:
        self.token = token
        self.port = port
        self.enabled = enabled
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._server: _Listener | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ChatServer:
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._server = _Listener(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)


class _Handler(BaseHTTPRequestHandler):
    server_owner: ChatServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, data: bytes, content_type: str, *, length: int | None = None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

    def _error(self, status: int, message: str, kind: str) -> None:
        self._json(status, {"error": {"message": message, "type": kind}})

    def _text(self, status: int, text: str) -> None:
        self._send(status, text.encode(), "text/plain; charset=utf-8")

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.server_owner.token}":
            return True
        self._error(401, "Unauthorized", "unauthorized")
        return False

    def do_GET(self) -> None:
        owner = self.server_owner
        owner.record(Seen("GET", self.path, dict(self.headers.items()), None))
        if owner.enabled and self.path == "/v1/chat/completions":
            self._text(405, "Method Not Allowed")
            return
        if not owner.enabled or self.path != "/v1/models":
            self._text(404, "Not Found")
            return
        if not self._authorised():
            return
        models = [
            {"id": m, "object": "model", "created": 0, "owned_by": "openclaw"}
            for m in ("openclaw", "openclaw/default", "openclaw/main")
        ]
        self._json(200, {"object": "list", "data": models})

    def do_POST(self) -> None:
        owner = self.server_owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        owner.record(Seen("POST", self.path, dict(self.headers.items()), body))
        if not owner.enabled or self.path != "/v1/chat/completions":
            self._text(404, "Not Found")
            return
        if not self._authorised():
            return
        if not isinstance(body, dict):
            self._error(400, "Expected property name", "invalid_request_error")
            return
        key = self.headers.get("x-openclaw-session-key", "")
        if any(part.startswith(RESERVED) for part in _suffixes(key)):
            self._error(
                400,
                "`x-openclaw-session-key` cannot use reserved internal session namespaces.",
                "invalid_request_error",
            )
            return
        message = str((body.get("messages") or [{}])[-1].get("content", ""))
        self._answer(message, body)

    def _answer(self, message: str, body: dict[str, Any]) -> None:
        sleep = re.search(r"\[sleep:([\d.]+)\]", message)
        if sleep:
            time.sleep(float(sleep.group(1)))
        status = re.search(r"\[status:(\d+)\]", message)
        said = re.search(r"\[said:([^\]]*)\]", message)
        if "[echo-auth]" in message:
            leaked = f"upstream refused {self.headers.get('Authorization')}\x07 at line\n2"
            self._error(500, leaked, "api_error")
            return
        if status:
            self._error(
                int(status.group(1)), said.group(1) if said else "internal error", "api_error"
            )
            return
        if "[notjson]" in message:
            self._send(200, b"<html><body>Bad Gateway</body></html>", "text/html")
            return
        content: str | None = f"echo: {message}"
        if "[null]" in message:
            content = None
        reply = re.search(r"\[reply:(\"(?:[^\"\\]|\\.)*\")\]", message)
        answer = {
            "id": f"chatcmpl_{uuid.uuid4()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }
        data = json.dumps(answer).encode()
        if reply:  # the literal as sent: escapes a JSON encoder would never write
            data = data.replace(json.dumps(content).encode(), reply.group(1).encode())
        if "[half]" in message:  # a JSON answer that stops short, its length announced right
            self._send(200, data[:40], "application/json")
            return
        if "[cut]" in message:
            self._send(200, data[: len(data) // 2], "application/json", length=len(data))
            return
        self._send(200, data, "application/json; charset=utf-8")


def _suffixes(key: str) -> list[str]:
    """`agent:<id>:<rest>` is checked on `<rest>` too, as the gateway does."""
    parts = [key]
    match = re.match(r"^agent:[^:]+:(.*)$", key)
    if match:
        parts.append(match.group(1))
    return parts
