"""A gateway logging at info level writes only a run's `gateway/hooks` completion: the log
assertions say so as soon as that completion is read, instead of waiting out the timeout.

The logs are the recorded real gateway log cut to what OpenClaw writes at info level (its lines
with `_meta.logLevelId` ≥ 3). The scenario's timeout is 600 s on a fake clock that only the
index's pauses move: a wait that is not cut short by the completion shows as pauses (and, on
the real clock, would hang the test), so the tests count them instead of timing anything.
"""

from __future__ import annotations

import json
import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.evidence.store import Evidence
from tests.support.harness import evaluate_one, make_context

FIXTURES = Path(__file__).parents[1] / "gateway" / "fixtures"
REAL_LOG = FIXTURES / "openclaw-real.log"
RUN_ID = "testrun0000000001"
S1_HOOK_RUN = "11376b34-406b-4790-9499-7c74083581c4"  # the recorded run of `hook:clawspec:s1`
S1_SESSION = "1ceef948-c13f-4c34-80d4-e8ea02d69de4"
W1_COMPLETION_LINE = 80  # the first run's completion: the recording's lines up to it

LOG_ASSERTIONS = [
    "type: tool_was_called\ntool: write",
    "type: tool_not_called\ntool: exec",
    "type: tool_not_permitted\nallowed_tools: [write]",
    "type: delegation_occurred\nto_agent: main",
    "type: token_budget\nmax_total_tokens: 10",
    f"type: log_entry\npath: openclaw.log\npattern: tool=write\nrun_id: '{RUN_ID}'",
]
DEBUG_OFF = (
    f"run {RUN_ID} not found in KIND 'PATH': the gateway logged its completion "
    f"(gateway/hooks run {S1_HOOK_RUN}, status ok) but no debug line of it: run lines need "
    "logging.level: debug (at info level the gateway logs only the completion); set "
    '`logging: { level: "debug" }` in the gateway\'s OpenClaw config (openclaw.json; '
    "`clawspec run --bring-up` sets it)"
)


