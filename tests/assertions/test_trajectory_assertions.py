"""Run record assertions on the records kept from the real gateway (tests/gateway/data/trajectory).

A hook run's context has a gateway log of two lines (a real log's `embedded run start` and
`gateway/hooks` completion, with the recorded run's ids), which names the session its record is
looked up by, and `openclaw_state_dir` set to a copy of the recorded state folder. A
conversation's context names the recorded chat responses' ids, as the runner does. Messages
sent are judged on runs recorded through OpenClaw's Telegram channel (store `send`). Cases the
recordings do not hold (a loop in a sub-agent, a text sent without its target, a time-out, a
plugin's refusal, hostile argument values) are made by editing the copy with SQLite, in the
events' own format.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from pydantic import ValidationError

from clawspec.assertions import REGISTRY, patterns
from clawspec.assertions.base import EvalContext, RunInfo, Status
from clawspec.config.settings import Settings
from clawspec.evidence.context import Exchange
from clawspec.evidence.store import Evidence
from clawspec.gateway.trajectory.layout import store_path
from clawspec.gateway.trajectory.reader import TrajectoryReader
from clawspec.gateway.trajectory.values import Trajectory
from tests.support.harness import evaluate_one, make_context

DATA = Path(__file__).parents[1] / "gateway" / "data" / "trajectory"
REAL_LOG = Path(__file__).parents[1] / "gateway" / "fixtures" / "openclaw-real.log"
VERSIONS = ("2026.9.5", "2026.9.6")
# The ids of the real log's lines that the recorded run's ids replace.
_LOG_HOOK_RUN = "d2817338-ee65-4634-a81a-ae6a811a050a"
_LOG_JOB = "302ed264-7ae2-4ce7-a4d7-253c5cd3721f"
_LOG_SESSION = "a180acca-8b16-4a9a-9ad5-a3ebe240f9e8"
_LOG_EMBEDDED = "186d41e3-3bb0-43b1-80fa-bf11d976c9f9"
TABLE = "trajectory_runtime_events"


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recorded logs and stores are complete: late evidence is waited for only briefly.
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 0.3)


def _manifest(version: str, store: str) -> dict[str, Any]:
    return dict(json.loads((DATA / version / "manifest.json").read_text("utf-8"))["stores"][store])


def hook_line(version: str, name: str, store: str = "default") -> dict[str, str]:
    recorded = _manifest(version, store)
    run_id = recorded["hooks"][name]["runId"]
    (line,) = [line for line in recorded["hook_lines"] if line["runId"] == run_id]
    return dict(line)


def recorded(version: str, name: str, store: str = "default") -> Trajectory:
    """The recorded run as the reader reads it (from the kept store, not the copy)."""
    line = hook_line(version, name, store)
    return TrajectoryReader(DATA / version / store).hook_run("main", line["sessionKey"])


def _write_log(path: Path, hook: dict[str, str], name: str) -> None:
    lines = REAL_LOG.read_text("utf-8").splitlines()
    start = next(line for line in lines if f"runId={_LOG_EMBEDDED}" in line)
    done = next(line for line in lines if '"gateway/hooks' in line and _LOG_HOOK_RUN in line)
    swaps = {
        _LOG_HOOK_RUN: hook["runId"],
        _LOG_JOB: hook["jobId"],
        _LOG_SESSION: hook["sessionId"],
        _LOG_EMBEDDED: "e0000000-0000-4000-8000-000000000001",
        "hook:clawspec:w1": f"hook:clawspec:{name}",
    }
    text = start + "\n" + done + "\n"
    for old, new in swaps.items():
        text = text.replace(old, new)
    path.write_text(text, "utf-8")


def context(
    tmp_path: Path,
    version: str = "2026.9.6",
    name: str = "tj-write",
    *,
    store: str = "default",
    state: bool = True,
    plugin: Path | None = None,
) -> EvalContext:
    """A plain scenario's context whose run is the recorded hook run `name`."""
    state_dir = tmp_path / "state"
    if not state_dir.exists():
        shutil.copytree(DATA / version / store, state_dir)
    log = tmp_path / "openclaw.log"
    hook = hook_line(version, name, store)
    _write_log(log, hook, name)
    settings = Settings(openclaw_state_dir=str(state_dir)) if state else Settings()
    info = RunInfo(
        "test",
        "testrun0000000001",
        datetime(2026, 11, 1, tzinfo=UTC),
        session_key=f"hook:clawspec:{name}",
        gateway_run_id=hook["runId"],
    )
    evidence = Evidence(requests.Session(), log, 0, plugin, 0)
    return make_context(tmp_path, settings, evidence=evidence, run=info)


def conversation(tmp_path: Path, version: str = "2026.9.6") -> EvalContext:
    """The context of a recorded conversation's scenario-level `then`: both turns' runs."""
    state_dir = tmp_path / "state"
    if not state_dir.exists():
        shutil.copytree(DATA / version / "default", state_dir)
    talk = _manifest(version, "default")["conversation"]
    turns = talk["turns"]
    info = RunInfo(
        "talk",
        "testrun0000000002",
        datetime(2026, 11, 1, tzinfo=UTC),
        session_key=talk["session_key"],
        agent_id="main",
        chat_run_ids=tuple(t["id"] for t in turns),
        transcript=tuple(
            Exchange(i, say, t["reply"])
            for i, (say, t) in enumerate(
                zip(["My name is Zed.", "What is my name?"], turns, strict=True)
            )
        ),
    )
    settings = Settings(openclaw_state_dir=str(state_dir))
    return make_context(tmp_path, settings, run=info)


