"""A hooks server whose agent runs spend: each run writes the gateway's log lines (the
benchmark fake's real shapes) and the `model.usage` record ClawSpec's OpenClaw plugin writes.

A marker in the hook message says what a run used: `[usage:<model>:<input>:<output>:<cost>]`,
`<cost>` a number (OpenClaw's native `costUsd`) or `none` (the model has no price in
OpenClaw: the record carries no cost, as OpenClaw 2026.9.6 writes it). Without a marker a run
uses 1,000 + 100 tokens of `fake/fake-model` at no native cost. `[sleep:<s>]` answers later,
`[wait:<name>]` answers once `release(name)` is called (a run held in flight).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from benchmarks.gateway_fake import run_lines
from tests.support.hooks_api import HooksServer

CONFIG = "report_dir: reports\ngateway_log_pattern: gateway.log\nplugin_output: plugin.jsonl\n"


class SpendingGateway:
    def __init__(self, workspace: Path) -> None:
        self.log = workspace / "gateway.log"
        self.plugin = workspace / "plugin.jsonl"
        self.log.write_text("", encoding="utf-8")
        self.plugin.write_text("", encoding="utf-8")
        self.lock = threading.Lock()
        self.started: list[str] = []  # hook names, in arrival order
        self.gates: dict[str, threading.Event] = {}
        self.arrived = threading.Condition(self.lock)

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

    def wait_for(self, count: int, timeout: float = 30) -> None:
        """Until `count` runs have arrived (a bound far above need, never a timed check)."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.started) >= count, timeout)

    def on_run(self, body: dict[str, Any], run_id: str) -> Any:
        message = body["message"]
        with self.arrived:
            self.started.append(body["name"])
            self.arrived.notify_all()
        if wait := re.search(r"\[wait:([\w-]+)\]", message):
            self.gate(wait.group(1)).wait(60)
        if sleep := re.search(r"\[sleep:([\d.]+)\]", message):
            time.sleep(float(sleep.group(1)))
        model, inputs, outputs, cost = "fake/fake-model", 1000, 100, "0"
        if usage := re.search(r"\[usage:([\w./%-]+):(\d+):(\d+):([\w.]+)\]", message):
            model, inputs, outputs, cost = usage.groups()
            model = unquote(model)  # a hostile name, percent-encoded in the marker
        key = body.get("sessionKey") or f"hook:{run_id}"
        record: dict[str, Any] = {
            "v": 1,
            "kind": "model_usage",
            "event": "model.usage",
            "ts": int(time.time() * 1000),
            "sessionKey": f"agent:main:{key}",
            "agentId": "main",
            "provider": model.split("/")[0],
            "model": model.split("/")[-1] if "/" in model else model,
            "inputTokens": int(inputs),
            "outputTokens": int(outputs),
            "totalTokens": int(inputs) + int(outputs),
        }
        if cost != "none":
            record["costUsd"] = float(cost)
        with self.lock:
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write("".join(run_lines(run_id, ["write"], key, body["name"])))
            if "[nousage]" not in message:  # a run whose usage nothing recorded
                with self.plugin.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
        return {"ok": True, "runId": run_id, "completion": {"status": "ok"}}


@contextmanager
def spending_gateway(token: str, workspace: Path, monkeypatch: Any) -> Iterator[SpendingGateway]:
    """The gateway, `clawspec run` pointed at it (token, base URL, its log and plugin file)."""
    config = workspace / "clawspec.yaml"
    config.write_text(CONFIG + config.read_text("utf-8").replace("report_dir: reports\n", ""))
    fake = SpendingGateway(workspace)
    with HooksServer(token, workspace, on_run=fake.on_run) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", token)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        try:
            yield fake
        finally:
            for gate in list(fake.gates.values()):
                gate.set()
