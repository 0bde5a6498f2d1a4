"""Log-based behavioral assertions on recorded real gateway logs."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.evidence.log import LOG_NOT_FOUND_FIX
from clawspec.evidence.store import Evidence
from clawspec.gateway.logs.index import LogIndex
from clawspec.gateway.plugin_records import TokenUsage
from tests.support.harness import evaluate_one, make_context

FIXTURES = Path(__file__).parents[1] / "gateway" / "fixtures"
RUN_ID = "testrun0000000001"
HOOK_RUN = {
    "w1": "d2817338-ee65-4634-a81a-ae6a811a050a",
    "s1": "11376b34-406b-4790-9499-7c74083581c4",
    "f1": "90f4cc09-7ca4-4676-a852-f4eff1e6e985",
}
HINT = "run lines need logging.level: debug"


@pytest.fixture(autouse=True)
def _short_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recorded logs are complete: late lines are waited for only briefly.
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 0.1)


def context(workspace: Path, run: str = "s1", *, log: str = "openclaw-real.log", plugin=True):
    """A scenario context whose run is the recorded hook run `run`."""
    log_path = workspace / "openclaw.log"
    if (FIXTURES / log).exists():
        shutil.copy(FIXTURES / log, log_path)
    plugin_path = workspace / "plugin.jsonl"
    if plugin:
        shutil.copy(FIXTURES / "plugin-real.jsonl", plugin_path)
    evidence = Evidence(requests.Session(), log_path, 0, plugin_path if plugin else None, 0)
    info = RunInfo(
        "test",
        RUN_ID,
        datetime.now(UTC),
        session_key=f"hook:clawspec:{run}",
        gateway_run_id=HOOK_RUN.get(run, "gw-unknown"),
    )
    return make_context(workspace, evidence=evidence, run=info)


def check(ctx, text: str) -> tuple[Status, str]:
    verdict = evaluate_one(text, ctx)
    return verdict.status, verdict.message


@pytest.mark.parametrize(
    ("assertion", "status", "message"),
    [
        ("type: tool_was_called\ntool: sessions_spawn", Status.PASS,
         f"tool 'sessions_spawn' called 1 time in run {RUN_ID}"),
        ("type: tool_was_called\ntool: write", Status.PASS,
         f"tool 'write' called 1 time in run {RUN_ID}"),
        ("type: tool_was_called\ntool: Write", Status.FAIL,
         f"tool 'Write' not called in run {RUN_ID}; tools called: 'sessions_spawn' (1), "
         "'write' (1)"),
        ("type: tool_not_called\ntool: exec", Status.PASS,
         f"tool 'exec' not called in run {RUN_ID} (2 tool calls seen)"),
        ("type: tool_not_called\ntool: write", Status.FAIL,
         f"tool 'write' called 1 time in run {RUN_ID}"),
        ("type: tool_not_permitted\nallowed_tools: [sessions_spawn, write, read]", Status.PASS,
         f"2 tool calls in run {RUN_ID}, all allowed"),
        ("type: tool_not_permitted\nallowed_tools: [read]", Status.FAIL,
         f"forbidden tools called in run {RUN_ID}: 'sessions_spawn' (1), 'write' (1)"),
        ("type: delegation_occurred\nto_agent: main", Status.PASS,
         f"run {RUN_ID} delegated to 'main'"),
        ("type: delegation_occurred\nto_agent: Main", Status.FAIL,
         f"no delegation to 'Main' in run {RUN_ID}; delegated to: 'main'"),
        ("type: token_budget\nmax_total_tokens: 1768\nmax_output_tokens: 58", Status.PASS,
         "total tokens 1,768 ≤ 1,768; output tokens 58 ≤ 58"
         " (from 4 model calls in the plugin's events)"),
        ("type: token_budget\nmax_total_tokens: 1000\nmax_input_tokens: 1710", Status.FAIL,
         "total tokens 1,768 > 1,000 (from 4 model calls in the plugin's events)"),
        ("type: token_budget\nmax_total_tokens: 1000\nmax_input_tokens: 1000", Status.FAIL,
         "total tokens 1,768 > 1,000; input tokens 1,710 > 1,000"
         " (from 4 model calls in the plugin's events)"),
    ],
)  # fmt: skip
def test_delegating_run(workspace: Path, assertion: str, status: Status, message: str) -> None:
    assert check(context(workspace), assertion) == (status, message)


def test_no_delegation_and_no_tools(workspace: Path) -> None:
    ctx = context(workspace, "f1")
    assert check(ctx, "type: delegation_occurred\nto_agent: main") == (
        Status.FAIL,
        f"no delegation in run {RUN_ID} (expected 'main')",
    )
    assert check(ctx, "type: tool_was_called\ntool: write") == (
        Status.FAIL,
        f"tool 'write' not called in run {RUN_ID}; no tools called",
    )


def test_token_budget_measured_values_and_limits(workspace: Path) -> None:
    verdict = evaluate_one("type: token_budget\nmax_total_tokens: 2000", context(workspace, "w1"))
    assert verdict.status == Status.FAIL
    assert verdict.message.startswith("total tokens 2,157 > 2,000 (from ")
    assert verdict.value == {"input": 2100, "output": 57, "total": 2157}
    assert verdict.limit == {"total": 2000}


def test_token_budget_skips_without_usage_records(workspace: Path) -> None:
    ctx = context(workspace, "w1", plugin=False)
    assert check(ctx, "type: token_budget\nmax_total_tokens: 10") == (
        Status.SKIP,
        f"no token usage records for run {RUN_ID} (no plugin output configured; "
        "the log has no token fields)",
    )


def test_token_budget_of_a_conversation_counts_its_chat_responses_when_nothing_else_does(
    workspace: Path,
) -> None:
    from dataclasses import replace

    from clawspec.evidence.context import Exchange

    ctx = context(workspace, "w1", plugin=False)
    said = (Exchange(0, "hi", "hello", (100, 10, 110)), Exchange(1, "more", "sure", (120, 5, 125)))
    ctx.run = replace(ctx.run, transcript=said)
    assert check(ctx, "type: token_budget\nmax_total_tokens: 200") == (
        Status.FAIL,
        "total tokens 235 > 200 (from 2 chat responses)",
    )
    # A turn that answered without its usage: the responses cannot count the whole.
    ctx = context(workspace, "w1", plugin=False)
    ctx.run = replace(ctx.run, transcript=(said[0], Exchange(1, "more", "sure", None)))
    assert check(ctx, "type: token_budget\nmax_total_tokens: 200")[0] == Status.SKIP


def test_token_budget_of_a_conversation_needs_no_readable_log(workspace: Path) -> None:
    """The chat responses count a conversation's usage without the gateway log: a log that is
    not there is no error then; with neither, the log's problem is the verdict."""
    from dataclasses import replace

    from clawspec.evidence.context import Exchange

    ctx = context(workspace, "w1", log="no-such.log", plugin=False)
    said = (Exchange(0, "hi", "hello", (100, 10, 110)), Exchange(1, "more", "sure", (120, 5, 125)))
    ctx.run = replace(ctx.run, transcript=said)
    assert check(ctx, "type: token_budget\nmax_total_tokens: 300") == (
        Status.PASS,
        "total tokens 235 ≤ 300 (from 2 chat responses)",
    )
    ctx = context(workspace, "w1", log="no-such.log", plugin=False)
    status, message = check(ctx, "type: token_budget\nmax_total_tokens: 300")
    assert status == Status.ERROR
    assert message == f"gateway log '{workspace / 'openclaw.log'}' not found: {LOG_NOT_FOUND_FIX}"