def check(ctx: EvalContext, assertion: dict[str, Any]) -> tuple[Status, str]:
    verdict = evaluate_one(assertion, ctx)
    return verdict.status, verdict.message


# --- editing a copied store in the events' own format --------------------------------------------


def _events(
    db: sqlite3.Connection, session_id: str
) -> list[tuple[int, str | None, dict[str, Any], int]]:
    rows = db.execute(
        f"SELECT seq, run_id, event_json, created_at FROM {TABLE}"
        " WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ).fetchall()
    return [(seq, run_id, json.loads(raw), created) for seq, run_id, raw, created in rows]


def _rewrite(
    db: sqlite3.Connection, session_id: str, rows: list[tuple[str | None, dict[str, Any], int]]
) -> None:
    # One transaction: committed row by row, thousands of rows wait on as many syncs.
    db.execute("BEGIN")
    db.execute(f"DELETE FROM {TABLE} WHERE session_id = ?", (session_id,))
    for seq, (run_id, event, created) in enumerate(rows):
        event["seq"] = event["sourceSeq"] = seq + 1
        db.execute(
            f"INSERT INTO {TABLE} (session_id, seq, run_id, event_json, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (session_id, seq, run_id, json.dumps(event), created),
        )
    db.execute("COMMIT")


Call = tuple[str, Any, bool, str]  # name, args, success, the answer's text


def add_calls(
    state: Path, agent: str, session_id: str, calls: list[Call], *, at: str = "start"
) -> None:
    """Add tool.call/tool.result pairs to the run of `session_id`, before its first recorded
    call (`at="start"`) or after its last result (`"end"`), shaped like its own events."""
    db = sqlite3.connect(store_path(state, agent), isolation_level=None)
    try:
        rows = _events(db, session_id)
        kinds = [event["type"] for _, _, event, _ in rows]
        first = kinds.index("tool.call")
        last = len(kinds) - 1 - kinds[::-1].index("tool.result")
        call_row, result_row = rows[first], rows[kinds.index("tool.result")]
        added: list[tuple[str | None, dict[str, Any], int]] = []
        for n, (name, args, success, text) in enumerate(calls):
            call_id = f"call_added_{at}_{n}"
            call = {**call_row[2], "data": {"toolCallId": call_id, "name": name, "args": args}}
            result = {
                **result_row[2],
                "data": {
                    "toolCallId": call_id,
                    "name": name,
                    "success": success,
                    "result": {"content": [{"type": "text", "text": text}]},
                },
            }
            added += [(call_row[1], call, call_row[3]), (result_row[1], result, result_row[3])]
        kept = [(run_id, event, created) for _, run_id, event, created in rows]
        where = first if at == "start" else last + 1
        _rewrite(db, session_id, kept[:where] + added + kept[where:])
    finally:
        db.close()


def edit_events(
    state: Path,
    agent: str,
    session_id: str,
    kind: str,
    change: Callable[[dict[str, Any]], dict[str, Any] | None],
) -> None:
    """Apply `change` to the data of the run's `kind` events (None from it: drop the event)."""
    db = sqlite3.connect(store_path(state, agent), isolation_level=None)
    try:
        rows = []
        for _, run_id, event, created in _events(db, session_id):
            if event["type"] == kind:
                data = change(event["data"])
                if data is None:
                    continue
                event["data"] = data
            rows.append((run_id, event, created))
        _rewrite(db, session_id, rows)
    finally:
        db.close()


def _set(**fields: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: {**data, **fields}


# --- tool_called_with ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("args", "extra", "status"),
    [
        ({"path": "notes.md"}, {}, Status.PASS),
        (
            {"path": {"matches": r"^notes\.md$"}, "content": {"matches": "^# Notes"}},
            {},
            Status.PASS,
        ),
        (
            {"path": "notes.md", "content": "# Notes\nsecond line\n"},
            {"match": "exact"},
            Status.PASS,
        ),
        ({"path": "notes.md"}, {"match": "exact", "ignore": ["content"]}, Status.PASS),
        ({"path": "notes.md"}, {"match": "exact"}, Status.FAIL),  # content not expected
        ({"path": "other.md"}, {}, Status.FAIL),
        ({"path": {"matches": r"\.txt$"}}, {}, Status.FAIL),
        ({"path": "notes.md", "mode": "append"}, {}, Status.FAIL),
    ],
)
def test_tool_called_with_on_a_recorded_write(
    version: str, args: dict[str, Any], extra: dict[str, Any], status: Status, tmp_path: Path
) -> None:
    ctx = context(tmp_path, version)
    got, message = check(ctx, {"type": "tool_called_with", "tool": "write", "args": args, **extra})
    assert got is status, message


def test_a_failure_names_the_closest_call_and_each_key_that_differed(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    add_calls(
        tmp_path / "state",
        "main",
        line["sessionId"],
        [
            ("write", {"path": "a.md", "content": "x", "mode": 1}, True, "ok"),
            ("write", {"path": "b.md", "content": "y"}, True, "ok"),
        ],
    )
    status, message = check(
        ctx,
        {
            "type": "tool_called_with",
            "tool": "write",
            "args": {"path": "b.md", "content": {"matches": "^z$"}, "mode": 2},
        },
    )
    run = recorded("2026.9.6", "tj-write").run_id
    # a.md differs in 3 keys, the recorded write (notes.md) in 3, b.md in 2: the closest.
    assert (status, message) == (
        Status.FAIL,
        f"no call of 'write' with the expected arguments in run {run} (called 3 times); the "
        f"closest, tool call 2 of run {run}, differs in content: expected a match of '^z$', "
        'found "y"; '
        "mode: missing (expected 2)",
    )


def test_nested_arguments_match_as_a_subset_and_exactly_with_dotted_ignores(
    tmp_path: Path,
) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    args = {"url": "https://x.test", "options": {"retries": 2, "verbose": True, "tags": ["a", 1]}}
    add_calls(tmp_path / "state", "main", line["sessionId"], [("fetch", args, True, "ok")])

    def verdict(**fields: Any) -> tuple[Status, str]:
        return check(ctx, {"type": "tool_called_with", "tool": "fetch", **fields})

    assert verdict(args={"options": {"retries": 2}})[0] is Status.PASS
    assert verdict(args={"options": {"tags": ["a", {"matches": "^1$"}]}})[0] is Status.PASS
    status, message = verdict(args={"options": {"retries": "2"}})  # no coercion
    assert status is Status.FAIL and 'options.retries: expected "2", found 2' in message
    status, message = verdict(
        args={"url": "https://x.test", "options": {"retries": 2}}, match="exact"
    )
    assert status is Status.FAIL
    assert "options.verbose: not expected (found true)" in message
    assert "options.tags: not expected" in message
    exact = {"url": "https://x.test", "options": {"retries": 2}}
    ignored = ["options.verbose", "options.tags"]
    assert verdict(args=exact, match="exact", ignore=ignored)[0] is Status.PASS
    status, message = verdict(args={"options": {"tags": ["a"]}})
    assert status is Status.FAIL and 'options.tags: expected ["a"], found ["a", 1]' in message


def test_a_tool_not_called_names_the_tools_that_were(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "exec", "args": {"cmd": "ls"}}
    )
    run = recorded("2026.9.6", "tj-write").run_id
    assert (status, message) == (
        Status.FAIL,
        f"'exec' not called in run {run}; tools called: 'write' (1)",
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_a_refused_call_is_not_a_call_with_its_arguments(version: str, tmp_path: Path) -> None:
    """tj-refused calls a tool the gateway does not know: "Tool no_such_tool not found"."""
    ctx = context(tmp_path, version, "tj-refused")
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "no_such_tool", "args": {"x": 1}}
    )
    assert status is Status.FAIL
    assert (
        "'no_such_tool' was attempted 1 time but refused: \"Tool no_such_tool not found\""
        in message
    )
    assert message.endswith("no tools called")


