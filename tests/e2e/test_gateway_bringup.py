"""A real OpenClaw gateway brought up by ClawSpec runs scripted hook runs end to end."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests

from clawspec.gateway.bringup import BringUpOptions, GatewayProcess, RunningGateway, _proc_stats
from clawspec.gateway.plugin_records import PluginRecord, read_plugin_records, run_family, sum_usage
from tests.e2e.conftest import provider_config
from tests.support.hang_guard import HANG_GUARD_S, wait_until
from tests.support.scripted_provider import ScriptedProvider

pytestmark = pytest.mark.e2e


def run_hook(gw: RunningGateway, message: str, token: str | None = None) -> tuple[str, Any]:
    session_key = f"hook:clawspec:{uuid.uuid4().hex[:12]}"
    resp = requests.post(
        f"{gw.base_url}{gw.hooks_path}/agent",
        headers={"Authorization": f"Bearer {token or gw.hooks_token}"},
        json={
            "message": message,
            "name": "e2e",
            "agentId": "main",
            "deliver": False,
            "waitForCompletion": True,
            "timeoutSeconds": 60,
            "sessionKey": session_key,
        },
        timeout=90,
    )
    return session_key, resp


def embedded_session(gw: RunningGateway, hook_run_id: str, timeout: float = 10) -> str:
    """The embedded run's sessionKey, from the gateway/hooks log line for our hook run id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in gw.log_path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            arg = rec.get("1")
            if isinstance(arg, dict) and arg.get("runId") == hook_run_id and "sessionKey" in arg:
                return str(arg["sessionKey"])
        time.sleep(0.2)
    raise AssertionError(f"no gateway/hooks log line for run {hook_run_id}")


def finished_records(gw: RunningGateway, session_key: str, runs: int = 1) -> list[PluginRecord]:
    """Plugin records once `runs` harness runs in the family have completed (it ends last)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        records = read_plugin_records(gw.plugin_output_path)
        roots = [r.run_id for r in records if r.kind == "run" and r.session_key == session_key]
        family = run_family(records, roots[0]) if roots else set()
        done = {r.run_id for r in records if r.kind == "harness" and r.phase == "completed"}
        if roots and len(family & done) >= runs:
            return records
        assert time.monotonic() < deadline, "plugin records incomplete"
        time.sleep(0.2)


def test_gateway_is_ready(gateway: RunningGateway) -> None:
    resp = requests.get(f"{gateway.base_url}/readyz", timeout=5)
    assert resp.status_code == 200 and resp.json()["ready"] is True
    assert gateway.base_url.startswith("http://127.0.0.1:")
    assert gateway.hooks_token != gateway.gateway_token
    assert gateway.log_path.exists()
    assert read_plugin_records(gateway.plugin_output_path)[0].kind == "plugin"


def test_wrong_hook_token_is_rejected(gateway: RunningGateway) -> None:
    _, resp = run_hook(gateway, "nothing [script:write-file]", token="wrong-token")
    assert resp.status_code == 401


def test_hook_run_writes_file_and_records_usage(
    gateway: RunningGateway, provider: ScriptedProvider
) -> None:
    _, resp = run_hook(gateway, "Please write the file. [script:write-file]")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["ok"] is True and body["completion"]["status"] == "ok"
    out = gateway.workspace / "out.md"
    assert out.read_text(encoding="utf-8") == "hello from clawspec\n"

    session = embedded_session(gateway, body["runId"])
    records = finished_records(gateway, session)
    run_id = next(r.run_id for r in records if r.kind == "run" and r.session_key == session)
    usage = sum_usage(records, {run_id})
    assert (usage.input, usage.output, usage.total, usage.calls) == (2100, 57, 2157, 2)
    tools = [
        r.tool_name
        for r in records
        if r.kind == "tool" and r.phase == "completed" and r.run_id == run_id
    ]
    assert tools == ["write"]
    answered = [(r.step, r.answered) for r in provider.chat_requests("write-file")]
    assert answered[-2:] == [(0, "tool_calls"), (1, "text")]


def test_subagent_run_is_linked(gateway: RunningGateway) -> None:
    _, resp = run_hook(gateway, "Delegate the work. [script:spawn]")
    assert resp.status_code == 200 and resp.json()["completion"]["status"] == "ok"
    session = embedded_session(gateway, resp.json()["runId"])
    records = finished_records(gateway, session, runs=2)
    parent = next(r.run_id for r in records if r.kind == "run" and r.session_key == session)
    assert parent is not None
    links = [r for r in records if r.kind == "subagent" and r.parent_run_id == parent]
    assert len(links) == 1 and ":subagent:" in str(links[0].child_session_key)
    assert sum_usage(records, run_family(records, parent)).input == 500 + 600 + 300 + 310
    wait_until((gateway.workspace / "child.md").exists, poll_s=0.2)
    assert (gateway.workspace / "child.md").exists(), "the child did not write child.md"


def test_own_gateway_exits_cleanly(
    openclaw_launcher: str, provider: ScriptedProvider, tmp_path: Path
) -> None:
    """A second gateway (also checks a JSON5 user config) leaves no process after exit."""
    user = tmp_path / "openclaw.json"
    user.write_text("// mine\n{ agents: { entries: { main: { name: 'Mine', }, }, }, }\n")
    opts = BringUpOptions(
        command=[openclaw_launcher, "gateway", "run"],
        user_config=user,
        extra_config=provider_config(provider.base_url),
        state_dir=tmp_path / "state",  # the test's own (a default one would stay in /tmp)
    )
    gw = GatewayProcess(opts)
    with gw as running:
        family = [p for p, (ppid, pgrp) in _proc_stats().items() if running.pid in (pgrp, ppid)]
        assert running.pid in family and len(family) >= 2  # the gateway starts helpers
        assert requests.get(f"{running.base_url}/readyz", timeout=5).json()["ready"] is True
    alive = set(_proc_stats())
    assert not alive & set(family), f"left behind: {alive & set(family)}"
