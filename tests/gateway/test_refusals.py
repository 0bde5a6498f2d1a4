"""Calls the gateway refused, told from real ones, on recorded real gateway sessions.

Recorded inside a loopback-only namespace with the scripted provider and ClawSpec's plugin, the
gateway configured as tests/e2e/contracts/upgrade/openclaw.json (no `tools.toolSearch`: each
release's default), one hook run per script:

- openclaw-refused-2026.9.6.log / plugin-refused-2026.9.6.jsonl (OpenClaw 2026.9.6, Tool Search
  on): the model calls `sessions_spawn` by name and is answered "Tool sessions_spawn not found";
  then a run that writes notes.md, then one that reads a file that does not exist (the tool runs
  and fails: a failed call, not a refused one).
- openclaw-spawn-2026.9.5.log / plugin-spawn-2026.9.5.jsonl (OpenClaw 2026.9.5, every tool
  offered): the same three runs; there the spawn runs and the `reviewer` sub-agent writes.

- openclaw-blocked-2026.9.6.log / plugin-blocked-2026.9.6.jsonl (OpenClaw 2026.9.6, with a
  plugin whose `before_tool_call` hook blocks writing blocked.md): a write of blocked.md, then
  one of notes.md.

In every log each call has its `embedded run tool start` and `tool end` lines, refused or not.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from clawspec.gateway.logs import scope
from clawspec.gateway.logs.index import LogIndex
from clawspec.gateway.plugin_records import read_plugin_records
from clawspec.gateway.refusals import AnswerReader, Refusal, ToolAnswers, refusals

FIXTURES = Path(__file__).parent / "fixtures"
NEW_LOG = FIXTURES / "openclaw-refused-2026.9.6.log"
NEW_PLUGIN = FIXTURES / "plugin-refused-2026.9.6.jsonl"
OLD_LOG = FIXTURES / "openclaw-spawn-2026.9.5.log"
OLD_PLUGIN = FIXTURES / "plugin-spawn-2026.9.5.jsonl"
# Hook run ids the gateway returned, and the embedded run of the refused spawn.
NEW_HOOK = {
    "delegate": "9aad2c87-1450-4de1-801e-a5e8807464ec",
    "notes": "c4f7d5d0-3c99-4b2e-bec5-1716e1f9928b",
    "read-missing": "0f01db9f-5e48-41d8-8847-922eeac7de37",
}
OLD_HOOK = {"delegate": "c8ae9b29-9aa8-4a8f-9a0f-b59689eac010"}
REFUSED_RUN = "e476fa24-e39d-4b08-8f56-2a36d404ab87"
SPAWN_CALL = "call_upgrade-delegate_0_0"
NOT_FOUND = "Tool sessions_spawn not found"


def test_the_log_lines_of_a_refused_call_are_those_of_a_real_one() -> None:
    """Why the log alone cannot tell: both releases log the spawn's start and end alike."""
    for path in (NEW_LOG, OLD_LOG):
        text = path.read_text("utf-8")
        assert f"tool=sessions_spawn toolCallId={SPAWN_CALL}" in text
        assert "embedded run tool end: " in text and NOT_FOUND not in text


def test_only_the_spawn_answered_not_found_is_refused() -> None:
    """2026.9.6: the spawn has an error answer and no execution record; the failed read has
    both (the tool ran); the write ran. 2026.9.5: nothing is refused."""
    assert refusals(read_plugin_records(NEW_PLUGIN)) == {
        (REFUSED_RUN, SPAWN_CALL): Refusal("sessions_spawn", REFUSED_RUN, SPAWN_CALL, NOT_FOUND)
    }
    assert refusals(read_plugin_records(OLD_PLUGIN)) == {}