@pytest.mark.parametrize("version", VERSIONS)
def test_a_sub_agents_calls_are_in_scope(version: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, version, "tj-spawn")
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "write", "args": {"path": "review.md"}}
    )
    child = recorded(version, "tj-spawn").children[0]
    assert status is Status.PASS
    assert f"call 1 of sub-agent 'reviewer' run {child.run_id}" in message
    assert (
        check(
            ctx,
            {"type": "tool_called_with", "tool": "sessions_spawn", "args": {"agentId": "reviewer"}},
        )[0]
        is Status.PASS
    )


def test_a_call_through_tool_search_code_mode_counts_as_the_inner_call(tmp_path: Path) -> None:
    ctx = context(tmp_path, name="tj-code", store="code")
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "write", "args": {"path": "code.md"}}
    )
    assert status is Status.PASS, message


def _code_without_inner_calls(tmp_path: Path) -> EvalContext:
    """tj-code whose inner calls were not recorded: the code-mode call's tools are unknown."""
    ctx = context(tmp_path, name="tj-code", store="code")
    with sqlite3.connect(store_path(tmp_path / "state", "main"), isolation_level=None) as db:
        db.execute(
            f"DELETE FROM {TABLE} WHERE json_extract(event_json, '$.data.toolCallId')"
            " LIKE 'tool\\_search\\_code:%' ESCAPE '\\'"
        )
    return ctx


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "tool_called_with", "tool": "write", "args": {"path": "code.md"}},
        {"type": "tool_called_with", "tool": "write", "args": {"path": "other.md"}},
        {"type": "tool_call_count", "tool": "write", "max": 5},
        {"type": "tool_call_count", "tool": "write", "min": 1},
        {"type": "no_tool_loop"},
    ],
)
def test_calls_made_by_code_mode_without_their_record_are_an_error_never_a_pass(
    assertion: dict[str, Any], tmp_path: Path
) -> None:
    status, message = check(_code_without_inner_calls(tmp_path), assertion)
    assert status is Status.ERROR, message
    assert "code-mode call" in message and "not hold" in message


def test_code_mode_cannot_hide_what_already_fails(tmp_path: Path) -> None:
    ctx = _code_without_inner_calls(tmp_path)
    assert check(ctx, {"type": "tool_call_count", "tool": "tool_search_code", "min": 1})[0] is (
        Status.PASS
    )
    # Hidden calls only add to a count: over the limit without them is a fail already.
    assert check(ctx, {"type": "tool_call_count", "tool": "tool_search_code", "max": 0})[0] is (
        Status.FAIL
    )


# --- tool_call_count -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("name", "assertion", "status"),
    [
        ("tj-loop", {"tool": "read", "min": 4, "max": 4}, Status.PASS),
        ("tj-loop", {"tool": "read", "max": 3}, Status.FAIL),
        ("tj-loop", {"tool": "read", "min": 5}, Status.FAIL),
        ("tj-loop", {"tool": "write", "max": 0}, Status.PASS),
        ("tj-refused", {"tool": "no_such_tool", "max": 0}, Status.PASS),  # refused: no call
        ("tj-refused", {"tool": "no_such_tool", "min": 1}, Status.FAIL),
        ("tj-spawn", {"tool": "write", "min": 1, "max": 1}, Status.PASS),  # the sub-agent's
    ],
)
def test_tool_call_count_on_recorded_runs(
    version: str, name: str, assertion: dict[str, Any], status: Status, tmp_path: Path
) -> None:
    got, message = check(context(tmp_path, version, name), {"type": "tool_call_count", **assertion})
    assert got is status, message


