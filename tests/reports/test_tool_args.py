"""Tool call arguments in the report: matched from OpenClaw's recorded run records, masked, cut."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from clawspec.evidence.record import RunRecords
from clawspec.reports import tool_args
from clawspec.reports.evidence import scenario_evidence
from clawspec.reports.model import ScenarioEvidence, ToolCallRecord
from clawspec.reports.tool_args import with_args
from clawspec.secrets import scope
from tests.assertions.test_trajectory_assertions import context
from tests.gateway.test_trajectory import hook_run

VERSION = "2026.9.6"


def records(*names: str) -> RunRecords:
    return RunRecords(tuple(hook_run(VERSION, name) for name in names))


def logged(name: str, run_id: str | None, agent: str = "main") -> ToolCallRecord:
    return ToolCallRecord(name=name, agent=agent, run_id=run_id)


def test_a_logged_call_gets_the_recorded_arguments_by_its_call_id() -> None:
    found = records("tj-write")
    run = found.runs[0]
    # The log's run id may differ from the record's (a hook run on 2026.9.5): the id decides.
    out = with_args([logged("write", "another-run")], ["call_tj-write_0_0"], found)
    assert out[0].args == {"path": "notes.md", "content": "# Notes\nsecond line\n"}
    assert not out[0].args_cut and out[0].args_bytes is None
    assert out[0].run_id == "another-run" and run.run_id != "another-run"


def test_without_an_id_calls_match_in_order_within_their_run_and_tool() -> None:
    found = records("tj-loop")
    run_id = found.runs[0].run_id
    tools = [logged("read", run_id) for _ in range(4)]
    out = with_args(tools, [None] * 4, found)
    assert [t.args for t in out] == [{"path": "notes.md"}] * 4


def test_a_call_the_record_does_not_have_keeps_null_arguments() -> None:
    found = records("tj-write")
    run_id = found.runs[0].run_id
    tools = [logged("write", run_id), logged("edit", run_id), logged("write", "other-run")]
    out = with_args(tools, [None, None, None], found)
    assert out[0].args == {"path": "notes.md", "content": "# Notes\nsecond line\n"}
    assert out[1].args is None  # no `edit` in the record: never guessed
    assert out[2].args is None  # another run: not matched by place
    # An id of another tool's call is not taken either.
    assert with_args([logged("read", run_id)], ["call_tj-write_0_0"], found)[0].args is None


def test_without_a_record_nothing_changes() -> None:
    tools = [logged("write", "r1")]
    assert with_args(tools, ["x"], None) == tools


def test_without_a_log_the_record_lists_its_calls_sub_agents_included() -> None:
    out = with_args([], [], records("tj-spawn", "tj-refused"))
    assert [(t.name, t.agent) for t in out] == [("sessions_spawn", "main"), ("write", "reviewer")]
    assert out[1].args == {"path": "review.md", "content": "looks fine\n"}
    assert out[0].args["task"].startswith("Review notes.md")  # the inner call's, not the wrapper's


def test_tool_search_calls_match_by_the_inner_id_as_the_log_names_it() -> None:
    found = records("tj-spawn")
    child = found.runs[0].children[0]
    tools = [logged("sessions_spawn", None), logged("write", child.run_id, "reviewer")]
    ids = ["tool_search_code:call_tj-spawn_0_0:sessions_spawn:1", "call_tj-child_0_0"]
    out = with_args(tools, ids, found)
    assert out[0].args["task"].startswith("Review notes.md")
    assert out[1].args == {"path": "review.md", "content": "looks fine\n"}


def test_long_arguments_are_cut_at_the_limit_and_marked() -> None:
    run = hook_run(VERSION, "tj-write")
    call = replace(run.tool_calls[0], args={"path": "big.md", "content": "é" * 500})
    found = RunRecords((replace(run, tool_calls=(call,)),))
    out = with_args([logged("write", run.run_id)], [call.tool_call_id], found, limit=100)[0]
    whole = json.dumps(call.args, ensure_ascii=False, separators=(",", ":")).encode()
    assert out.args_cut and out.args_bytes == len(whole)
    assert isinstance(out.args, str) and out.args.startswith('{"path":"big.md","content":"é')
    assert len(out.args.encode()) <= 100  # never half a character at the cut
    json.dumps(ScenarioEvidence(tools=[out]).model_dump(mode="json"))


def test_a_scenario_keeps_a_bounded_total_of_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_args, "ARGS_TOTAL_BYTES", 250)
    run = hook_run(VERSION, "tj-loop")
    calls = tuple(replace(c, args={"path": "x" * 90}) for c in run.tool_calls)
    found = RunRecords((replace(run, tool_calls=calls),))
    tools = [logged("read", run.run_id) for _ in calls]
    out = with_args(tools, [c.tool_call_id for c in calls], found, limit=120)
    assert [t.args_cut for t in out] == [False, False, True, True]
    assert out[2].args and len(out[2].args) < 120  # what the budget had left
    assert out[3].args == "" and out[3].args_bytes == len('{"path":""}') + 90


def test_secrets_in_arguments_are_masked_before_the_cut() -> None:
    secret = "sk-test-0123456789abcdefSECRET"
    run = hook_run(VERSION, "tj-write")
    call = replace(run.tool_calls[0], args={"path": "a.md", "content": "x" * 40 + secret})
    found = RunRecords((replace(run, tool_calls=(call,)),))
    with scope() as registry:
        registry.add(secret)
        whole = with_args([logged("write", run.run_id)], [call.tool_call_id], found)[0]
        # A cut through the secret leaves no part of it.
        cut = with_args([logged("write", run.run_id)], [call.tool_call_id], found, limit=64)[0]
    assert secret not in json.dumps(whole.args) and "***" in whole.args["content"]
    assert cut.args_cut and "sk-test" not in cut.args and "SECRET" not in cut.args


def test_deeply_nested_arguments_are_kept_as_cut_text() -> None:
    deep: object = "bottom"
    for _ in range(200):
        deep = {"k": deep}
    run = hook_run(VERSION, "tj-write")
    call = replace(run.tool_calls[0], args=deep)
    found = RunRecords((replace(run, tool_calls=(call,)),))
    out = with_args([logged("write", run.run_id)], [call.tool_call_id], found)[0]
    assert out.args_cut and isinstance(out.args, str) and out.args.startswith('{"k":{"k":')


def test_the_report_reads_the_record_no_assertion_read(tmp_path: Path) -> None:
    """A plain scenario whose log has no tool lines: the record's own calls, with arguments,
    read by the report itself within the run's settings."""
    ctx = context(tmp_path, name="tj-loop")
    assert ctx.evidence.built_records() is None
    settings = ctx.settings.model_copy(
        update={"limits": ctx.settings.limits.model_copy(update={"tool_args_bytes": 64})}
    )
    found = scenario_evidence(ctx.evidence, ctx.run, settings=settings)
    assert found is not None
    assert [(t.name, t.args, t.args_cut) for t in found.tools] == [
        ("read", {"path": "notes.md"}, False)
    ] * 4
    spawn = context(tmp_path / "spawn", name="tj-spawn")
    spawned = scenario_evidence(spawn.evidence, spawn.run, settings=settings)
    assert spawned is not None
    first, child = spawned.tools
    recorded = hook_run(VERSION, "tj-spawn").tool_calls[0].args
    whole = json.dumps(recorded, ensure_ascii=False, separators=(",", ":"))
    assert first.args_cut and first.args_bytes == len(whole.encode()) > 64
    assert first.args == whole[:64]  # ASCII: 64 bytes are 64 characters
    assert (child.agent, child.args, child.args_cut) == (
        "reviewer",
        {"path": "review.md", "content": "looks fine\n"},
        False,
    )


def test_without_the_state_folder_there_are_no_arguments(tmp_path: Path) -> None:
    ctx = context(tmp_path, state=False)
    found = scenario_evidence(ctx.evidence, ctx.run, settings=ctx.settings)
    assert found is None or all(t.args is None for t in found.tools)
