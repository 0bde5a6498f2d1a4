"""A scripted, OpenAI-compatible model provider on 127.0.0.1 for driving a real OpenClaw gateway.

The gateway streams `POST /v1/chat/completions`; we answer with Server-Sent Events chosen by a
script. The script is picked by a `[script:NAME]` marker in the conversation's user messages, so
one provider serves many scenarios (and a spawned sub-agent whose task carries its own marker
follows its own script).

Script format (JSON/dict): ``{NAME: [step, ...]}``, or ``{NAME: {MODEL_ID: [step, ...]}}`` for
a script whose steps depend on the model the request names (its ``model`` field, e.g.
``fake-model-b`` for a per-request model override; a model id missing from the mapping falls back
to its ``"*"`` entry, else to the fallback answer), or ``{NAME: {"runs": [script, script, ...]}}``
for runs that differ: the n-th run of that script (told apart by its marker message, so the
message must differ between runs, e.g. by ``{{run_id}}``) follows the n-th script (cycling).
A step is one of
  {"tool_calls": [{"name": "write", "arguments": {"path": "a.md", "content": "x"}}, ...]}
  {"tool": "write", "args": {...}}                      (one tool call, shorthand)
  {"text": "final answer"}
  {"recall": "<regex with one group>", "template": "Your name is {}.", "else": "I do not know."}
(a tool step may add ``"say": "text"``: assistant text streamed before its tool calls)
and may also carry ``"usage": {"prompt_tokens": N, "completion_tokens": M}`` and faults:
``"slow": seconds`` (delay before answering), ``"status": 500`` (HTTP error instead of a stream),
``"no_finish": true`` (stream without finish_reason), ``"finish": "length"`` (another
finish_reason: an answer cut at the model's output limit), with ``"times": K`` limiting a fault to
the first K requests for that step (default: every time). ``"hold": true`` answers only once the
test calls ``release()`` (or the provider stops): a run held exactly as long as a test needs.

Tool Search: OpenClaw 2026.9.6 turns Tool Search on by default, and then only offers the model a few
tools directly (core primitives such as ``write``, ``read``, ``exec``) plus the wrappers
``tool_search``, ``tool_describe`` and ``tool_call``; other tools (e.g. ``sessions_spawn``) are
callable only as ``tool_call {"id": NAME, "args": {...}}``. So a step naming a tool that the request
does not offer, while it offers ``tool_call``, is answered with that wrapper call instead (same call
id). A step naming ``tool_call`` itself is sent as written. Scripts thus work with Tool Search on or
off. A step with ``"direct": true`` is always sent as written: a model that does not know Tool
Search and calls a tool by name whether or not it is offered.

Conversations: a ``recall`` step answers from the history the request carries, so a test that
passes proves the session kept the earlier turns. It searches the user messages *before* the
script's marker message (the current turn's own message is left out), latest first, and answers
``template`` with the regex's first group, or ``else`` (default ``FALLBACK_TEXT``) when no earlier
message matches. Each turn may name its own script: the script is the one named by the *latest*
user message carrying a marker, skipping what OpenClaw routes into the session from elsewhere (a
sub-agent's completion announce quotes the child's task, marker included, inside
``[Inter-session message]`` / internal-context blocks, or as a message queued into the parent's
running turn: a marker the conversation itself handed to a sub-agent never switches scripts).

Which step? The gateway appends an internal *user* message after every tool result, so counting
user messages loops forever. We count the assistant messages that made tool calls after the
script's marker message: that is how many tool steps were already taken (so each turn carrying a
marker starts its script from its first step).

Run standalone: ``python -m tests.support.scripted_provider --port 18080 --scripts s.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MARKER = re.compile(r"\[script:([A-Za-z0-9_.\-]+)\]")
MODEL_ID = "fake-model"
# Every model id the provider lists; a gateway config may name any of them.
MODEL_IDS = (MODEL_ID, "fake-model-b")
DEFAULT_USAGE = {"prompt_tokens": 100, "completion_tokens": 10}
FALLBACK_TEXT = "OK."


@dataclass(frozen=True)
class RecordedRequest:
    """One request the provider received (for test assertions)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    script: str | None = None
    step: int | None = None
    answered: str = ""  # "tool_calls", "text", "status:500", "no_finish", "fallback"
    wrapped: tuple[str, ...] = ()  # tools of the step sent through `tool_call` (Tool Search)
    model: str | None = None  # the request's `model` field