def test_tool_call_count_messages(tmp_path: Path) -> None:
    ctx = context(tmp_path, name="tj-loop")
    run = recorded("2026.9.6", "tj-loop").run_id
    verdict = evaluate_one({"type": "tool_call_count", "tool": "read", "max": 3}, ctx)
    assert verdict.message == f"'read' called 4 times in run {run}, expected at most 3"
    assert (verdict.value, verdict.limit) == (4, {"min": None, "max": 3})
    _, message = check(ctx, {"type": "tool_call_count", "tool": "write", "min": 1})
    assert message == (
        f"'write' called 0 times in run {run}, expected at least 1; tools called: 'read' (4)"
    )
    ctx = context(tmp_path / "refused", name="tj-refused")
    _, message = check(ctx, {"type": "tool_call_count", "tool": "no_such_tool", "max": 0})
    assert message.endswith(
        "expected at most 0; 'no_such_tool' was attempted 1 time but refused: "
        '"Tool no_such_tool not found"'
    )


def test_in_a_conversations_then_every_turn_counts(tmp_path: Path) -> None:
    ctx = conversation(tmp_path)
    status, message = check(ctx, {"type": "tool_call_count", "tool": "write", "min": 1, "max": 1})
    assert (status, message) == (
        Status.PASS,
        "'write' called 1 time in the 2 turns, expected exactly 1",
    )
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "write", "args": {"path": "name.md"}}
    )
    assert status is Status.PASS and "call 1 of turn 1" in message


# --- refusals the plugin saw ---------------------------------------------------------------------


def _blocked_write(tmp_path: Path, *, complete: bool) -> EvalContext:
    """tj-write whose write a plugin's before_tool_call hook blocked: the record shows a failed
    call; only the plugin's records (complete or not yet) tell it never ran."""
    run = recorded("2026.9.6", "tj-write")
    (call,) = run.calls
    plugin = tmp_path / "plugin.jsonl"
    base = {"v": 1, "runId": run.run_id, "sessionId": run.session_id, "agentId": "main"}
    records = [
        {**base, "kind": "harness", "event": "harness.run.started", "phase": "started"},
        {
            **base,
            "kind": "tool",
            "event": "tool.execution.blocked",
            "phase": "blocked",
            "toolName": "write",
            "toolCallId": call.tool_call_id,
            "reason": "Writing notes.md is not allowed",
        },
        {
            **base,
            "kind": "tool_result",
            "event": "after_tool_call",
            "toolName": "write",
            "toolCallId": call.tool_call_id,
            "isError": True,
            "error": "Writing notes.md is not allowed",
        },
    ]
    if complete:
        records.append(
            {**base, "kind": "harness", "event": "harness.run.completed", "phase": "completed"}
        )
    plugin.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    ctx = context(tmp_path, plugin=plugin)
    edit_events(
        tmp_path / "state",
        "main",
        run.session_id,
        "tool.result",
        _set(
            success=False,
            result={"content": [{"type": "text", "text": "Writing notes.md is not allowed"}]},
        ),
    )
    return ctx


def test_a_call_the_plugin_saw_blocked_is_not_a_call(tmp_path: Path) -> None:
    ctx = _blocked_write(tmp_path, complete=True)
    status, message = check(ctx, {"type": "tool_call_count", "tool": "write", "max": 0})
    assert status is Status.PASS
    assert message.endswith(
        "'write' was attempted 1 time but refused: \"Writing notes.md is not allowed\""
    )
    assert check(ctx, {"type": "tool_called_with", "tool": "write", "args": {}})[0] is (Status.FAIL)


def test_a_failed_call_that_ran_is_a_call(tmp_path: Path) -> None:
    """Without a record of a refusal a failed call ran (as for the log)."""
    ctx = _blocked_write(tmp_path, complete=True)
    (tmp_path / "plugin.jsonl").write_text("", "utf-8")
    assert check(ctx, {"type": "tool_call_count", "tool": "write", "min": 1})[0] is Status.PASS


def test_a_refusal_not_known_in_time_leaves_a_verdict_it_could_change_an_error(
    tmp_path: Path,
) -> None:
    ctx = _blocked_write(tmp_path, complete=False)
    status, message = check(ctx, {"type": "tool_call_count", "tool": "write", "max": 0})
    assert status is Status.ERROR
    assert "1 failed call of 'write' may have been refused by the gateway (not calls)" in message
    assert "raise the scenario's `timeout`" in message
    # A verdict it cannot change stands.
    assert check(ctx, {"type": "tool_call_count", "tool": "write", "max": 1})[0] is Status.PASS
    assert check(ctx, {"type": "run_completed"})[0] is Status.PASS


# --- no_tool_loop --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_the_same_call_four_times_in_a_row_is_a_loop(version: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, version, "tj-loop")
    run = recorded(version, "tj-loop").run_id
    verdict = evaluate_one({"type": "no_tool_loop"}, ctx)
    assert verdict.status is Status.FAIL
    assert verdict.message == (
        f"run {run} called 'read' with the same arguments 4 times in a row (calls 1 to 4), "
        'more than max_repeats 3: {"path": "notes.md"}'
    )
    assert (verdict.value, verdict.limit) == (4, 3)
    status, message = check(ctx, {"type": "no_tool_loop", "max_repeats": 4})
    assert (status, message) == (
        Status.PASS,
        "no run repeated a call more than 4 times in a row (1 run; longest: 'read' 4 times in "
        f"run {run})",
    )


