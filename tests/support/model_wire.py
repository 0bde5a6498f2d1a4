"""A model provider on 127.0.0.1 that speaks the three wire formats the traffic proxy relays.

- Anthropic `POST /v1/messages`: a Message, or with `stream: true` the real event sequence
  (`event: message_start` … `event: message_stop`, with a `ping`), as the `anthropic` SDK reads it;
- OpenAI `POST /v1/responses`: a Response, or its `response.*` events when streaming;
- OpenAI `POST /v1/chat/completions` without streaming: a ChatCompletion.
The answer text echoes the last user text, so tests can tell answers apart. Every request is
recorded with its headers (the tests check which credential reached the provider).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _last_user_text(body: dict[str, Any]) -> str:
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str):
        return items
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            parts = [p.get("text", "") for p in content or [] if isinstance(p, dict)]
            return " ".join(parts)
    return ""


def anthropic_events(text: str, model: str) -> list[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 25, "output_tokens": 1}
    message = {
        "id": "msg_wire_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    half = len(text) // 2
    return [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        ("ping", {"type": "ping"}),
        *[
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": t},
                },
            )
            for t in (text[:half], text[half:])
        ],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 15},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def response_object(text: str, model: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": "resp_wire_1",
        "object": "response",
        "created_at": 1700000000,
        "status": status,
        "model": model,
        "output": [
            {
                "type": "message",
                "id": "msg_wire_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 12, "output_tokens": 5, "total_tokens": 17},
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        with self.server.lock:
            self.server.seen.append(Seen(self.path, dict(self.headers.items()), body))
        text = f"echo: {_last_user_text(body)}"
        model = str(body.get("model", "m"))
        stream = bool(body.get("stream"))
        if self.path.endswith("/messages"):
            if stream:
                self._sse(
                    [(f"event: {name}", data) for name, data in anthropic_events(text, model)]
                )
            else:
                self._json(
                    {
                        "id": "msg_wire_1",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": text}],
                        "model": model,
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": 25, "output_tokens": 15},
                    }
                )
        elif self.path.endswith("/responses"):
            if stream:
                started = response_object("", model, "in_progress")
                events = [
                    ("response.created", {"type": "response.created", "response": started}),
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": "msg_wire_1",
                            "output_index": 0,
                            "content_index": 0,
                            "delta": text,
                        },
                    ),
                    (
                        "response.completed",
                        {"type": "response.completed", "response": response_object(text, model)},
                    ),
                ]
                numbered = [
                    (f"event: {name}", {**data, "sequence_number": i})
                    for i, (name, data) in enumerate(events)
                ]
                self._sse(numbered)
            else:
                self._json(response_object(text, model))
        elif self.path.endswith("/chat/completions"):
            self._json(
                {
                    "id": "chatcmpl-wire",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
                }
            )
        else:
            self.send_response(404)
            self.end_headers()

    def _json(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.end_headers()
        for head, data in events:
            self.wfile.write(f"{head}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[Seen] = []
        self.lock = threading.Lock()


class WireProvider:
    """`with WireProvider() as p:` serves on `p.base_url` (no /v1: callers add it)."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def seen(self) -> list[Seen]:
        with self._server.lock:
            return list(self._server.seen)

    def __enter__(self) -> WireProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
