"""Verdicts on the real gateway with OpenClaw's default Tool Search, and sub-agents that start late.

OpenClaw 2026.9.6 turns Tool Search on by default: the model calls `sessions_spawn` (and may call
any tool) through `tool_call {id, args}`, and the log and the trace hold both the wrapper and the
inner call. One `clawspec run --bring-up` (gateway config without `tools.toolSearch`, so the
default) checks the log and the trace assertions on such runs, and on a run whose sub-agents
are still pending when the scenario's evidence window ends: one spawned child is held by a slow
model answer, the other is queued behind it (`subagents.maxConcurrent: 1`) and never starts.
Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import provider_config, run_clawspec
from tests.support.scripted_provider import ScriptedProvider


def _tool_call(tool: str, **args: Any) -> dict[str, Any]:
    return {"name": "tool_call", "arguments": {"id": tool, "args": args}}


def _spawn(task: str, name: str) -> dict[str, Any]:
    return _tool_call("sessions_spawn", task=task, taskName=name, agentId="reviewer")


SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "ts-delegate": [
        {"tool_calls": [_spawn("Review the draft [script:ts-review]", "review")]},
        {"tool": "write", "args": {"path": "parent.md", "content": "parent\n"}},
        {"text": "Delegated."},
    ],
    "ts-review": [
        {"tool_calls": [_tool_call("write", path="review.md", content="on brand\n")]},
        {"text": "Reviewed."},
    ],
    "ts-two-writes": [
        {"tool_calls": [_tool_call("write", path="one.md", content="1\n")]},
        {"tool": "write", "args": {"path": "two.md", "content": "2\n"}},
        {"text": "Wrote both."},
    ],
    "ts-exec": [
        {"tool_calls": [_tool_call("exec", command="echo sending")]},
        {"text": "Sent."},
    ],
    "ts-late": [
        {
            "tool_calls": [
                _spawn("Take your time [script:ts-slow]", "slow"),
                _spawn("Then this [script:ts-review]", "queued"),
            ]
        },
        {"text": "Spawned two."},
    ],
    # Held well past the late scenario's evidence window (its timeout, counted from its start).
    "ts-slow": [{"text": "Finally.", "slow": 100}],
}

CONTRACT = """\
version: "1.0"
target: {type: agent, path: agents/main, agent_id: main}
defaults: {timeout: 180, poll_interval: 0.5}
scenarios:
  - name: delegates-through-tool-call
    when: {invoke: "Get the draft reviewed [script:ts-delegate]"}
    then:
      - {type: tool_not_permitted, allowed_tools: [sessions_spawn, write]}
      - {type: tool_not_called, tool: exec}
      - {type: tool_was_called, tool: sessions_spawn}
      - {type: delegation_occurred, to_agent: reviewer}
      - {type: tool_sequence, mode: ordered, expected: [sessions_spawn, write]}
      - {type: tool_not_invoked, tool: exec}
      - {type: artifact_exists, path: reviewer/review.md, timeout: 30}
  - name: writes-through-tool-call
    when: {invoke: "Write two files [script:ts-two-writes]"}
    then:
      - {type: tool_sequence, mode: strict, expected: [write, write]}
      - {type: tool_not_permitted, allowed_tools: [write]}
  - name: runs-exec-through-tool-call
    when: {invoke: "Send it [script:ts-exec]"}
    then:
      - {type: tool_was_called, tool: exec}
      - {type: tool_not_called, tool: exec}
      - {type: tool_not_permitted, allowed_tools: [read, write]}
      - {type: tool_not_invoked, tool: exec}
  - name: late-sub-agents
    timeout: 30
    when: {invoke: "Spawn two reviews [script:ts-late]"}
    then:
      - {type: tool_was_called, tool: sessions_spawn}
      - {type: tool_not_called, tool: exec}
      - {type: tool_not_permitted, allowed_tools: [sessions_spawn, write]}
      - {type: tool_not_invoked, tool: exec}
      - {type: llm_call_count, max: 20}