def test_different_arguments_break_the_streak(tmp_path: Path) -> None:
    ctx = context(tmp_path, name="tj-loop")
    line = hook_line("2026.9.6", "tj-loop")
    add_calls(
        tmp_path / "state",
        "main",
        line["sessionId"],
        [("read", {"path": "notes.md"}, True, "x"), ("read", {"path": "other.md"}, True, "y")],
    )
    # read notes.md, read other.md, then the recorded 4 reads: still 4 in a row at most.
    verdict = evaluate_one({"type": "no_tool_loop", "max_repeats": 4}, ctx)
    assert verdict.status is Status.PASS and verdict.value == 4


def test_each_sub_agents_run_is_counted_on_its_own(tmp_path: Path) -> None:
    """The parent reads notes.md twice after the spawn, the sub-agent twice first: four in a
    row only if the runs were run together."""
    ctx = context(tmp_path, name="tj-spawn")
    parent = recorded("2026.9.6", "tj-spawn")
    child = parent.children[0]
    read = ("read", {"path": "notes.md"}, True, "notes")
    state = tmp_path / "state"
    add_calls(state, "main", parent.session_id, [read, read], at="end")
    add_calls(state, "reviewer", child.session_id, [read, read], at="start")
    assert check(ctx, {"type": "no_tool_loop", "max_repeats": 3})[0] is Status.PASS
    status, message = check(ctx, {"type": "no_tool_loop", "max_repeats": 1})
    assert status is Status.FAIL and message.startswith(f"run {parent.run_id} called 'read'")


def test_a_loop_in_a_sub_agent_is_named(tmp_path: Path) -> None:
    ctx = context(tmp_path, name="tj-spawn")
    child = recorded("2026.9.6", "tj-spawn").children[0]
    add_calls(
        tmp_path / "state",
        "reviewer",
        child.session_id,
        [("read", {"path": "notes.md"}, True, "notes")] * 4,
    )
    status, message = check(ctx, {"type": "no_tool_loop"})
    assert status is Status.FAIL
    assert message.startswith(
        f"sub-agent 'reviewer' run {child.run_id} called 'read' with the same arguments "
        "4 times in a row (calls 1 to 4)"
    )


def test_refused_calls_are_not_part_of_a_loop(tmp_path: Path) -> None:
    ctx = context(tmp_path, name="tj-refused")
    line = hook_line("2026.9.6", "tj-refused")
    refused = ("no_such_tool", {"x": 1}, False, "Tool no_such_tool not found")
    add_calls(tmp_path / "state", "main", line["sessionId"], [refused] * 3)
    verdict = evaluate_one({"type": "no_tool_loop", "max_repeats": 1}, ctx)
    assert verdict.status is Status.PASS, verdict.message
    assert verdict.message.endswith("no tool calls)")


# --- message_sent / message_not_sent -------------------------------------------------------------


# tj-send (store `send`): sent "Order 4521 is ready for pickup." to Telegram chat 123456789 and
# "Shipped: order 4521." to channel @clawspec_updates, recorded as OpenClaw writes the targets.
_CUSTOMER = "telegram:123456789"
_UPDATES = "telegram:@clawspec_updates"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("fields", "sent"),
    [
        ({}, True),
        ({"to": _CUSTOMER}, True),
        ({"to": _UPDATES, "text": "shipped:  ORDER 4521"}, True),
        ({"pattern": r"^Order \d+ is ready"}, True),
        ({"to": _UPDATES, "pattern": r"^Order \d+ is ready"}, False),  # sent elsewhere
        ({"to": "123456789"}, False),  # the target is recorded with its channel
        ({"to": "telegram:1000404"}, False),  # tj-send-refused's chat: another run
        ({"text": "delayed"}, False),
    ],
)
def test_messages_sent_through_the_telegram_channel(
    version: str, fields: dict[str, Any], sent: bool, tmp_path: Path
) -> None:
    ctx = context(tmp_path, version, "tj-send", store="send")
    positive, message = check(ctx, {"type": "message_sent", **fields})
    negative, other = check(ctx, {"type": "message_not_sent", **fields})
    assert (positive, negative) == (
        (Status.PASS, Status.FAIL) if sent else (Status.FAIL, Status.PASS)
    ), (message, other)


