"""A scripted Anthropic Messages API on 127.0.0.1 for driving the real `anthropic` SDK.

`POST /v1/messages` answers a real Messages response (a `tool_use` block, `usage`) or an API
error, one scripted step per request, in order; the last step repeats once the script is used
up (so `[{"status": 500}]` is a persistent outage). Every request is recorded.

Steps (dicts), each optionally with ``"delay": seconds`` before answering and ``"usage":
{"input_tokens": N, "output_tokens": M}``:
  {"score": 4, "reasoning": "..."}         tool call `record_verdict` with that input
  {"tool_input": {...}}                     tool call with exactly this (possibly malformed) input
  {"text": "..."}                           a text-only answer (no tool call)
  {"status": 429, "headers": {"retry-after": "1"}}   an API error (type from the status)
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

API_KEY = "sk-ant-test-0123456789abcdef"
SAMPLING_PARAMS = ("temperature", "top_p", "top_k")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    at: float

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.raw_body)


@dataclass
class _State:
    steps: list[dict[str, Any]]
    requests: list[RecordedRequest] = field(default_factory=list)
    served: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class AnthropicApi:
    """The server; use as a context manager. `base_url` is what the SDK is pointed at."""

    def __init__(self, steps: list[dict[str, Any]] | None = None) -> None:
        self.state = _State(list(steps or [{"score": 5, "reasoning": "Fine."}]))
        handler = type("Handler", (_Handler,), {"api": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    def script(self, *steps: dict[str, Any]) -> None:
        """Replace the remaining script."""
        with self.state.lock:
            self.state.steps, self.state.served = list(steps), 0

    def __enter__(self) -> AnthropicApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # Hooks the Bedrock variant overrides.
    def route(self, handler: _Handler) -> str | None:
        """Return the model id the request is for, or None after answering it (e.g. 404)."""
        if handler.path.split("?")[0] != "/v1/messages":
            handler.send_json(404, _error(404, f"no route {handler.path}"))
            return None
        return None if handler.rejected_auth() else "from-body"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return _error(status, message)

    def next_step(self, recorded: RecordedRequest) -> dict[str, Any]:
        with self.state.lock:
            self.state.requests.append(recorded)
            index = min(self.state.served, len(self.state.steps) - 1)
            self.state.served += 1
            return self.state.steps[index]


class _Handler(BaseHTTPRequestHandler):
    api: AnthropicApi
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.raw = self.rfile.read(length)
        model = self.api.route(self)
        if model is None:
            return
        recorded = RecordedRequest(
            "POST",
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            self.raw,
            time.monotonic(),
        )
        step = self.api.next_step(recorded)
        time.sleep(step.get("delay", 0))
        if "status" in step:
            body = self.api.error_body(step["status"], step.get("message", "scripted error"))
            self.send_json(step["status"], body, step.get("headers", {}))
            return
        request = json.loads(self.raw)
        sampling = [name for name in SAMPLING_PARAMS if name in request]
        if sampling:  # API version 2026-10-21 rejects these on every model
            self.send_json(
                400, self.api.error_body(400, f"{sampling[0]}: Extra inputs are not permitted")
            )
            return
        self.send_json(200, _message(step, request.get("model", model), len(self.raw)))

    def rejected_auth(self) -> bool:
        key = self.headers.get("x-api-key") or self.headers.get("authorization", "").removeprefix(
            "Bearer "
        )
        if key == API_KEY:
            return False
        self.send_json(401, _error(401, "invalid x-api-key"))
        return True

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        # The client may have given up already (its timeout): then there is nothing to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", "req_test")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)


def _message(step: dict[str, Any], model: str, request_bytes: int) -> dict[str, Any]:
    if "text" in step:
        content = [{"type": "text", "text": step["text"]}]
        stop_reason = "end_turn"
    else:
        given = step.get("tool_input")
        tool_input = (
            given
            if given is not None
            else {"score": step["score"], "reasoning": step.get("reasoning", "Scripted.")}
        )
        content = [
            {
                "type": "tool_use",
                "id": "toolu_test01",
                "name": "record_verdict",
                "input": tool_input,
            }
        ]
        stop_reason = "tool_use"
    usage = {"input_tokens": max(1, request_bytes // 4), "output_tokens": 25}
    usage.update(step.get("usage") or {})
    answer = {
        "id": "msg_test01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if "usage" in step and step["usage"] is None:  # a proxy that drops it
        del answer["usage"]
    return answer


def _error(status: int, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
        "request_id": "req_test",
    }