"""

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("tool-search")
    (work / "agents" / "main" / "tests").mkdir(parents=True)
    (work / "agents" / "main" / "tests" / "scenarios.yaml").write_text(CONTRACT, "utf-8")
    # One scenario at a time: the late scenario's slow child holds the only sub-agent slot.
    (work / "clawspec.yaml").write_text(
        "concurrency: 1\ngateway: {mode: bring_up, config: openclaw.json, ready_timeout: 180}\n",
        "utf-8",
    )
    with ScriptedProvider(SCRIPTS) as provider:
        config = provider_config(provider.base_url)
        assert "toolSearch" not in config["tools"]  # OpenClaw's default: Tool Search on
        config["agents"]["defaults"]["subagents"] = {"maxConcurrent": 1}
        config["agents"]["entries"] = {
            "main": {"name": "Main", "subagents": {"allowAgents": ["reviewer"]}},
            "reviewer": {"name": "Reviewer"},
        }
        (work / "openclaw.json").write_text(json.dumps(config, indent=2), "utf-8")
        proc = run_clawspec(
            work, openclaw_launcher, "--report-dir", str(work / "reports"), timeout_s=900
        )
        offered = {
            tool["function"]["name"]
            for call in provider.chat_requests("ts-delegate")
            for tool in (call.body or {}).get("tools", [])
        }
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    scenarios = {s["name"]: s for s in report["scenarios"]}
    return {"proc": proc, "scenarios": scenarios, "offered": offered}


def _verdicts(run: dict[str, Any], name: str) -> dict[str, tuple[str, str]]:
    scenario = run["scenarios"][name]
    return {
        f"{a['type']}#{a['index']}": (a["status"], a["message"]) for a in scenario["assertions"]
    }


def _statuses(run: dict[str, Any], name: str) -> list[tuple[str, str]]:
    return [(a["type"], a["status"]) for a in run["scenarios"][name]["assertions"]]


def test_the_model_is_offered_tool_search_not_sessions_spawn(run: dict[str, Any]) -> None:
    assert {"tool_call", "tool_search", "tool_describe"} <= run["offered"]
    assert "sessions_spawn" not in run["offered"]


def test_calls_through_tool_call_count_as_the_tools_they_call(run: dict[str, Any]) -> None:
    scenario = run["scenarios"]["delegates-through-tool-call"]
    assert _statuses(run, "delegates-through-tool-call") == [
        ("tool_not_permitted", "pass"),
        ("tool_not_called", "pass"),
        ("tool_was_called", "pass"),
        ("delegation_occurred", "pass"),
        ("tool_sequence", "pass"),
        ("tool_not_invoked", "pass"),
        ("artifact_exists", "pass"),
    ], run["proc"].stdout
    assert scenario["status"] == "pass"
    tools = [tool["name"] for tool in scenario["evidence"]["tools"]]
    assert "tool_call" not in tools and tools.count("write") == 2, tools


def test_strict_sequence_and_permissions_see_the_inner_calls(run: dict[str, Any]) -> None:
    assert _statuses(run, "writes-through-tool-call") == [
        ("tool_sequence", "pass"),
        ("tool_not_permitted", "pass"),
    ], run["proc"].stdout


def test_a_forbidden_tool_called_through_tool_call_fails_naming_the_tool(
    run: dict[str, Any],
) -> None:
    verdicts = _verdicts(run, "runs-exec-through-tool-call")
    assert verdicts["tool_was_called#0"][0] == "pass"
    assert verdicts["tool_not_called#1"][0] == "fail"
    status, message = verdicts["tool_not_permitted#2"]
    assert status == "fail" and "'exec' (1)" in message and "tool_call" not in message
    assert verdicts["tool_not_invoked#3"][0] == "fail"


def test_pending_sub_agents_make_negative_assertions_errors_never_passes(
    run: dict[str, Any],
) -> None:
    verdicts = _verdicts(run, "late-sub-agents")
    assert verdicts["tool_was_called#0"][0] == "pass", verdicts  # found: stands
    for key in ("tool_not_called#1", "tool_not_permitted#2"):
        status, message = verdicts[key]
        assert status == "error", (key, message)
        assert "but the run's log is incomplete" in message
        # The second child waits for the only slot: it never starts. The first one started
        # and is still running, or, on a machine too busy to start it within the wait, has not
        # started either: both are pending evidence, and neither may pass.
        assert "never started" in message, message
        assert "did not finish" in message or message.count("never started") == 2, message
    for key in ("tool_not_invoked#3", "llm_call_count#4"):
        status, message = verdicts[key]
        assert status == "error", (key, message)
        assert "but the trace is incomplete" in message, message
    assert run["scenarios"]["late-sub-agents"]["status"] == "error"
