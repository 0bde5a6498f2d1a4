"""A local stand-in for the OpenClaw gateway, for benchmarks: hooks API, chat endpoint, gateway log.

`POST /hooks/agent` (waitForCompletion) answers after a fixed latency, like an agent run that
takes that long, and appends the run's lines to the gateway log in the real gateway's shapes
(tslog JSON: session state, embedded run start, tool start/end, model fetch, run done, the
`gateway/hooks` completion line naming the hook run id, the session and the hook `name`).
`[write:<path>]` markers in the message write a Markdown artifact into the workspace, like the
agent's `write` tool. Runs in its own process (`python benchmarks/gateway_fake.py ...` prints
its URL), so its CPU does not share ClawSpec's interpreter lock.

`POST /v1/chat/completions` (a conversation turn; Bearer = the gateway token, not the hooks
token) answers after the same latency with an OpenAI chat completion (`id` `chatcmpl_<uuid>`,
the reply `You said: <message>`, `usage`) and logs the run like OpenClaw 2026.9.6 logs a chat
run (tests/gateway/data/chat/openclaw.log): run id = the completion's id, the session named by
`x-openclaw-session-key`, the reply on an INFO line. `GET /v1/models` is ClawSpec's preflight.

    .venv/bin/python benchmarks/gateway_fake.py --workspace W --log W/logs/openclaw.log \
        --latency 0.2

A `{date}` in the log's file name (`openclaw-{date}.log`) names a dated log as OpenClaw's default
is: every write goes to the file of the local date at that moment.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import threading
import time
import uuid
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GATEWAY_TOKEN = "bench-gateway-token-0123456789"
ARTIFACT = "---\ntitle: Sunday Service\nstatus: ready\n---\n# Hook\n\nBody\n\n## CTA\n\nReply.\n"
META = {"runtime": "node", "runtimeVersion": "24.21.0", "hostname": "vm", "logLevelId": 2,
        "logLevelName": "DEBUG", "parentNames": ["openclaw"]}  # fmt: skip
INFO = {**META, "logLevelId": 3, "logLevelName": "INFO"}


def line(subsystem: str, message: str, trace: str | None, span: str, parent: str | None) -> str:
    """One tslog JSON line as the gateway writes it."""
    data = {"0": json.dumps({"subsystem": subsystem}), "1": message, "_meta": META,
            "time": "2026-11-22T01:43:34.443+00:00", "hostname": "vm",
            "message": message}  # fmt: skip
    if trace:
        data.update(traceId=trace, spanId=span)
        if parent:
            data["parentSpanId"] = parent
    return json.dumps(data, separators=(",", ":")) + "\n"


def run_lines(
    hook_run: str, tools: list[str], session_key: str | None = None, name: str = "hook"
) -> list[str]:
    """The lines of one hook run, in the real gateway's shapes."""
    trace, req, span = uuid.uuid4().hex, uuid.uuid4().hex[:16], uuid.uuid4().hex[:16]
    rid, sid, job = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    key = f"agent:main:{session_key}" if session_key else f"agent:main:cron:{job}:run:{sid}"
    out = [
        line("diagnostic", f"session state: sessionId={sid} sessionKey={key} prev=idle "
             'new=processing reason="" queueDepth=1', trace, req, None),
        line("agent/embedded", f"embedded run start: runId={rid} sessionId={sid} provider=fake "
             "model=fake-model thinking=off messageChannel=unknown", trace, span, req),
    ]  # fmt: skip
    for n, tool in enumerate(tools):
        for phase in ("start", "end"):
            out.append(line("agent/embedded", f"embedded run tool {phase}: runId={rid} "
                            f"tool={tool} toolCallId=call_{n}", trace, span, req))  # fmt: skip
        fetch = "[model-fetch] response provider=fake api=openai-completions status=200"
        out.append(line("provider-transport-fetch", fetch, trace, span, req))
    out.append(line("agent/embedded", f"embedded run done: runId={rid} sessionId={sid} "
                    "durationMs=2059 aborted=false", trace, req, None))  # fmt: skip
    hook = {"runId": hook_run, "jobId": job, "sourcePath": "/hooks/agent", "name": name,
            "agentId": "main", "status": "ok", "sessionId": sid, "sessionKey": key}  # fmt: skip
    data = json.loads(line("gateway/hooks", "", trace, req, None))
    data["1"] = hook
    data["message"] = json.dumps(hook)
    out.append(json.dumps(data, separators=(",", ":")) + "\n")
    return out