class FakeTime(threading.Event):
    """A stop event whose waits return at once and move the clock by what they waited."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None, "an evidence wait without a bound"
        self.pauses.append(timeout)
        self.now += timeout
        return self.is_set()


def info_level(lines: list[str]) -> list[str]:
    """The lines OpenClaw writes with `logging.level: info` (tslog level id 3 and above)."""
    return [line for line in lines if json.loads(line)["_meta"]["logLevelId"] >= 3]


def recorded() -> list[str]:
    return REAL_LOG.read_text(encoding="utf-8").splitlines(keepends=True)


def context(workspace: Path, lines: list[str], time: FakeTime) -> EvalContext:
    """The scenario of the recorded run `s1`, with a 600 s timeout on the fake clock."""
    log = workspace / "openclaw.log"
    log.write_text("".join(lines), encoding="utf-8")
    shutil.copy(FIXTURES / "plugin-real.jsonl", workspace / "plugin.jsonl")
    evidence = Evidence(requests.Session(), log, 0, workspace / "plugin.jsonl", 0)
    run = RunInfo(
        "test", RUN_ID, datetime.now(UTC), session_key="hook:clawspec:s1",
        gateway_run_id=S1_HOOK_RUN,
    )  # fmt: skip
    ctx = make_context(workspace, evidence=evidence, run=run)
    ctx.stop, ctx.clock = time, time.clock
    ctx.timeout_s = 600.0
    ctx.started_clock = time.now
    return ctx


def expected(assertion: str, path: Path) -> str:
    kind = "log" if assertion.startswith("type: log_entry") else "gateway log"
    return DEBUG_OFF.replace("KIND", kind).replace("PATH", str(path))


@pytest.mark.parametrize("assertion", LOG_ASSERTIONS)
def test_info_level_log_gives_the_debug_verdict_at_the_completion(
    workspace: Path, assertion: str
) -> None:
    time = FakeTime()
    ctx = context(workspace, info_level(recorded()), time)
    verdict = evaluate_one(assertion, ctx)
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        expected(assertion, workspace / "openclaw.log"),
    )
    assert time.pauses == []  # the completion was in the log: nothing left to wait for


@pytest.mark.parametrize("assertion", LOG_ASSERTIONS)
def test_info_level_after_other_runs_debug_lines_is_not_called_a_slow_gateway(
    workspace: Path, assertion: str
) -> None:
    # The log starts with a debug-level session (a run start of another run is in the slice),
    # then the gateway logs at info level: the completion still settles it, with no wait.
    lines = recorded()
    mixed = lines[:W1_COMPLETION_LINE] + info_level(lines[W1_COMPLETION_LINE:])
    time = FakeTime()
    ctx = context(workspace, mixed, time)
    verdict = evaluate_one(assertion, ctx)
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        expected(assertion, workspace / "openclaw.log"),
    )
    assert time.pauses == []


def test_completion_alone_written_late_ends_the_wait_when_it_arrives(workspace: Path) -> None:
    # Nothing of the run yet: the index polls; the gateway then writes the completion (and
    # another run's start, so the no-run-lines grace does not end the wait) and it ends there.
    lines = recorded()
    completion = next(line for line in info_level(lines) if S1_HOOK_RUN in line)
    other_start = next(line for line in lines[:W1_COMPLETION_LINE] if "embedded run start" in line)
    time = FakeTime()
    ctx = context(workspace, [], time)
    log = workspace / "openclaw.log"
    wait = time.wait

    def gateway_writes_then_wait(timeout: float | None = None) -> bool:
        if len(time.pauses) == 3:
            with log.open("a", encoding="utf-8") as handle:
                handle.write(other_start + completion)
        return wait(timeout)

    time.wait = gateway_writes_then_wait  # type: ignore[method-assign]
    verdict = evaluate_one("type: tool_not_called\ntool: exec", ctx)
    assert (verdict.status, verdict.message) == (
        Status.ERROR,
        expected("type: tool_not_called", log),
    )
    assert len(time.pauses) == 4  # the three empty polls, the one before the completion was read


def test_completion_with_debug_lines_but_no_run_start_is_not_blamed_on_the_level(
    workspace: Path,
) -> None:
    # Debug logging on, but no `embedded run start` of the run's session: its request's debug
    # lines are there, so the message says the run never started one, without any wait.
    lines = [line for line in recorded() if not ("embedded run" in line and S1_SESSION in line)]
    time = FakeTime()
    ctx = context(workspace, lines, time)
    verdict = evaluate_one("type: tool_was_called\ntool: write", ctx)
    assert verdict.status == Status.ERROR
    assert verdict.message.startswith(
        f"run {RUN_ID} not found in gateway log '{workspace / 'openclaw.log'}': the gateway "
        f"logged its completion (gateway/hooks run {S1_HOOK_RUN}, status ok) and "
    )
    assert verdict.message.endswith(
        f"debug lines of its request, but no `embedded run start` line of session {S1_SESSION}: "
        "the run ended before an agent run started"
    ), verdict.message
    assert "logging.level" not in verdict.message
    assert time.pauses == []


def refused_attempt(completion: str) -> str:
    """The completion OpenClaw logs for a hook request it refused before any run started (its
    agent store not ready yet, right after start-up): same session key, another hook run id."""
    entry = json.loads(completion)
    entry["1"] = {
        "runId": "0f0f0f0f-0000-4000-8000-000000000001",
        "sourcePath": "/hooks/agent",
        "name": "explore",
        "agentId": "main",
        "logicalSessionKey": "hook:clawspec:s1",
        "status": "error",
        "deliver": False,
        "summary": "SessionMetadataUnavailableError: Session metadata unavailable "
        "(schema-missing); retry after the agent store is ready.",
    }
    entry["2"] = "hook agent run completed runId=0f0f0f0f-0000-4000-8000-000000000001 status=error"
    return json.dumps(entry) + "\n"


@pytest.mark.parametrize("assertion", LOG_ASSERTIONS[:4])
def test_a_refused_attempt_before_the_retried_run_is_not_the_run(
    workspace: Path, assertion: str
) -> None:
    # ClawSpec retried the refused request; the run that ran is the gateway's hook run id it
    # got back. The refused attempt's completion, logged first for the same session key, must
    # neither settle the wait nor be taken for a run without debug lines: the run's own
    # completion, flushed just after the hook answered, is read on a later poll.
    lines = recorded()
    at = next(i for i, line in enumerate(lines) if S1_HOOK_RUN in line and "gateway/hooks" in line)
    time = FakeTime()
    ctx = context(workspace, [refused_attempt(lines[at]), *lines[:at]], time)
    log = workspace / "openclaw.log"
    wait = time.wait

    def gateway_flushes_then_wait(timeout: float | None = None) -> bool:
        if len(time.pauses) == 1:
            with log.open("a", encoding="utf-8") as handle:
                handle.writelines(lines[at:])
        return wait(timeout)

    time.wait = gateway_flushes_then_wait  # type: ignore[method-assign]
    verdict = evaluate_one(assertion, ctx)
    assert "not found" not in verdict.message, verdict.message
    assert verdict.status in (Status.PASS, Status.FAIL), verdict.message
    assert time.pauses  # it waited for the run's own completion