Steps = list[dict[str, Any]]
Script = Steps | dict[str, Any]


@dataclass
class _State:
    scripts: dict[str, Script]
    requests: list[RecordedRequest] = field(default_factory=list)
    fault_counts: dict[tuple[str, int, str], int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    released: threading.Event = field(default_factory=threading.Event)  # held steps answer
    run_numbers: dict[str, dict[str, int]] = field(default_factory=dict)  # "runs" scripts


def _text_of(content: Any) -> str:
    """Message content is either a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


# What OpenClaw puts in a user message it routes into a session from elsewhere (a sub-agent's
# completion announce, its internal context): quoted tasks there carry other scripts' markers.
ROUTED = ("[Inter-session message]", "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>")


def marker_message(messages: list[dict[str, Any]]) -> tuple[int, str] | None:
    """(index, script name) of the latest user message carrying a marker, routed ones skipped.

    Routed: OpenClaw's blocks (ROUTED), and a message naming a script this conversation itself
    handed to a sub-agent (in an earlier tool call's arguments): a child's completion reaching
    the parent while its run is still going is queued into that run in another form, quoting
    the child's task, and is no turn of the parent's."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.get("role") != "user":
            continue
        text = _text_of(msg.get("content"))
        if any(mark in text for mark in ROUTED):
            continue
        found = MARKER.search(text)
        if found and found.group(1) not in _handed_on(messages[:i]):
            return i, found.group(1)
    return None


def _handed_on(messages: list[dict[str, Any]]) -> set[str]:
    """The scripts named in the arguments of the tool calls these messages made (a spawn's task)."""
    named: set[str] = set()
    for msg in messages:
        for call in msg.get("tool_calls") or () if msg.get("role") == "assistant" else ():
            arguments = str((call.get("function") or {}).get("arguments") or "")
            named.update(MARKER.findall(arguments))
    return named


def choose_step(messages: list[dict[str, Any]]) -> tuple[str | None, int, str]:
    """Return (script name, step index, conversation key) for a chat request.

    The latest user message carrying a marker names the script (each turn of a conversation
    may name its own); the steps are counted from it. Markers in what OpenClaw routes in from
    elsewhere (a child's result announced back into the parent) do not switch scripts.
    """
    found = marker_message(messages)
    if found is None:
        return None, 0, ""
    anchor, name = found
    done = sum(
        1
        for msg in messages[anchor + 1 :]
        if msg.get("role") == "assistant" and msg.get("tool_calls")
    )
    conv_key = _text_of(messages[anchor].get("content"))[:500]
    return name, done, conv_key


def recall(step: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """The answer of a ``recall`` step: ``template`` filled from the latest earlier user
    message (before the marker message) that the step's regex matches, else ``else``."""
    found = marker_message(messages)
    earlier = messages[: found[0]] if found else []
    pattern = re.compile(str(step["recall"]))
    for msg in reversed(earlier):
        if msg.get("role") != "user":
            continue
        match = pattern.search(_text_of(msg.get("content")))
        if match:
            return str(step.get("template", "{}")).format(*match.groups() or (match.group(0),))
    return str(step.get("else", FALLBACK_TEXT))


def steps_for(script: Script | None, model: str | None) -> Steps:
    """The steps of a script for the requested model (a plain list serves every model)."""
    if script is None:
        return []
    if isinstance(script, list):
        return script
    return list(script.get(model or "", script.get("*", [])))


def _chunk_of(
    delta: dict[str, Any] | None,
    finish: str | None,
    usage: dict | None = None,
    model: str = MODEL_ID,
) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n".encode()


def _tool_calls_of(step: dict[str, Any]) -> list[dict[str, Any]]:
    if "tool_calls" in step:
        return list(step["tool_calls"])
    if "tool" in step:
        return [{"name": step["tool"], "arguments": step.get("args", {})}]
    return []


TOOL_CALL = "tool_call"  # OpenClaw's Tool Search wrapper: tool_call {"id": NAME, "args": {...}}


def offered_tools(body: dict[str, Any]) -> set[str] | None:
    """Names of the tools a chat request offers the model, or None if it sends no `tools` list."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    names: set[str] = set()
    for tool in tools:
        if isinstance(tool, dict):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


def through_tool_search(
    calls: list[dict[str, Any]], offered: set[str] | None, *, direct: bool = False
) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """Send each call whose tool is not offered through `tool_call` when that wrapper is offered.

    Returns the calls to answer with and the names of the tools that were wrapped. `direct`
    (a step's ``"direct": true``) sends every call as written.
    """
    if direct or offered is None or TOOL_CALL not in offered:
        return calls, ()
    out: list[dict[str, Any]] = []
    wrapped: list[str] = []
    for call in calls:
        name = call.get("name")
        if name == TOOL_CALL or name in offered:
            out.append(call)
            continue
        args = call.get("arguments", {})
        if isinstance(args, str):
            # Bad JSON is sent as written: the gateway reports the bad arguments.
            with contextlib.suppress(json.JSONDecodeError):
                args = json.loads(args) if args.strip() else {}
        out.append({"name": TOOL_CALL, "arguments": {"id": name, "args": args}})
        wrapped.append(str(name))
    return out, tuple(wrapped)


def render_stream(
    step: dict[str, Any],
    call_prefix: str,
    offered: set[str] | None = None,
    model: str = MODEL_ID,
) -> list[bytes]:
    """SSE chunks for one step, in the shape the OpenAI JS SDK accumulates.

    `offered` names the tools of the request (None: not known, every call is sent as written);
    `model` is the model the chunks say answered (the requested one).
    """

    def _chunk(delta: dict[str, Any] | None, finish: str | None, usage: Any = None) -> bytes:
        return _chunk_of(delta, finish, usage, model)

    out = [_chunk({"role": "assistant", "content": ""}, None)]
    if step.get("say"):  # text the model writes before its tool calls (not the run's reply)
        out.append(_chunk({"content": str(step["say"])}, None))
    calls, _ = through_tool_search(_tool_calls_of(step), offered, direct=bool(step.get("direct")))
    for i, call in enumerate(calls):
        args = call.get("arguments", {})
        args_text = args if isinstance(args, str) else json.dumps(args)
        head = {
            "index": i,
            "id": f"{call_prefix}_{i}",
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        out.append(_chunk({"tool_calls": [head]}, None))
        more = {"index": i, "function": {"arguments": args_text}}
        out.append(_chunk({"tool_calls": [more]}, None))
    if not calls:
        text = str(step.get("text", FALLBACK_TEXT))
        half = max(1, len(text) // 2)
        for piece in (text[:half], text[half:]):
            if piece:
                out.append(_chunk({"content": piece}, None))
    if not step.get("no_finish"):
        out.append(_chunk({}, step.get("finish") or ("tool_calls" if calls else "stop")))
    usage = {**DEFAULT_USAGE, **step.get("usage", {})}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    out.append(_chunk(None, None, usage))
    out.append(b"data: [DONE]\n\n")
    return out


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # the stream ends when we close: no chunked encoding needed

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep test output quiet; requests are recorded instead

    def _record(self, body: dict | None, **kw: Any) -> None:
        state = self.server.state
        with state.lock:
            state.requests.append(
                RecordedRequest(self.command, self.path, dict(self.headers.items()), body, **kw)
            )

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": model_id,
                            "object": "model",
                            "created": 0,
                            "owned_by": "clawspec-tests",
                        }
                        for model_id in MODEL_IDS
                    ],
                },
            )
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._record(None, answered="status:400")
            self._json(400, {"error": {"message": "invalid JSON"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._record(body, answered="status:404")
            self._json(404, {"error": {"message": "not found"}})
            return
        self._answer_chat(body)

    def _answer_chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        name, index, conv_key = choose_step(body.get("messages") or [])
        model = body.get("model") if isinstance(body.get("model"), str) else None
        script = state.scripts.get(name or "")
        if isinstance(script, dict) and isinstance(script.get("runs"), list):
            with state.lock:  # the n-th marker message of this script: its n-th run
                numbers = state.run_numbers.setdefault(name or "", {})
                number = numbers.setdefault(conv_key, len(numbers))
            script = script["runs"][number % len(script["runs"])]
        steps = steps_for(script, model)
        step: dict[str, Any] = steps[index] if index < len(steps) else {"text": FALLBACK_TEXT}
        if "recall" in step:
            step = {**step, "text": recall(step, body.get("messages") or [])}
        if step.get("times") is not None:
            with state.lock:
                key = (f"{name or ''}@{model or ''}", index, conv_key)
                seen = state.fault_counts.get(key, 0)
                state.fault_counts[key] = seen + 1
            if seen >= int(step["times"]):
                step = {k: v for k, v in step.items() if k not in ("slow", "status", "no_finish")}
        answered = (
            "fallback"
            if index >= len(steps)
            else f"status:{step['status']}"
            if step.get("status")
            else "no_finish"
            if step.get("no_finish")
            else "tool_calls"
            if _tool_calls_of(step)
            else "text"
        )
        offered = offered_tools(body)
        _, wrapped = through_tool_search(
            _tool_calls_of(step), offered, direct=bool(step.get("direct"))
        )
        self._record(body, script=name, step=index, answered=answered, wrapped=wrapped, model=model)
        if step.get("slow"):
            time.sleep(float(step["slow"]))
        if step.get("hold"):
            state.released.wait()
        if step.get("status"):
            self._json(
                int(step["status"]),
                {
                    "error": {
                        "message": f"scripted failure {step['status']}",
                        "type": "server_error",
                    }
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        chunks = render_stream(
            step, call_prefix=f"call_{name}_{index}", offered=offered, model=model or MODEL_ID
        )
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, state: _State) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = state


class ScriptedProvider:
    """`with ScriptedProvider({"write-file": [...]}) as p:` serves on `p.base_url` (…/v1)."""

    def __init__(self, scripts: dict[str, Script], port: int = 0) -> None:
        self._state = _State(scripts=dict(scripts))
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("provider not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def chat_requests(self, script: str | None = None) -> list[RecordedRequest]:
        return [
            r
            for r in self.requests
            if r.method == "POST" and r.body is not None and (script is None or r.script == script)
        ]

    def add_script(self, name: str, steps: Script) -> None:
        with self._state.lock:
            self._state.scripts[name] = list(steps)

    def release(self) -> None:
        """Let every held step (``"hold": true``) answer, now and from now on."""
        self._state.released.set()

    def start(self) -> ScriptedProvider:
        self._server = _Server(self._port, self._state)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="scripted-provider", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release()  # a held answer must not outlive the provider
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def load_scripts(path: Path) -> dict[str, Script]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("scripts", data) if isinstance(data, dict) else {}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible provider (loopback)")
    parser.add_argument("--port", type=int, default=18080)
    parser.add_argument("--scripts", type=Path, help="JSON file: {name: [steps]}")
    args = parser.parse_args(argv)
    scripts = load_scripts(args.scripts) if args.scripts else {}
    provider = ScriptedProvider(scripts, port=args.port).start()
    print(f"scripted provider on {provider.base_url} ({len(scripts)} scripts)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        provider.stop()


if __name__ == "__main__":
    main()