def chat_lines(run_id: str, session_key: str, reply: str, tools: list[str]) -> list[str]:
    """The lines of one chat run (`/v1/chat/completions`), in the real gateway's shapes: the
    embedded run's id is the completion's `chatcmpl_…` id, the session is the request's key."""
    trace, req, span = uuid.uuid4().hex, uuid.uuid4().hex[:16], uuid.uuid4().hex[:16]
    sid = str(uuid.uuid4())
    out = [
        line("diagnostic", f"lane enqueue: lane=session:{session_key} queueSize=1", trace, req,
             None),
        line("agent/embedded", f"embedded run start: runId={run_id} sessionId={sid} "
             "provider=fake model=fake-model thinking=off messageChannel=webchat", trace, span,
             req),
        line("diagnostic", f"session state: sessionId={sid} sessionKey={session_key} prev=idle "
             'new=processing reason="run_started" queueDepth=0', trace, span, req),
    ]  # fmt: skip
    for n, tool in enumerate(tools):
        for phase in ("start", "end"):
            out.append(line("agent/embedded", f"embedded run tool {phase}: runId={run_id} "
                            f"tool={tool} toolCallId=call_{n}", trace, span, req))  # fmt: skip
        fetch = "[model-fetch] response provider=fake api=openai-completions status=200"
        out.append(line("provider-transport-fetch", fetch, trace, span, req))
    said = json.loads(line("", reply, trace, req, None))  # the console line: the reply itself
    del said["1"]
    said["0"] = reply
    said["_meta"] = {**INFO, "name": "openclaw"}
    ended = json.loads(line("agents/agent-command", f"[agent] run {run_id} ended with "
                            "stopReason=stop", trace, req, None))  # fmt: skip
    ended["_meta"] = INFO
    out += [
        line("agent/embedded", f"embedded run done: runId={run_id} sessionId={sid} "
             "durationMs=2059 aborted=false", trace, req, None),
        json.dumps(said, separators=(",", ":")) + "\n",
        json.dumps(ended, separators=(",", ":")) + "\n",
        line("diagnostic", f"session state: sessionId={sid} sessionKey={session_key} "
             'prev=processing new=idle reason="run_completed" queueDepth=0', trace, req, None),
    ]  # fmt: skip
    return out


def chat_body(message: str, agent_id: str = "main") -> dict[str, Any]:
    """The body ClawSpec's chat client sends for a turn (the bare loop sends the same)."""
    return {"model": f"openclaw/{agent_id}", "messages": [{"role": "user", "content": message}],
            "stream": False}  # fmt: skip


def hook_body(message: str, name: str, session_key: str | None = None) -> dict[str, Any]:
    """The body ClawSpec's hooks client sends (the bare loop sends the same)."""
    body = {"message": message, "name": name, "agentId": "main", "deliver": False,
            "waitForCompletion": True, "timeoutSeconds": 300}  # fmt: skip
    if session_key:
        body["sessionKey"] = session_key
    return body


class _Listener(ThreadingHTTPServer):
    # The backlog is read when the server starts listening (in its constructor): set on an
    # instance afterwards it changed nothing, and socketserver's 5 could drop the connection
    # attempts of 16 scenarios starting at once (a 1 s TCP retry). The real gateway uses 511.
    request_queue_size = 128
    daemon_threads = True