def test_token_budget_skips_when_plugin_has_no_record_of_the_run(workspace: Path) -> None:
    ctx = context(workspace, "w1")
    (workspace / "plugin.jsonl").write_text('{"v":1,"kind":"plugin"}\n', encoding="utf-8")
    status, message = check(ctx, "type: token_budget\nmax_total_tokens: 10")
    assert status == Status.SKIP
    assert message.startswith(f"no token usage records for run {RUN_ID} (none in plugin output")


ALL_LOG_ASSERTIONS = [
    "type: tool_was_called\ntool: write",
    "type: tool_not_called\ntool: exec",
    "type: tool_not_permitted\nallowed_tools: [write]",
    "type: delegation_occurred\nto_agent: main",
    "type: token_budget\nmax_total_tokens: 10",
]


@pytest.mark.parametrize("assertion", ALL_LOG_ASSERTIONS)
def test_run_not_in_log_is_error_even_for_negative_assertions(
    workspace: Path, assertion: str
) -> None:
    ctx = context(workspace, "nope")
    path = workspace / "openclaw.log"
    status, message = check(ctx, assertion)
    assert status == Status.ERROR
    # Other runs' debug lines are there: not a logging-level problem, a run not logged (yet).
    assert re.fullmatch(
        re.escape(f"run {RUN_ID} not found in gateway log '{path}' after waiting ")
        + r"\d+\.\d s "
        + re.escape(
            f"(looked for run id '{RUN_ID}' or 'gw-unknown', session key 'hook:clawspec:nope'; "
            "saw 475 lines written since the run started, 15 runs started; the gateway had "
            "not logged this run yet: raise the scenario's `timeout`)"
        ),
        message,
    ), message


