"""Log assertions on a real OpenClaw 2026.9.6 log with Tool Search on (its default).

The fixture is the gateway log of one hook run (session key `hook:clawspec:abc123`) whose model
called `tool_call {id: sessions_spawn}` and then `write`; the spawned `reviewer` sub-agent called
`tool_call {id: write}`. Cut short, the same log is what ClawSpec sees when the child starts late:
never started (cut before its `embedded run start`), or started and not finished.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.evidence.store import Evidence
from tests.support.harness import evaluate_one, make_context

FIXTURE = Path(__file__).parents[1] / "gateway" / "fixtures" / "openclaw-toolsearch.log"
HOOK_RUN = "2f77a8d5-ce92-4594-929d-fef4d9a5fc7e"
CHILD_RUN = "1ec27ecf-6e63-4273-addf-ea7558c77561"
LINES = FIXTURE.read_text().splitlines(keepends=True)
CHILD_START = next(i for i, line in enumerate(LINES) if f"run start: runId={CHILD_RUN}" in line)
CHILD_DONE = next(i for i, line in enumerate(LINES) if f"run done: runId={CHILD_RUN}" in line)


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # A cut log never grows: the late child is waited for briefly, then reported.
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 0.2)


def context(workspace: Path, lines: list[str]) -> EvalContext:
    log = workspace / "openclaw.log"
    log.write_text("".join(lines))
    evidence = Evidence(requests.Session(), log, 0, None, 0)
    run = RunInfo(
        "tool-search", "clawspecrun00001", datetime.now(UTC),
        session_key="hook:clawspec:abc123", gateway_run_id=HOOK_RUN,
    )  # fmt: skip
    return make_context(workspace, evidence=evidence, run=run)


def check(ctx: EvalContext, text: str) -> tuple[Status, str]:
    verdict = evaluate_one(text, ctx)
    return verdict.status, verdict.message


@pytest.mark.parametrize(
    ("assertion", "status", "message"),
    [
        # The wrapper counts as the tool it called: sessions_spawn and write, not 'tool_call'.
        ("type: tool_not_permitted\nallowed_tools: [sessions_spawn, write]", Status.PASS,
         "3 tool calls in run clawspecrun00001, all allowed"),
        ("type: tool_not_permitted\nallowed_tools: [write]", Status.FAIL,
         "forbidden tools called in run clawspecrun00001: 'sessions_spawn' (1)"),
        ("type: tool_was_called\ntool: sessions_spawn", Status.PASS,
         "tool 'sessions_spawn' called 1 time in run clawspecrun00001"),
        ("type: tool_was_called\ntool: write", Status.PASS,
         "tool 'write' called 2 times in run clawspecrun00001"),
        ("type: tool_not_called\ntool: exec", Status.PASS,
         "tool 'exec' not called in run clawspecrun00001 (3 tool calls seen)"),
        ("type: tool_not_called\ntool: sessions_spawn", Status.FAIL,
         "tool 'sessions_spawn' called 1 time in run clawspecrun00001"),
        ("type: delegation_occurred\nto_agent: reviewer", Status.PASS,
         "run clawspecrun00001 delegated to 'reviewer'"),
        # Tool Search's own controls are there when asked for by name.
        ("type: tool_was_called\ntool: tool_call", Status.PASS,
         "tool 'tool_call' called 2 times in run clawspecrun00001"),
        ("type: tool_not_called\ntool: tool_search", Status.PASS,
         "tool 'tool_search' not called in run clawspecrun00001 (3 tool calls seen)"),
    ],
)  # fmt: skip
def test_tool_search_wrappers_count_as_the_tools_they_call(
    tmp_path: Path, assertion: str, status: Status, message: str
) -> None:
    assert check(context(tmp_path, LINES), assertion) == (status, message)


# Verdicts the child's lines could still change: passes of negative assertions, fails of
# positive ones. (token_budget needs plugin records, which this log has none of: it skips.)
UNDECIDED = [
    "type: tool_not_called\ntool: exec",
    "type: tool_not_permitted\nallowed_tools: [sessions_spawn, write]",
    "type: tool_was_called\ntool: exec",
    "type: log_entry\npath: openclaw.log\npattern: never-logged\nrun_id: clawspecrun00001",
]


@pytest.mark.parametrize("assertion", [*UNDECIDED, "type: delegation_occurred\nto_agent: reviewer"])
def test_a_spawned_child_that_never_started_makes_undecided_verdicts_errors(
    tmp_path: Path, assertion: str
) -> None:
    status, message = check(context(tmp_path, LINES[:CHILD_START]), assertion)
    assert status == Status.ERROR, message
    assert "but the run's log is incomplete after waiting" in message
    assert "sub-agent spawned at 2026-11-25T13:39:41.034+00:00 by run " in message
    assert message.endswith(
        "never started (the wait follows the scenario's timeout of 60 s; raise `timeout` if the "
        "gateway is slow)"
    )


@pytest.mark.parametrize("assertion", UNDECIDED)
def test_a_child_that_started_but_did_not_finish_makes_undecided_verdicts_errors(
    tmp_path: Path, assertion: str
) -> None:
    status, message = check(context(tmp_path, LINES[:CHILD_DONE]), assertion)
    assert status == Status.ERROR, message
    assert f"sub-agent run {CHILD_RUN} (agent 'reviewer', started at line " in message
    assert "did not finish" in message


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        ("type: tool_was_called\ntool: sessions_spawn", Status.PASS),  # found: final
        ("type: tool_not_called\ntool: sessions_spawn", Status.FAIL),  # found: final
        ("type: tool_not_permitted\nallowed_tools: [write]", Status.FAIL),
        ("type: delegation_occurred\nto_agent: reviewer", Status.PASS),  # started: delegated
    ],
)
def test_verdicts_more_lines_cannot_change_stand_while_a_child_is_pending(
    tmp_path: Path, assertion: str, status: Status
) -> None:
    cut = CHILD_DONE if "delegation" in assertion else CHILD_START
    assert check(context(tmp_path, LINES[:cut]), assertion)[0] == status