@pytest.mark.parametrize("version", VERSIONS)
def test_verdicts_on_recorded_sends_say_what_was_sent(version: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, version, "tj-send", store="send")
    run = recorded(version, "tj-send", "send").run_id
    first = f"run {run} via message to '{_CUSTOMER}': \"Order 4521 is ready for pickup.\""
    status, message = check(ctx, {"type": "message_sent", "text": "ready for pickup"})
    assert (status, message) == (
        Status.PASS,
        f"a message containing 'ready for pickup' was sent: {first}",
    )
    status, message = check(ctx, {"type": "message_not_sent", "to": _CUSTOMER})
    assert (status, message) == (Status.FAIL, f"a message to '{_CUSTOMER}' was sent: {first}")
    status, message = check(ctx, {"type": "message_not_sent"})
    assert (status, message) == (Status.FAIL, f"a message was sent: {first} (and 1 more)")
    status, message = check(ctx, {"type": "message_sent", "to": "123456789"})
    assert (status, message) == (
        Status.FAIL,
        f"a message to '123456789' was not sent in run {run} (2 messages sent: {first}; run "
        f"{run} via message to '{_UPDATES}': \"Shipped: order 4521.\")",
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_a_send_the_channel_refused_is_no_message_sent(version: str, tmp_path: Path) -> None:
    """The Bot API answered "chat not found": OpenClaw queued the message (its gateway owns the
    retry) and recorded nothing sent, so the run sent no message."""
    ctx = context(tmp_path, version, "tj-send-refused", store="send")
    run = recorded(version, "tj-send-refused", "send").run_id
    status, message = check(ctx, {"type": "message_sent", "to": "telegram:1000404"})
    assert (status, message) == (
        Status.FAIL,
        f"a message to 'telegram:1000404' was not sent in run {run} (no message sent)",
    )
    assert check(ctx, {"type": "message_not_sent"})[0] is Status.PASS


def _sent(tmp_path: Path) -> EvalContext:
    """tj-write as if it had sent two messages to another channel and one text without its
    target (no recording holds such a text: the fields are set as OpenClaw's code writes
    them)."""
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    edit_events(
        tmp_path / "state",
        "main",
        line["sessionId"],
        "trace.artifacts",
        _set(
            messagingToolSentTexts=["Deployed  v2 to prod.", "Build 41 failed", "Queued."],
            messagingToolSentTargets=[
                {
                    "tool": "message",
                    "provider": "slack",
                    "to": "channel:C1",
                    "text": "Deployed  v2 to prod.",
                },
                {
                    "tool": "message",
                    "provider": "slack",
                    "to": "channel:C2",
                    "text": "Build 41 failed",
                },
            ],
        ),
    )
    return ctx


@pytest.mark.parametrize(
    ("fields", "sent"),
    [
        ({}, True),
        ({"to": "channel:C1"}, True),
        ({"to": "channel:C9"}, False),
        ({"text": "deployed v2"}, True),  # whitespace collapsed, case-folded
        ({"to": "channel:C2", "text": "deployed"}, False),
        ({"pattern": r"Build \d+ failed"}, True),
        ({"to": "channel:C1", "pattern": r"Build \d+"}, False),
        ({"text": "queued"}, True),  # a text recorded without its target
        ({"to": "channel:C1", "text": "queued"}, False),
    ],
)
def test_messages_sent_through_messaging_tools(
    fields: dict[str, Any], sent: bool, tmp_path: Path
) -> None:
    ctx = _sent(tmp_path)
    positive, message = check(ctx, {"type": "message_sent", **fields})
    negative, other = check(ctx, {"type": "message_not_sent", **fields})
    assert (positive, negative) == (
        (Status.PASS, Status.FAIL) if sent else (Status.FAIL, Status.PASS)
    ), (message, other)


def test_message_verdicts_say_what_was_sent(tmp_path: Path) -> None:
    ctx = _sent(tmp_path)
    run = recorded("2026.9.6", "tj-write").run_id
    _, message = check(ctx, {"type": "message_not_sent", "to": "channel:C1"})
    assert message == (
        f"a message to 'channel:C1' was sent: run {run} via message to 'channel:C1': "
        '"Deployed v2 to prod."'
    )
    _, message = check(ctx, {"type": "message_sent", "to": "channel:C9"})
    assert message.startswith(
        f"a message to 'channel:C9' was not sent in run {run} (3 messages sent: run {run} via "
        "message to 'channel:C1'"
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_no_message_in_the_recorded_runs(version: str, tmp_path: Path) -> None:
    ctx = context(tmp_path, version, "tj-spawn")
    status, message = check(ctx, {"type": "message_not_sent"})
    assert (status, message) == (
        Status.PASS,
        f"a message was not sent in run {recorded(version, 'tj-spawn').run_id} (2 runs; no "
        "message sent)",
    )
    assert check(ctx, {"type": "message_sent"})[0] is Status.FAIL


def test_without_the_runs_artifacts_what_was_sent_is_not_known(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    edit_events(tmp_path / "state", "main", line["sessionId"], "trace.artifacts", lambda d: None)
    status, message = check(ctx, {"type": "message_not_sent"})
    assert status is Status.ERROR
    assert "has no readable trace.artifacts event" in message
    assert check(ctx, {"type": "message_sent"})[0] is Status.ERROR


# --- run_completed -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_runs_completed(version: str, tmp_path: Path) -> None:
    run = recorded(version, "tj-spawn")
    status, message = check(context(tmp_path, version, "tj-spawn"), {"type": "run_completed"})
    assert (status, message) == (
        Status.PASS,
        f"2 runs ended with stop reason 'stop' (run {run.run_id}, sub-agent 'reviewer' run "
        f"{run.children[0].run_id})",
    )


def test_every_turn_of_a_conversation_completed(tmp_path: Path) -> None:
    status, message = check(conversation(tmp_path), {"type": "run_completed"})
    assert (status, message) == (
        Status.PASS,
        "2 runs ended with stop reason 'stop' (turn 1, turn 2)",
    )


def test_a_sub_agent_that_timed_out_fails_its_parents_scope(tmp_path: Path) -> None:
    ctx = context(tmp_path, name="tj-spawn")
    child = recorded("2026.9.6", "tj-spawn").children[0]
    edit_events(
        tmp_path / "state",
        "reviewer",
        child.session_id,
        "model.completed",
        _set(timedOutByRunBudget=True, stopReason="aborted"),
    )
    verdict = evaluate_one({"type": "run_completed"}, ctx)
    assert verdict.status is Status.FAIL
    assert verdict.message == (
        f"1 run of 2 did not complete: sub-agent 'reviewer' run {child.run_id}: timed out, "
        "stop reason 'aborted' (the run was stopped before the model answered), expected "
        "'stop', final status 'success'"
    )


def test_a_run_cut_by_its_length_did_not_complete(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    state = tmp_path / "state"
    edit_events(state, "main", line["sessionId"], "model.completed", _set(stopReason="length"))
    edit_events(
        state, "main", line["sessionId"], "trace.artifacts", _set(stopReason=None, aborted=True)
    )
    status, message = check(ctx, {"type": "run_completed"})
    assert status is Status.FAIL
    assert message.endswith(
        "aborted, stop reason 'length' (the model's answer was cut at its output limit), "
        "expected 'stop', final status 'success'"
    )


# --- without the record --------------------------------------------------------------------------

EVERY_TYPE = [
    {"type": "tool_called_with", "tool": "write", "args": {"path": "notes.md"}},
    {"type": "tool_call_count", "tool": "write", "max": 9},
    {"type": "no_tool_loop"},
    {"type": "message_sent"},
    {"type": "message_not_sent"},
    {"type": "run_completed"},
]


@pytest.mark.parametrize("assertion", EVERY_TYPE, ids=lambda a: a["type"])
def test_without_the_state_folder_setting_each_is_an_error_naming_it(
    assertion: dict[str, Any], tmp_path: Path
) -> None:
    status, message = check(context(tmp_path, state=False), assertion)
    assert status is Status.ERROR
    assert "openclaw_state_dir" in message


@pytest.mark.parametrize("assertion", EVERY_TYPE, ids=lambda a: a["type"])
def test_a_missing_store_is_an_error(assertion: dict[str, Any], tmp_path: Path) -> None:
    ctx = context(tmp_path)
    store_path(tmp_path / "state", "main").unlink()
    status, message = check(ctx, assertion)
    assert status is Status.ERROR
    assert message.startswith("cannot read the run's record")


# --- hostile values ------------------------------------------------------------------------------


def test_lone_surrogates_in_arguments_and_messages_are_shown_as_replacements(
    tmp_path: Path,
) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    add_calls(
        tmp_path / "state", "main", line["sessionId"], [("write", {"path": "a\ud800b"}, True, "ok")]
    )
    edit_events(
        tmp_path / "state",
        "main",
        line["sessionId"],
        "trace.artifacts",
        _set(messagingToolSentTargets=[{"tool": "message", "to": "x\udc00", "text": "hi\ud83d"}]),
    )
    for assertion in (
        {"type": "tool_called_with", "tool": "write", "args": {"path": "nope"}},
        {"type": "message_not_sent"},
        {"type": "tool_called_with", "tool": "write", "args": {"path": {"matches": "^a.b$"}}},
    ):
        verdict = evaluate_one(assertion, ctx)
        verdict.message.encode("utf-8")  # no lone surrogate left: any writer takes it
        assert "\ufffd" in verdict.message, verdict.message
    assert (
        evaluate_one(
            {"type": "tool_called_with", "tool": "write", "args": {"path": {"matches": "^a.b$"}}},
            ctx,
        ).status
        is Status.PASS
    )


def test_huge_arguments_are_cut_in_messages(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    huge = {"path": "big.md", "content": "x" * 300_000, "\x1b[31mkey": "y\x00"}
    add_calls(tmp_path / "state", "main", line["sessionId"], [("write", huge, True, "ok")])
    status, message = check(
        ctx,
        {"type": "tool_called_with", "tool": "write", "args": {"path": "big.md", "content": "z"}},
    )
    assert status is Status.FAIL
    assert len(message) < 1_000 and "xxxx" in message
    status, message = check(
        ctx,
        {"type": "tool_called_with", "tool": "write", "args": {"path": "big.md"}, "match": "exact"},
    )
    assert status is Status.FAIL and "\x1b" not in message and "\x00" not in message


def test_arguments_too_large_to_read_are_unknown_never_a_match(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    add_calls(
        tmp_path / "state",
        "main",
        line["sessionId"],
        [("write", {"path": "big.md", "content": "x" * (1 << 21)}, True, "ok")],
    )
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "write", "args": {"path": "big.md"}}
    )
    assert status is Status.ERROR
    assert "whose arguments the record does not hold" in message and "bytes" in message
    assert (
        check(ctx, {"type": "tool_called_with", "tool": "write", "args": {"path": "notes.md"}})[0]
        is Status.PASS
    )
    # Next to the recorded write: two writes in a row, one of unknown arguments.
    status, message = check(ctx, {"type": "no_tool_loop"})
    assert status is Status.PASS and message.endswith(
        "longest: 'write' 1 time in run " + (recorded("2026.9.6", "tj-write").run_id + ")")
    ), message
    status, message = check(ctx, {"type": "no_tool_loop", "max_repeats": 1})
    assert status is Status.ERROR and "arguments too large to read" in message


def test_a_pattern_that_backtracks_without_end_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(patterns, "PATTERN_SECONDS", 0.5)
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")
    add_calls(
        tmp_path / "state",
        "main",
        line["sessionId"],
        [("write", {"path": "a" * 40 + "!"}, True, "ok")],
    )
    status, message = check(
        ctx, {"type": "tool_called_with", "tool": "write", "args": {"path": {"matches": "^(a+)+$"}}}
    )
    assert status is Status.ERROR and "backtracks too much" in message


# --- load errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assertion", "error"),
    [
        ({"type": "tool_call_count", "tool": "x"}, "one of 'min', 'max' is required"),
        (
            {"type": "tool_call_count", "tool": "x", "min": 3, "max": 2},
            "'min' (3) is greater than 'max' (2)",
        ),
        ({"type": "tool_call_count", "tool": "x", "min": -1}, "greater than or equal to 0"),
        (
            {"type": "tool_called_with", "tool": "x", "args": {"a": {"matches": "(ab"}}},
            "'args.a.matches' is not a regular expression: missing )",
        ),
        (
            {"type": "tool_called_with", "tool": "x", "args": {"a": {"matches": "x", "b": 1}}},
            "mixes 'matches' with other keys",
        ),
        (
            {"type": "tool_called_with", "tool": "x", "args": {}, "ignore": ["a"]},
            "'ignore' applies only with match: exact",
        ),
        (
            {
                "type": "tool_called_with",
                "tool": "x",
                "args": {"a": 1},
                "match": "exact",
                "ignore": ["a"],
            },
            "'a' in both 'args' and 'ignore'",
        ),
        (
            {"type": "tool_called_with", "tool": "x", "args": {}, "match": "fuzzy"},
            "'partial' or 'exact'",
        ),
        ({"type": "no_tool_loop", "max_repeats": 0}, "greater than or equal to 1"),
        ({"type": "message_sent", "pattern": "[a"}, "not a regular expression"),
        ({"type": "message_sent", "text": "a", "pattern": "a"}, "either 'text' or 'pattern'"),
        ({"type": "message_not_sent", "text": "  "}, "'text' must not be blank"),
    ],
)
def test_load_errors(assertion: dict[str, Any], error: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(error)):
        REGISTRY[assertion["type"]].model.model_validate(assertion)


def test_load_errors_point_at_their_place_in_the_file(tmp_path: Path) -> None:
    contract = tmp_path / "record.clawspec.yaml"
    contract.write_text(
        'version: "1.0"\n'
        "target: {type: agent, path: .}\n"
        "scenarios:\n"
        "  - name: early\n"
        "    given:\n"
        "      - {type: run_completed}\n"
        "    when: {invoke: hi}\n"
        "    then:\n"
        "      - {type: tool_call_count, tool: read, min: 3, max: 1}\n"
        "      - type: tool_called_with\n"
        "        tool: write\n"
        "        args: {path: {matches: '(notes'}}\n"
        "      - {type: no_tool_loop}\n",
        "utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "clawspec", "validate", str(contract)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    places = {e.split(": ", 2)[1]: e for e in errors}
    assert f"{contract.name}:6:16" in places, errors
    assert "a run record assertion cannot be in 'given'" in places[f"{contract.name}:6:16"]
    assert any(
        p.startswith(f"{contract.name}:9:") and "'min' (3) is greater than 'max' (1)" in e
        for p, e in places.items()
    ), errors
    assert any(
        p.startswith(f"{contract.name}:12:") and "not a regular expression" in e
        for p, e in places.items()
    ), errors
    assert "Traceback" not in done.stderr


# --- the registry's other readers know them ------------------------------------------------------


def test_coverage_counts_the_run_record_category_and_its_negative_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawspec.cli import main
    from tests.support.openclaw_workspace import make_workspace

    root = make_workspace(tmp_path / "ws")
    contract = root / "agents/support/tests/scenarios.yaml"
    contract.parent.mkdir(parents=True, exist_ok=True)
    contract.write_text(
        'version: "1.0"\n'
        "target: {type: agent, path: agents/support, agent_id: support}\n"
        "scenarios:\n"
        "  - name: answers\n"
        "    when: {invoke: hello}\n"
        "    then:\n"
        "      - {type: tool_call_count, tool: read, max: 2}\n"
        "      - {type: message_not_sent}\n",
        "utf-8",
    )
    monkeypatch.chdir(root)
    assert main(["coverage", "--format", "json"]) == 0
    rows = {row["target"]: row for row in json.loads(capsys.readouterr().out)["targets"]}
    assert (rows["agents/support"]["categories"], rows["agents/support"]["negative"]) == (
        ["run record"],
        True,
    )


def test_the_editor_schema_knows_the_run_record_types() -> None:
    import jsonschema

    from clawspec.assertions import trajectory

    schema = json.loads(
        (Path(trajectory.__file__).parents[1] / "schemas" / "contract.schema.json").read_text(
            "utf-8"
        )
    )

    def valid(assertion: dict[str, Any]) -> bool:
        contract = {
            "version": "1.0",
            "target": {"type": "agent", "path": "."},
            "scenarios": [{"name": "a", "when": {"invoke": "hi"}, "then": [assertion]}],
        }
        return jsonschema.Draft7Validator(schema).is_valid(contract)

    assert valid({"type": "tool_called_with", "tool": "w", "args": {"p": {"matches": "x"}}})
    assert valid({"type": "tool_call_count", "tool": "w", "min": 1})
    assert valid({"type": "no_tool_loop"})
    assert valid({"type": "message_sent", "to": "c", "text": "t"})
    assert valid({"type": "message_not_sent"})
    assert valid({"type": "run_completed"})
    assert not valid({"type": "tool_called_with", "tool": "w"})
    assert not valid({"type": "tool_call_count", "tool": "w"})
    assert not valid({"type": "tool_called_with", "tool": "w", "args": {}, "match": "fuzzy"})
    assert not valid({"type": "run_completed", "extra": 1})


def test_a_record_read_for_the_reply_is_read_again_for_the_sub_agents(tmp_path: Path) -> None:
    """The reply needs only the parent's run: read first for it, the record lacks a sub-agent
    still running; an assertion on the calls reads again, waiting for it, never judging
    without it."""
    ctx = context(tmp_path, name="tj-spawn")
    child = recorded("2026.9.6", "tj-spawn").children[0]
    edit_events(tmp_path / "state", "reviewer", child.session_id, "session.ended", lambda d: None)
    assert check(ctx, {"type": "reply_matches", "pattern": "."})[0] is Status.PASS
    status, message = check(ctx, {"type": "tool_call_count", "tool": "write", "max": 0})
    assert status is Status.ERROR
    assert message.endswith("1 sub-agent run(s) have not ended")