def test_what_the_plugin_records_of_each_kind_of_call() -> None:
    records = read_plugin_records(NEW_PLUGIN)
    by_call: dict[str, list[tuple[str, str | None, bool | None]]] = {}
    for rec in records:
        if rec.kind in ("tool", "tool_result") and rec.tool_call_id:
            by_call.setdefault(rec.tool_call_id, []).append((rec.kind, rec.phase, rec.is_error))
    assert by_call[SPAWN_CALL] == [("tool_result", None, True)]
    assert sorted(by_call["call_x-read-missing_0_0"]) == [
        ("tool", "error", None),
        ("tool", "started", None),
        ("tool_result", None, True),
    ]
    assert sorted(by_call["call_upgrade-notes_0_0"]) == [
        ("tool", "completed", None),
        ("tool", "started", None),
        ("tool_result", None, False),
    ]


def test_a_refusal_is_known_only_once_the_runs_records_are_complete() -> None:
    """The hook's answer is written at once, the execution events later (queued): until the
    run's harness record ends, an error answer may still get its execution records."""
    records = read_plugin_records(NEW_PLUGIN)
    end = next(
        i
        for i, rec in enumerate(records)
        if rec.kind == "harness" and rec.run_id == REFUSED_RUN and rec.phase != "started"
    )
    answers = ToolAnswers()
    for rec in records[:end]:
        answers.add(rec)
    assert answers.refusals() == {} and answers.open_runs([REFUSED_RUN]) == [REFUSED_RUN]
    answers.add(records[end])
    assert list(answers.refusals()) == [(REFUSED_RUN, SPAWN_CALL)]
    assert answers.open_runs([REFUSED_RUN]) == []


def test_an_execution_record_after_the_answer_still_counts() -> None:
    """Seen live: a call's `tool started` record may follow its `tool_result`."""
    records = read_plugin_records(NEW_PLUGIN)
    read = [r for r in records if r.tool_call_id == "call_x-read-missing_0_0"]
    rest = [r for r in records if r.tool_call_id != "call_x-read-missing_0_0"]
    answer = next(r for r in read if r.kind == "tool_result")
    late = [answer, *(r for r in read if r is not answer)]
    assert refusals([*late, *rest]) == refusals(records)


BLOCKED_LOG = FIXTURES / "openclaw-blocked-2026.9.6.log"
BLOCKED_PLUGIN = FIXTURES / "plugin-blocked-2026.9.6.jsonl"
BLOCKED_HOOK = {
    "blocked": "b25b0406-d578-4232-b2e6-4084765554f7",
    "notes": "d9a81a43-b123-4530-95f0-3c264a707b15",
}
BLOCKED_RUN = "022a7e8f-315f-4d00-99d0-81881787857e"


def test_a_write_a_plugin_blocked_is_refused_with_the_plugins_reason() -> None:
    """A `before_tool_call` block: the answer carries the plugin's reason, and the plugin output
    has a `blocked` execution record but no `started` one."""
    records = read_plugin_records(BLOCKED_PLUGIN)
    phases = [
        r.phase for r in records if r.tool_call_id == "call_x-blocked_0_0" and r.kind == "tool"
    ]
    assert phases == ["blocked"]
    ((key, refusal),) = refusals(records).items()
    assert key == (BLOCKED_RUN, "call_x-blocked_0_0")
    assert (refusal.tool, refusal.answer) == ("write", "Writing blocked.md is not allowed")
    # Without the hook's answer, the block record alone says it.
    alone = refusals(r for r in records if r.kind != "tool_result")
    assert [r.answer for r in alone.values()] == ["blocked: Writing blocked.md is not allowed"]


def test_the_blocked_write_is_not_a_call_and_the_next_write_is() -> None:
    blocked = index_of(BLOCKED_LOG, BLOCKED_HOOK["blocked"], BLOCKED_PLUGIN)
    assert blocked.tool_calls == []
    assert [(r.call.name, r.answer) for r in blocked.refused_calls] == [
        ("write", "Writing blocked.md is not allowed")
    ]
    notes = index_of(BLOCKED_LOG, BLOCKED_HOOK["notes"], BLOCKED_PLUGIN)
    assert [c.name for c in notes.tool_calls] == ["write"] and notes.refused_calls == []


