"""A local server speaking OpenClaw's hooks API (`POST /hooks/agent`), for runner tests.

Behaviour is chosen per request by markers in the hook message, so one server serves many
scenarios: `[write:<path>]` writes a Markdown artifact into the workspace, `[fail:<code>]`
answers that HTTP status, `[hang]` never completes (until the server stops), `[status:<s>]`
completes with that completion status, `[drop]` closes the connection without an answer,
`[sleep:<seconds>]` delays the answer. `[nth:<key>:<outcome>,<outcome>,…]` scripts repeated
runs: the n-th request carrying that key gets the n-th outcome (cycling): `ok` runs
normally, `quiet` completes without any side effect (no `[write:…]`), `error` completes with an
error status. Counting is per key, so concurrent attempts still get each outcome exactly once.
`on_run(body, run_id)`, when given, is asked first: a dict it returns is the answer (200), a
(status, dict) pair an answer with that status, e.g. a completion shaped like OpenClaw's after
writing the gateway's log lines of that run; None goes on with the markers.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The gateway's exact answers for a run it refused before starting it (OpenClaw 2026.9.6).
NEVER_STARTED = {
    "notready": (502, "hook agent run failed before entering the agent runner"),
    "admission": (503, "hook agent run did not start before admission timeout"),
}

ARTIFACT = """---
title: Sunday Service
status: ready
---
# Hook

Join us this Sunday.

Body
----

Everything you need to know.

## CTA

Reply to register.
"""


class _Listener(ThreadingHTTPServer):
    # The real gateway (Node) listens with a backlog of 511. socketserver's default of 5 drops
    # connection attempts when many scenarios start at once, and the client's TCP stack only
    # tries again after 1 s: a second of delay no gateway adds.
    request_queue_size = 128
    daemon_threads = True


class HooksServer:
    """Start with `with HooksServer(token, workspace) as server:`; `server.base_url`."""

    def __init__(
        self,
        token: str,
        workspace: Path,
        *,
        allow_session_key: bool = True,
        on_run: Callable[[dict[str, Any], str], Any] | None = None,
    ) -> None:
        self.token = token
        self.workspace = workspace
        self.allow_session_key = allow_session_key
        self.on_run = on_run
        self.requests: list[dict[str, Any]] = []
        self.not_ready_seen: dict[str, int] = {}
        self.nth_seen: dict[str, int] = {}
        self.active = 0  # agent runs being answered right now, and the most seen at once
        self.max_active = 0
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._server = _Listener(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> HooksServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path == "/health":
                    self._json(200, {"ok": True, "status": "live"})
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(
                        {
                            "path": self.path,
                            "body": body,
                            "authorization": self.headers.get("Authorization"),
                            "arrived": time.monotonic(),
                        }
                    )
                if self.headers.get("Authorization") != f"Bearer {server.token}":
                    self._json(401, {"ok": False, "error": "unauthorized"})
                    return
                if self.path == "/webhook/mcp-skill-invoke":
                    self._webhook(body)
                    return
                if self.path != "/hooks/agent":
                    self._json(404, {"ok": False, "error": "not found"})
                    return
                with server._lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                self.running = True
                try:
                    self._agent(body)
                finally:
                    self._ended()

            def _ended(self) -> None:
                # The run ends before its answer is sent: once the client has it, it may start
                # its next run at once, and this one must not be counted with it.
                if getattr(self, "running", False):
                    self.running = False
                    with server._lock:
                        server.active -= 1

            def _agent(self, body: dict[str, Any]) -> None:
                if "sessionKey" in body and not server.allow_session_key:
                    self._json(
                        400,
                        {
                            "ok": False,
                            "error": "sessionKey is not allowed (hooks.allowRequestSessionKey)",
                        },
                    )
                    return
                self._run(body)

            def _run(self, body: dict[str, Any]) -> None:
                message = str(body.get("message", ""))
                run_id = uuid.uuid4().hex
                answer = server.on_run(body, run_id) if server.on_run else None
                if answer is not None:
                    self._json(*(answer if isinstance(answer, tuple) else (200, answer)))
                    return
                if "[drop]" in message:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if "[hang]" in message:
                    server.released.wait(float(body.get("timeoutSeconds", 60)) + 60)
                    return
                if sleep := re.search(r"\[sleep:([\d.]+)\]", message):
                    time.sleep(float(sleep.group(1)))
                if not_ready := re.search(r"\[(notready|admission):(\d+)\]", message):
                    # The first N requests with this message: OpenClaw's refusals of a run that
                    # never started (502 at start-up, 503 past the admission timeout when busy).
                    with server._lock:
                        seen = server.not_ready_seen.get(message, 0)
                        server.not_ready_seen[message] = seen + 1
                    if seen < int(not_ready.group(2)):
                        status, error = NEVER_STARTED[not_ready.group(1)]
                        self._json(status, {"ok": False, "error": error, "runId": run_id})
                        return
                outcome = "ok"
                if nth := re.search(r"\[nth:([\w-]+):([\w,]+)\]", message):
                    with server._lock:
                        seen = server.nth_seen.get(nth.group(1), 0)
                        server.nth_seen[nth.group(1)] = seen + 1
                    outcomes = nth.group(2).split(",")
                    outcome = outcomes[seen % len(outcomes)]
                if outcome == "error":
                    message += "[status:error]"
                if fail := re.search(r"\[fail:(\d+)\]", message):
                    self._json(int(fail.group(1)), {"ok": False, "error": "model provider failed"})
                    return
                writes = [] if outcome == "quiet" else re.findall(r"\[write:([^\]]+)\]", message)
                for path in writes:
                    target = server.workspace / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(ARTIFACT, encoding="utf-8")
                status = re.search(r"\[status:(\w+)\]", message)
                completion: dict[str, Any] = {"status": status.group(1) if status else "ok"}
                if status:
                    completion["error"] = "agent run failed: model returned 500"
                self._json(200, {"ok": True, "runId": run_id, "completion": completion})

            def _webhook(self, body: dict[str, Any]) -> None:
                """The old ClawSpec skill webhook: answers at once, like a fire-and-forget
                trigger; the markers may sit in `skill_command` or in the `payload` text."""
                text = f"{body.get('skill_command', '')} {body.get('payload', '')}"
                for path in re.findall(r"\[write:([^\]]+)\]", text):
                    target = server.workspace / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(ARTIFACT, encoding="utf-8")
                status = re.search(r"\[status:(\w+)\]", text)
                answer = {
                    "status": status.group(1) if status else "accepted",
                    "runId": uuid.uuid4().hex,
                }
                if status:
                    answer["error"] = "skill failed"
                self._json(200, answer)

            def _json(self, code: int, payload: dict[str, Any]) -> None:
                self._ended()
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@contextmanager
def serving_cli(token: str, workspace: Path, monkeypatch: Any) -> Iterator[HooksServer]:
    """A HooksServer, with the environment pointing `clawspec run` at it (token and base URL)."""
    with HooksServer(token, workspace) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", token)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        yield server
