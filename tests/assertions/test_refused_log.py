"""Log assertions on a call the gateway refused, on recorded real gateway sessions.

OpenClaw 2026.9.6 (Tool Search on by default) answers a model that calls `sessions_spawn` by
name with "Tool sessions_spawn not found"; the log still has the call's tool start and end
lines, and only ClawSpec's plugin records tell it was refused (tests/gateway/test_refusals.py
describes the fixtures). The same run on 2026.9.5 spawns the `reviewer` sub-agent. A call a
plugin's `before_tool_call` hook blocks is refused the same way.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.evidence.store import Evidence
from tests.support.harness import evaluate_one, make_context

FIXTURES = Path(__file__).parents[1] / "gateway" / "fixtures"
RUNS = {
    "2026.9.6": ("refused-2026.9.6", "9aad2c87-1450-4de1-801e-a5e8807464ec"),
    "2026.9.5": ("spawn-2026.9.5", "c8ae9b29-9aa8-4a8f-9a0f-b59689eac010"),
    # A write of blocked.md that a plugin's before_tool_call hook blocked.
    "blocked": ("blocked-2026.9.6", "b25b0406-d578-4232-b2e6-4084765554f7"),
}
RUN = "clawspecrun00001"
REFUSED = (
    "'sessions_spawn' was attempted once but refused by the gateway: "
    '"Tool sessions_spawn not found"'
)


BLOCKED = (
    "'write' was attempted once but refused by the gateway: \"Writing blocked.md is not allowed\""
)


@pytest.fixture(autouse=True)
def _wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # Long enough that a verdict waiting for a child that never comes would show (its error).
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 2.0)


def context(workspace: Path, release: str, *, plugin: bool = True) -> EvalContext:
    name, hook_run = RUNS[release]
    log = workspace / "openclaw.log"
    shutil.copy(FIXTURES / f"openclaw-{name}.log", log)
    plugin_path = workspace / "plugin.jsonl"
    shutil.copy(FIXTURES / f"plugin-{name}.jsonl", plugin_path)
    evidence = Evidence(requests.Session(), log, 0, plugin_path if plugin else None, 0)
    run = RunInfo("refused", RUN, datetime.now(UTC), gateway_run_id=hook_run)
    return make_context(workspace, evidence=evidence, run=run)


def check(ctx: EvalContext, text: str) -> tuple[Status, str]:
    verdict = evaluate_one(text, ctx)
    return verdict.status, verdict.message


@pytest.mark.parametrize(
    ("assertion", "status", "message"),
    [
        ("type: delegation_occurred\nto_agent: reviewer", Status.FAIL,
         f"no delegation in run {RUN} (expected 'reviewer'): {REFUSED}"),
        ("type: tool_was_called\ntool: sessions_spawn", Status.FAIL,
         f"tool 'sessions_spawn' not called in run {RUN}: {REFUSED}; no tools called"),
        # The attempt ran nothing: not a call of the tool, and the message says it was tried.
        ("type: tool_not_called\ntool: sessions_spawn", Status.PASS,
         f"tool 'sessions_spawn' not called in run {RUN} (0 tool calls seen; {REFUSED})"),
        ("type: tool_not_permitted\nallowed_tools: [write]", Status.PASS,
         f"0 tool calls in run {RUN}, all allowed; {REFUSED}"),
        ("type: tool_not_permitted\nallowed_tools: [sessions_spawn]", Status.PASS,
         f"0 tool calls in run {RUN}, all allowed"),
    ],
)  # fmt: skip
def test_a_refused_spawn_is_not_a_call_and_the_verdicts_say_so(
    tmp_path: Path, assertion: str, status: Status, message: str
) -> None:
    assert check(context(tmp_path, "2026.9.6"), assertion) == (status, message)


@pytest.mark.parametrize(
    ("assertion", "status", "message"),
    [
        ("type: delegation_occurred\nto_agent: reviewer", Status.PASS,
         f"run {RUN} delegated to 'reviewer'"),
        ("type: tool_was_called\ntool: sessions_spawn", Status.PASS,
         f"tool 'sessions_spawn' called 1 time in run {RUN}"),
        ("type: tool_not_called\ntool: sessions_spawn", Status.FAIL,
         f"tool 'sessions_spawn' called 1 time in run {RUN}"),
    ],
)  # fmt: skip
def test_the_same_run_on_the_release_that_spawns(
    tmp_path: Path, assertion: str, status: Status, message: str
) -> None:
    assert check(context(tmp_path, "2026.9.5"), assertion) == (status, message)


def test_without_plugin_records_the_refused_spawn_is_waited_for(tmp_path: Path) -> None:
    """No plugin output: the log alone holds the call, and the child it would have started is
    still missing when the wait ends (what ClawSpec reported before it read the answers)."""
    status, message = check(
        context(tmp_path, "2026.9.6", plugin=False), "type: delegation_occurred\nto_agent: reviewer"
    )
    assert status == Status.ERROR and "never started" in message, message


@pytest.mark.parametrize(
    ("assertion", "status", "message"),
    [
        ("type: tool_was_called\ntool: write", Status.FAIL,
         f"tool 'write' not called in run {RUN}: {BLOCKED}; no tools called"),
        ("type: tool_not_called\ntool: write", Status.PASS,
         f"tool 'write' not called in run {RUN} (0 tool calls seen; {BLOCKED})"),
    ],
)  # fmt: skip
def test_a_call_a_plugin_blocked_is_not_a_call_either(
    tmp_path: Path, assertion: str, status: Status, message: str
) -> None:
    assert check(context(tmp_path, "blocked"), assertion) == (status, message)