def test_run_not_found_says_debug_lines_are_missing_only_when_they_are(workspace: Path) -> None:
    # No run-start line of any run and no completion of this one (test_log_debug_off.py has
    # the logs where its completion is there).
    info_only = [
        line
        for line in (FIXTURES / "openclaw-real.log").read_text().splitlines(keepends=True)
        if "embedded run" not in line and HOOK_RUN["s1"] not in line
    ]
    (workspace / "info.log").write_text("".join(info_only))
    ctx = context(workspace, "s1", log="info.log")
    shutil.copy(workspace / "info.log", workspace / "openclaw.log")
    status, message = check(ctx, "type: tool_not_called\ntool: exec")
    assert status == Status.ERROR
    assert message.endswith(f"0 runs started; {HINT})"), message


def test_run_not_found_in_an_empty_log_asks_whether_it_is_the_gateways(workspace: Path) -> None:
    (workspace / "openclaw.log").write_text("")
    ctx = context(workspace, "s1", log="none.log")
    status, message = check(ctx, "type: tool_not_called\ntool: exec")
    assert status == Status.ERROR
    assert "saw 0 lines written since the run started" in message
    assert message.endswith("is this the log the gateway writes? (gateway_log_pattern))"), message


@pytest.mark.parametrize("assertion", ALL_LOG_ASSERTIONS)
def test_missing_log_is_error(workspace: Path, assertion: str) -> None:
    ctx = context(workspace, log="no-such.log")
    assert check(ctx, assertion) == (
        Status.ERROR,
        f"gateway log '{workspace / 'openclaw.log'}' not found: {LOG_NOT_FOUND_FIX}",
    )


def test_legacy_log_through_log_path_and_explicit_run_id(workspace: Path) -> None:
    shutil.copy(FIXTURES / "log-legacy.log", workspace / "legacy.log")
    ctx = context(workspace, "w1", plugin=False)
    base = "log_path: legacy.log\nrun_id: abc\n"
    assert check(ctx, base + "type: tool_was_called\ntool: resend.send") == (
        Status.PASS,
        "tool 'resend.send' called 1 time in run abc",
    )
    assert check(ctx, base + "type: tool_not_called\ntool: exec") == (
        Status.PASS,
        "tool 'exec' not called in run abc (2 tool calls seen)",
    )
    assert check(ctx, base + "type: delegation_occurred\nto_agent: agents-marketing-brand")[0] == (
        Status.PASS
    )
    assert check(ctx, base + "type: token_budget\nmax_total_tokens: 2450") == (
        Status.PASS,
        "total tokens 2,450 ≤ 2,450 (from 2 log usage lines)",
    )
    assert check(ctx, base + "type: token_budget\nmax_output_tokens: 400") == (
        Status.FAIL,
        "output tokens 450 > 400 (from 2 log usage lines)",
    )


def test_run_id_template_value_selects_this_run(workspace: Path) -> None:
    ctx = context(workspace, "s1")
    assert check(ctx, f"type: tool_was_called\ntool: write\nrun_id: '{RUN_ID}'")[0] == Status.PASS
    gateway = HOOK_RUN["s1"]
    assert check(ctx, f"type: tool_was_called\ntool: write\nrun_id: '{gateway}'") == (
        Status.PASS,
        f"tool 'write' called 1 time in run {RUN_ID}",
    )


