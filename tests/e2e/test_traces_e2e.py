"""The embedded trace backend against a real OpenClaw gateway (`observability.backend:
local`): ClawSpec's plugin exports OTLP spans to ClawSpec's receiver, LocalBackend reads them back.

Two parts: the backend driven directly (a gateway brought up with the plugin exporting to a
receiver, hook requests sent by hand, concurrent runs), and the trace assertions through the real
`clawspec run` CLI on the contracts in tests/e2e/contracts/traces (pass, and fail with the
measured values). Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from clawspec.config.settings import Settings
from clawspec.evidence.spans import tool_names
from clawspec.evidence.trace_poll import poll_trace
from clawspec.gateway.bringup import BringUpOptions, GatewayProcess, RunningGateway
from clawspec.traces.backends.base import TraceQuery
from clawspec.traces.backends.local import LocalBackend
from clawspec.traces.model import SpanType, Trace
from clawspec.traces.receiver import OtlpReceiver
from tests.e2e.conftest import provider_config
from tests.support.hang_guard import wait_until
from tests.support.scripted_provider import ScriptedProvider, load_scripts

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = Path(__file__).resolve().parent / "contracts" / "traces"
PROVIDER_PORT = 18087  # the port contracts/traces/openclaw.json names

pytestmark = pytest.mark.e2e


# -- the backend, driven directly -------------------------------------------------------------


@pytest.fixture(scope="module")
def traced(
    openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningGateway, OtlpReceiver]]:
    scripts = load_scripts(CONTRACTS / "provider-scripts.json")
    config = provider_config("")  # the provider's models; its base URL is set below
    with ScriptedProvider(scripts) as provider, OtlpReceiver(0) as receiver:
        config["models"]["providers"]["fake"]["baseUrl"] = provider.base_url
        config["agents"]["entries"] = {
            "main": {"name": "Main", "subagents": {"allowAgents": ["reviewer"]}},
            "reviewer": {"name": "Reviewer"},
        }
        opts = BringUpOptions(
            command=[openclaw_launcher, "gateway", "run"],
            state_dir=tmp_path_factory.mktemp("traced-gateway"),
            agent_ids=("main", "reviewer"),
            extra_config=config,
            otlp_endpoint=receiver.endpoint,
        )
        with GatewayProcess(opts) as gateway:
            yield gateway, receiver


def _hook(gateway: RunningGateway, message: str, session_key: str) -> dict[str, Any]:
    body = {
        "message": message,
        "name": "trace-e2e",
        "agentId": "main",
        "sessionKey": session_key,
        "deliver": False,
        "waitForCompletion": True,
        "timeoutSeconds": 90,
    }
    req = urllib.request.Request(
        f"{gateway.base_url}{gateway.hooks_path}/agent",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {gateway.hooks_token}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


def _trace_of(receiver: OtlpReceiver, run_id: str, started: datetime, answer: dict) -> Trace:
    settings = Settings(observability={"backend": "local", "url": receiver.endpoint})
    query = TraceQuery(
        run_id=run_id,
        session_key=f"hook:clawspec:{run_id}",
        gateway_run_id=answer.get("runId"),
        started_at=started,
        ended_at=datetime.now(UTC),
        scenario=run_id,
        wait_s=90,  # the hook's timeoutSeconds: a sub-agent may start late on a busy machine
    )
    # OpenClaw exports its spans in batches: a run's first spans can arrive before the rest, and
    # a trace seen then looks whole. The hook run has ended, so its own span (written at its
    # end, after every span of the run) is sure to come: looked for until it has (a hang guard,
    # not a bound on the time).
    seen: list[Trace] = []

    def whole() -> bool:
        seen[:] = [poll_trace(LocalBackend(settings, {}), query, delay_ms=300, timeout_ms=30_000)]
        return any(
            span.name == "openclaw.run"
            and ":cron:" in str(span.attributes.get("openclaw.session_key", ""))
            for span in seen[0].of_type(SpanType.AGENT)
        )

    wait_until(whole, poll_s=1.0)
    (trace,) = seen
    assert trace.pending == (), trace.pending
    return trace


def test_delegating_run_gives_one_trace_with_the_sub_agent_nested(traced) -> None:
    gateway, receiver = traced
    started = datetime.now(UTC)
    answer = _hook(gateway, "Write and review [script:trace-parent]", "hook:clawspec:e2e-deleg")
    assert answer["ok"] is True, answer
    trace = _trace_of(receiver, "e2e-deleg", started, answer)

    assert len({span.trace_id for span in trace.spans}) == 1  # sub-agents share the trace id
    llm = trace.of_type(SpanType.LLM)
    assert all(span.name == "openclaw.model.call" for span in llm)
    assert len(llm) == 5  # 3 by main, 2 by the reviewer; model.usage summaries not counted
    assert sorted((s.input_tokens, s.output_tokens) for s in llm) == [
        (300, 30),
        (310, 3),
        (700, 40),
        (800, 20),
        (900, 5),
    ]
    assert {span.model for span in llm} == {"fake-model"}
    tools = sorted(trace.of_type(SpanType.TOOL), key=lambda s: s.start_ms or 0)
    # OpenClaw's default Tool Search: `sessions_spawn` is called through `tool_call`, and the
    # trace holds both; the evidence counts the wrapper as the tool it called.
    assert [t.tool_name for t in tools] == ["write", "tool_call", "sessions_spawn", "write"]
    assert tool_names(trace) == ["write", "sessions_spawn", "write"]
    assert all(t.error is None for t in tools)

    by_id = {span.id: span for span in trace.spans}
    runs = [s for s in trace.of_type(SpanType.AGENT) if s.name == "openclaw.run"]
    parent = next(r for r in runs if ":cron:" in r.attributes["openclaw.session_key"])
    child = next(r for r in runs if ":subagent:" in r.attributes["openclaw.session_key"])
    assert child.attributes["openclaw.session_key"].startswith("agent:reviewer:subagent:")
    assert child.attributes.get("openclaw.parent_run_id") == parent.attributes["openclaw.run_id"]

    def ancestors(span):
        while span.parent_id in by_id:
            span = by_id[span.parent_id]
            yield span

    # The child run hangs below the parent's harness span, like the parent's own run.
    assert by_id[parent.parent_id].name == "openclaw.harness.run"
    assert parent.parent_id in {a.id for a in ancestors(child)}
    child_write = next(
        t
        for t in tools
        if t.attributes["openclaw.session_key"].endswith(
            child.attributes["openclaw.session_key"].rsplit(":", 1)[1]
        )
    )
    assert child.id in {a.id for a in ancestors(child_write)}

    # The exact key: the hook span carries the session key we sent and the hook run id.
    hook = next(s for s in trace.spans if s.name == "openclaw.hook")
    assert hook.attributes["session.id"] == "hook:clawspec:e2e-deleg"
    assert hook.attributes["openclaw.hook_run_id"] == answer["runId"]


def test_concurrent_runs_get_their_own_traces(traced) -> None:
    gateway, receiver = traced
    started = datetime.now(UTC)
    answers: dict[str, dict] = {}

    def run(name: str, script: str) -> None:
        answers[name] = _hook(gateway, f"Go [script:{script}]", f"hook:clawspec:{name}")

    threads = [
        threading.Thread(target=run, args=(f"e2e-conc-{i}", script))
        for i, script in enumerate(["trace-solo", "trace-solo", "trace-parent"])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    traces = {name: _trace_of(receiver, name, started, answers[name]) for name in answers}
    assert len({trace.id for trace in traces.values()}) == 3
    for name in ("e2e-conc-0", "e2e-conc-1"):
        solo = traces[name]
        assert len(solo.of_type(SpanType.LLM)) == 2
        assert [t.tool_name for t in solo.of_type(SpanType.TOOL)] == ["write"]
        assert sum(s.input_tokens or 0 for s in solo.of_type(SpanType.LLM)) == 233
    assert len(traces["e2e-conc-2"].of_type(SpanType.LLM)) == 5


# -- the trace assertions through the real CLI ------------------------------------------------


@pytest.fixture(scope="module")
def cli_run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("trace-contracts") / "traces"
    shutil.copytree(CONTRACTS, work)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CLAWSPEC_", "GITHUB_"))
    }
    env.update({"CLAWSPEC_OPENCLAW_BIN": openclaw_launcher, "PYTHONPATH": str(REPO)})
    scripts = load_scripts(work / "provider-scripts.json")
    with ScriptedProvider(scripts, port=PROVIDER_PORT):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "clawspec",
                "run",
                str(work),
                "--bring-up",
                "--openclaw-config",
                str(work / "openclaw.json"),
                "--no-color",
                "--report-dir",
                str(work / "reports"),
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=work,
        )
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    return {"proc": proc, "scenarios": {s["name"]: s for s in report["scenarios"]}}


def _verdicts(scenario: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["type"], a["status"], a["message"]) for a in scenario["assertions"]]


def test_cli_exit_code_and_statuses(cli_run: dict) -> None:
    proc = cli_run["proc"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    statuses = {name: s["status"] for name, s in cli_run["scenarios"].items()}
    assert statuses == {
        "trace-delegation-passes": "pass",
        "trace-solo-passes": "pass",
        "trace-delegation-tight": "fail",
        "trace-model-error-fails": "fail",
    }, proc.stdout


def test_cli_trace_assertions_pass_on_the_real_trace(cli_run: dict) -> None:
    for name in ("trace-delegation-passes", "trace-solo-passes"):
        scenario = cli_run["scenarios"][name]
        assert all(status == "pass" for _, status, _ in _verdicts(scenario)), _verdicts(scenario)
        assert scenario["trace"]["backend"] == "local"
    passed = cli_run["scenarios"]["trace-delegation-passes"]
    assert passed["trace"]["id"] != cli_run["scenarios"]["trace-solo-passes"]["trace"]["id"]


def test_cli_tightened_limits_fail_with_the_measured_values(cli_run: dict) -> None:
    scenario = cli_run["scenarios"]["trace-delegation-tight"]
    verdicts = _verdicts(scenario)
    assert [status for _, status, _ in verdicts] == ["fail"] * 9, verdicts
    messages = {f"{t}#{i}": m for i, (t, _, m) in enumerate(verdicts)}
    text = "\n".join(messages.values())
    assert "5" in messages["llm_call_count#0"] and "4" in messages["llm_call_count#0"]
    assert "'exec'" in messages["tool_sequence#1"]
    assert "position 2" in messages["tool_sequence#2"]
    assert "'exec'" in messages["tool_sequence#3"]
    assert "fake-model" in messages["model_used#4"] and "fake-model" in messages["model_used#5"]
    assert "copywriter" in messages["delegation_path#6"]
    assert "reviewer" in messages["delegation_path#6"]
    assert "905" in messages["per_span_budget#7"]  # the largest call: 900 in + 5 out
    assert "3,010" in messages["trace_token_budget#8"] and "98" in messages["trace_token_budget#8"]
    assert "skip" not in text


def test_cli_model_error_span_fails_no_span_errors(cli_run: dict) -> None:
    scenario = cli_run["scenarios"]["trace-model-error-fails"]
    ((kind, status, message),) = _verdicts(scenario)
    assert (kind, status) == ("no_span_errors", "fail"), message
    assert "openclaw.model.call" in message
