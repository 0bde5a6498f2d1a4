"""The plugin-output reader, against records saved from a real OpenClaw 2026.9.6 gateway.

fixtures/plugin-real.jsonl and fixtures/openclaw-real.log come from one gateway session: two
write-file hook runs (1000+50 and 1100+7 tokens), a sessions_spawn delegation (parent 500+20,
600+5; child 300+30, 310+3), two concurrent runs, and a run whose model answered HTTP 500.
"""

from __future__ import annotations

import json
from pathlib import Path

from clawspec.gateway.plugin_records import (
    read_plugin_file,
    read_plugin_records,
    run_family,
    sum_usage,
)

FIXTURES = Path(__file__).parent / "fixtures"
PLUGIN = FIXTURES / "plugin-real.jsonl"
LOG = FIXTURES / "openclaw-real.log"


def _hook_sessions() -> dict[str, str]:
    """logicalSessionKey we sent -> embedded sessionKey, from the gateway/hooks log lines."""
    out = {}
    for line in LOG.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        arg = rec.get("1")
        if '"gateway/hooks"' in rec.get("0", "") and isinstance(arg, dict) and "sessionKey" in arg:
            out[arg["logicalSessionKey"]] = arg["sessionKey"]
    return out


def _root_run(records: list, session_key: str) -> str:
    return next(r.run_id for r in records if r.kind == "run" and r.session_key == session_key)


def test_usage_and_tools_of_a_hook_run() -> None:
    records = read_plugin_records(PLUGIN)
    sessions = _hook_sessions()
    run_id = _root_run(records, sessions["hook:clawspec:w1"])
    usage = sum_usage(records, {run_id})
    assert (usage.input, usage.output, usage.total, usage.calls) == (2100, 57, 2157, 2)
    tools = [r for r in records if r.kind == "tool" and r.run_id == run_id]
    assert [(t.tool_name, t.phase) for t in tools] == [("write", "started"), ("write", "completed")]
    # model_usage is the per-session summary of the same calls.
    session = sessions["hook:clawspec:w1"]
    summary = [r for r in records if r.kind == "model_usage" and r.session_key == session]
    assert [(s.input_tokens, s.output_tokens, s.total_tokens) for s in summary] == [
        (2100, 57, 2157)
    ]


def test_subagent_is_linked_to_its_parent() -> None:
    records = read_plugin_records(PLUGIN)
    parent = _root_run(records, _hook_sessions()["hook:clawspec:s1"])
    links = [r for r in records if r.kind == "subagent"]
    assert len(links) == 1
    link = links[0]
    assert link.parent_run_id == parent
    assert link.child_session_key and ":subagent:" in link.child_session_key
    assert link.parent_tool_call_id == "call_spawn_0_0"
    assert run_family(records, parent) == {parent, link.child_run_id}
    assert sum_usage(records, run_family(records, parent)).input == 500 + 600 + 300 + 310
    child_tools = [
        r.tool_name
        for r in records
        if r.kind == "tool" and r.phase == "completed" and r.run_id == link.child_run_id
    ]
    assert child_tools == ["write"]


def test_concurrent_runs_stay_apart() -> None:
    records = read_plugin_records(PLUGIN)
    sessions = _hook_sessions()
    a = sum_usage(records, {_root_run(records, sessions["hook:clawspec:ca"])})
    b = sum_usage(records, {_root_run(records, sessions["hook:clawspec:cb"])})
    assert (a.input, a.output) == (23, 3)
    assert (b.input, b.output) == (43, 3)


def test_model_failure_is_visible() -> None:
    records = read_plugin_records(PLUGIN)
    session = _hook_sessions()["hook:clawspec:f1"]
    errors = [
        r
        for r in records
        if r.kind == "model_call" and r.phase == "error" and r.session_key == session
    ]
    assert len(errors) == 8  # the gateway retried 8 times
    message = next(r for r in records if r.kind == "message" and r.session_key == session)
    assert message.outcome == "error"
    assert message.error and "HTTP 500" in message.error


def test_truncated_last_line_and_unknown_kinds(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    good = json.dumps({"v": 1, "kind": "tool", "toolName": "exec", "phase": "completed"})
    future = json.dumps({"v": 2, "kind": "future_thing", "newField": [1]})
    path.write_text(f"{good}\nnot json\n{future}\n" + '{"v": 1, "kind": "to', encoding="utf-8")
    result = read_plugin_file(path)
    assert [r.kind for r in result.records] == ["tool", "future_thing"]
    assert result.records[0].tool_name == "exec"
    assert result.records[1].extra == {"newField": [1]} and result.records[1].version == 2
    # The half-written line is picked up once the writer finishes it.
    with path.open("a", encoding="utf-8") as fh:
        fh.write('ol", "toolName": "read"}\n')
    more = read_plugin_file(path, result.next_offset)
    assert [r.tool_name for r in more.records] == ["read"]
    assert read_plugin_records(tmp_path / "missing.jsonl") == []