class FakeGateway:
    """Serve the hooks API on 127.0.0.1; each run sleeps `latency_s`, logs, then answers."""

    def __init__(
        self,
        token: str,
        workspace: Path,
        log_path: Path,
        latency_s: float,
        timeline: Path | None = None,
        gateway_token: str = GATEWAY_TOKEN,
    ) -> None:
        self.token = token
        self.gateway_token = gateway_token  # the chat endpoint's (OpenClaw's gateway token)
        # When each hook request arrived and was answered (wall clock, one line per run): where
        # the client left the gateway idle between runs.
        self.timeline = open(timeline, "a", buffering=1) if timeline else None  # noqa: SIM115
        self.workspace = workspace
        self.log_path = log_path
        self.latency_s = latency_s
        self.runs = 0
        self._lock = threading.Lock()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        # A `{date}` in the log's name: like OpenClaw's default log, each write goes to the
        # file of the local date at that moment (a run going on at midnight moves on).
        self._dated = "{date}" in log_path.name
        self._log = -1
        if not self._dated:
            self._log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.server = _Listener(("127.0.0.1", 0), self._handler())

    def _write_log(self, lines: list[str]) -> None:
        """One append: the lines of a run stay whole."""
        if not self._dated:
            os.write(self._log, "".join(lines).encode())
            return
        path = self.log_path.with_name(self.log_path.name.replace("{date}", str(date.today())))
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(handle, "".join(lines).encode())
        finally:
            os.close(handle)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def run(self, body: dict[str, Any]) -> dict[str, Any]:
        arrived = time.time()
        message = str(body.get("message", ""))
        time.sleep(self.latency_s)
        for path in re.findall(r"\[write:([^\]]+)\]", message):
            target = self.workspace / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(ARTIFACT, encoding="utf-8")
        run_id = uuid.uuid4().hex
        lines = run_lines(run_id, ["read", "write"], body.get("sessionKey"), body.get("name", ""))
        self._write_log(lines)
        with self._lock:
            self.runs += 1
            if self.timeline:
                self.timeline.write(f"{arrived:.6f} {time.time():.6f}\n")
        return {"ok": True, "runId": run_id, "completion": {"status": "ok"}}

    def chat(self, body: dict[str, Any], session_key: str) -> dict[str, Any]:
        """One chat run: sleep, log its lines, answer with a completion echoing the message."""
        arrived = time.time()
        messages = body.get("messages") or [{}]
        message = str(messages[-1].get("content", ""))
        time.sleep(self.latency_s)
        run_id = f"chatcmpl_{uuid.uuid4()}"
        reply = f"You said: {message}"
        lines = chat_lines(run_id, session_key, reply, ["read"])
        self._write_log(lines)
        with self._lock:
            self.runs += 1
            if self.timeline:
                self.timeline.write(f"{arrived:.6f} {time.time():.6f}\n")
        prompt, completion = 40 + len(message) // 4, 5 + len(reply) // 4
        return {
            "id": run_id,
            "object": "chat.completion",
            "created": int(arrived),
            "model": str(body.get("model", "openclaw/main")),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }  # fmt: skip

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like the real gateway
            # Buffered: headers and body leave in one write when the handler returns. Two small
            # writes would meet Nagle's algorithm and the client's delayed ACK: ~40 ms per
            # answer that no real gateway adds.
            wbufsize = -1

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path != "/v1/models":
                    self._json(200, {"ok": True, "status": "live"})
                elif self._authorised(gateway.gateway_token):
                    model = {"id": "openclaw/main", "object": "model", "owned_by": "openclaw"}
                    self._json(200, {"object": "list", "data": [model]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if self.path == "/v1/chat/completions":
                    if self._authorised(gateway.gateway_token):
                        # As OpenClaw names the session: a key not in the agent's form is
                        # the main agent's.
                        key = self.headers.get("x-openclaw-session-key") or "main"
                        key = key if key.startswith("agent:") else f"agent:main:{key}"
                        self._json(200, gateway.chat(body, key))
                elif self.headers.get("Authorization") != f"Bearer {gateway.token}":
                    self._json(401, {"ok": False, "error": "unauthorized"})
                elif self.path != "/hooks/agent":
                    self._json(404, {"ok": False, "error": "not found"})
                else:
                    self._json(200, gateway.run(body))

            def _authorised(self, token: str) -> bool:
                """The chat endpoint's check: 401 as OpenClaw words it for a wrong token."""
                if self.headers.get("Authorization") == f"Bearer {token}":
                    return True
                self._json(401, {"error": {"message": "Unauthorized", "type": "unauthorized"}})
                return False

            def _json(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--token", default="bench-token-0123456789")
    parser.add_argument("--gateway-token", default=GATEWAY_TOKEN, help="the chat endpoint's")
    parser.add_argument("--timeline", type=Path, help="append 'arrived answered' per run")
    args = parser.parse_args()
    gateway = FakeGateway(args.token, args.workspace, args.log, args.latency, args.timeline,
                          args.gateway_token)  # fmt: skip
    print(gateway.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        gateway.server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