def index_of(log: Path, hook_run: str, plugin: Path | None, **kwargs: Any) -> LogIndex:
    answers = AnswerReader(plugin) if plugin is not None else None
    return LogIndex.build(log, run_ids=[hook_run], answers=answers, **kwargs)


def test_a_refused_spawn_is_neither_a_call_nor_a_pending_sub_agent() -> None:
    index = index_of(NEW_LOG, NEW_HOOK["delegate"], NEW_PLUGIN)
    assert index.found and index.tool_calls == [] and index.subagents == []
    ((refused, answer),) = [(r.call, r.answer) for r in index.refused_calls]
    assert (refused.name, refused.run_id, refused.tool_call_id) == (
        "sessions_spawn",
        REFUSED_RUN,
        SPAWN_CALL,
    )
    assert answer == NOT_FOUND
    assert index.pending == [] and scope.settled(index)


def test_without_the_plugin_the_refused_spawn_is_waited_for_as_before() -> None:
    index = index_of(NEW_LOG, NEW_HOOK["delegate"], None)
    assert [c.name for c in index.tool_calls] == ["sessions_spawn"]
    assert index.refused_calls == []
    (pending,) = index.pending
    assert "never started" in pending


def test_a_real_spawn_and_a_failed_call_stay_calls() -> None:
    old = index_of(OLD_LOG, OLD_HOOK["delegate"], OLD_PLUGIN)
    assert [c.name for c in old.tool_calls] == ["sessions_spawn", "write"]
    assert old.subagents == ["reviewer"] and old.refused_calls == [] and old.pending == []
    failed = index_of(NEW_LOG, NEW_HOOK["read-missing"], NEW_PLUGIN)
    assert [c.name for c in failed.tool_calls] == ["read"] and failed.refused_calls == []
    notes = index_of(NEW_LOG, NEW_HOOK["notes"], NEW_PLUGIN)
    assert [c.name for c in notes.tool_calls] == ["write"] and notes.refused_calls == []


def test_the_refused_spawn_ends_the_wait_once_its_records_arrive(tmp_path: Path) -> None:
    """The log is complete, the plugin output not yet (its last records of the run are still
    queued): the index waits; when they arrive it stops waiting for a child, and the refused
    spawn is not a pending sub-agent. A clock that writes the rest on its 5th reading stands in
    for the gateway."""
    records = NEW_PLUGIN.read_bytes().splitlines(keepends=True)
    cut = next(i for i, raw in enumerate(records) if b'"harness.run.completed"' in raw)
    plugin = tmp_path / "plugin.jsonl"
    plugin.write_bytes(b"".join(records[:cut]))
    ticks = itertools.count()

    def clock() -> float:
        tick = next(ticks)
        if tick == 5:
            with plugin.open("ab") as out:
                out.write(b"".join(records[cut:]))
        return tick * 0.5  # seconds: 120 readings make up the 60 s budget

    index = index_of(
        NEW_LOG,
        NEW_HOOK["delegate"],
        plugin,
        wait_s=60.0,
        subagent_wait_s=60.0,
        poll_interval_s=0.001,
        clock=clock,
    )
    assert index.tool_calls == [] and index.pending == []
    assert [r.answer for r in index.refused_calls] == [NOT_FOUND]
    assert index.waited_s < 60.0  # it stopped when the records came, not at the budget's end


def test_without_the_runs_harness_records_nothing_is_refused_nor_waited_for() -> None:
    """A run the plugin saw no harness run of (records lost, another harness): its error
    answers decide nothing, and nothing waits for records that will not come."""
    records = [
        r for r in read_plugin_records(NEW_PLUGIN) if r.kind != "harness" or r.run_id != REFUSED_RUN
    ]
    answers = ToolAnswers()
    for rec in records:
        answers.add(rec)
    assert (REFUSED_RUN, SPAWN_CALL) in answers.errors
    assert answers.refusals() == {} and answers.open_runs([REFUSED_RUN]) == []