def test_log_is_indexed_once_per_run(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(workspace, "s1")
    builds = []
    original = LogIndex.build

    def counting(*args, **kwargs):
        builds.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(LogIndex, "build", counting)
    for assertion in ALL_LOG_ASSERTIONS:
        evaluate_one(assertion, ctx)
    assert len(builds) == 1


def test_active_log_is_read_from_the_run_offset(workspace: Path) -> None:
    ctx = context(workspace, "w1")
    ctx.evidence.log_offset = (workspace / "openclaw.log").stat().st_size // 2  # after w1 ran
    assert check(ctx, "type: tool_was_called\ntool: write")[0] == Status.ERROR


def test_usage_prefers_plugin_over_log(workspace: Path) -> None:
    ctx = context(workspace, "s1")
    from clawspec.evidence.log import RunLog

    assert RunLog.load(ctx, None, None).token_usage(ctx) == (
        TokenUsage(1710, 58, 1768, 4),
        "model call",
    )


@pytest.mark.parametrize(
    ("pattern", "status", "message"),
    [
        ("tool=sessions_spawn", Status.PASS,
         f"line 134 of 'openclaw.log' matches 'tool=sessions_spawn' in run {RUN_ID}"),
        ("call_slow-a", Status.FAIL,
         f"no line of run {RUN_ID} in 'openclaw.log' matches 'call_slow-a' (75 lines of the run)"),
    ],
)  # fmt: skip
def test_run_scoped_log_entry(workspace: Path, pattern: str, status: Status, message: str) -> None:
    ctx = context(workspace, "s1")
    text = f"type: log_entry\npath: openclaw.log\npattern: '{pattern}'\nrun_id: '{RUN_ID}'"
    assert check(ctx, text) == (status, message)


def test_run_scoped_log_entry_missing_file_is_error(workspace: Path) -> None:
    ctx = context(workspace, "s1")
    text = f"type: log_entry\npath: other.log\npattern: x\nrun_id: '{RUN_ID}'"
    assert check(ctx, text) == (Status.ERROR, f"log '{workspace / 'other.log'}' not found")


def test_run_scoped_log_entry_run_not_found_is_error(workspace: Path) -> None:
    ctx = context(workspace, "nope")
    text = f"type: log_entry\npath: openclaw.log\npattern: x\nrun_id: '{RUN_ID}'"
    status, message = check(ctx, text)
    assert status == Status.ERROR
    assert message.startswith(f"run {RUN_ID} not found in log ")
    assert message.endswith("had not logged this run yet: raise the scenario's `timeout`)")


def test_run_not_found_in_another_log_does_not_call_its_old_lines_new(workspace: Path) -> None:
    # Only the active gateway log has an offset from the run's start: another log is read from
    # its start, and the message must not say its lines were written during the run.
    ctx = context(workspace, "nope")
    shutil.copy(FIXTURES / "openclaw-real.log", workspace / "other.log")
    text = f"type: log_entry\npath: other.log\npattern: x\nrun_id: '{RUN_ID}'"
    status, message = check(ctx, text)
    assert status == Status.ERROR
    assert "saw 475 lines read (this log has no offset from the run's start: older lines " in (
        message
    )
    assert "since the run started" not in message


def test_plain_log_entry_missing_file_still_fails(workspace: Path) -> None:
    ctx = context(workspace, "s1")
    assert check(ctx, "type: log_entry\npath: other.log\npattern: x") == (
        Status.FAIL,
        "log 'other.log' not found",
    )


def test_a_line_longer_than_a_block_is_never_a_silent_fail(tmp_path: Path) -> None:
    """A log line over 4 MiB is counted, not searched: the marker in it is not found, and the
    verdict says so (`error`), never "no line matches" as if the whole log was read."""
    log = tmp_path / "five.log"
    log.write_bytes(
        b"first\n" + b'{"message":"FIVE-MB-MARKER ' + b"q" * (5 * 1024 * 1024) + b'"}\nlast\n'
    )
    ctx = make_context(tmp_path)
    verdict = evaluate_one({"type": "log_entry", "path": "five.log", "pattern": "MARKER"}, ctx)
    assert verdict.status is Status.ERROR
    assert verdict.message == (
        "no line of 'five.log' matches 'MARKER' (3 lines read), but 1 line longer than 4 MiB "
        "was not searched (lines that long are counted, not read)"
    )
    found = evaluate_one({"type": "log_entry", "path": "five.log", "pattern": "last"}, ctx)
    assert found.status is Status.PASS  # what is searched still decides
