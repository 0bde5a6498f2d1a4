"""Bless proposes only what a real run could show again: one call's arguments (never values of
two calls put together), files that exist after every run, what the agent said (never OpenClaw's
placeholder for it), paths in the workspace; every candidate left out is listed with why."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from clawspec.assertions.arguments import Matcher
from clawspec.bless.invariants import MAX_REPLY_SENTENCES, Observed, Proposal, Settings, propose
from clawspec.bless.observed import _files
from clawspec.contracts.loader import load_contract
from clawspec.reports.model import AttemptEvidence, FileSeen, ToolCallRecord
from clawspec.status import Status
from tests.bless.factory import call, evidence, result
from tests.bless.test_proposals_hostile import PLAIN, _bless, _digest, _save

PLACEHOLDER = "[Malformed diagnostic JSON redacted]"  # what OpenClaw records for a reply with `{`


def _whole(seen: list[AttemptEvidence]) -> Proposal:
    [whole] = propose([Observed("attempt", Status.PASS, 1200, e) for e in seen], Settings())
    return whole


def _of(items: list[Any], kind: str) -> list[dict[str, Any]]:
    return [i.mapping for i in items if i.mapping["type"] == kind]


def _matches_a_call(expected: dict[str, Any], calls: list[ToolCallRecord]) -> bool:
    """Whether `tool_called_with` (match: partial) passes on these calls: OpenClaw's matcher."""
    matcher = Matcher(exact=False, ignore=frozenset())
    return any(not matcher.differences(c.args, expected) for c in calls)


# -- 1. one call's arguments ----------------------------------------------------------------


def test_tool_called_with_states_the_values_of_one_call_never_of_two_calls_merged() -> None:
    a = call("write", path="two/a.md", content="# Zed\n")
    b = call("write", path="two/b.md", content="# Alpha\n")
    runs = [evidence([a, b]), evidence([b, a]), evidence([a, b])]
    whole = _whole(runs)
    proposed = _of(whole.items, "tool_called_with")
    assert proposed == [
        {"type": "tool_called_with", "tool": "write", "args": a.args},
        {"type": "tool_called_with", "tool": "write", "args": b.args},
    ]
    # Each passes on every run, as the assertion matches it: one call holds all its args.
    for item in proposed:
        assert all(_matches_a_call(item["args"], run.tools) for run in runs)


def test_a_call_keeps_only_its_own_values_that_held_and_a_call_inside_another_adds_nothing() -> (
    None
):
    runs = [
        evidence([call("write", path="x.md", mode="w")]),
        evidence([call("write", path="x.md", mode="a"), call("write", path="y.md", mode="w")]),
    ]
    proposed = _of(_whole(runs).items, "tool_called_with")
    # `mode: w` was in every run, but never with `path: x.md` in one call.
    assert proposed == [{"type": "tool_called_with", "tool": "write", "args": {"path": "x.md"}}]
    same = [evidence([call("read", path="a.md"), call("read", path="a.md", limit=5)])] * 2
    assert _of(_whole(same).items, "tool_called_with") == [
        {"type": "tool_called_with", "tool": "read", "args": {"path": "a.md", "limit": 5}}
    ]


# -- 2. files that exist after every run -----------------------------------------------------


def test_a_file_deleted_or_never_written_is_not_proposed_and_is_listed_with_why(
    tmp_path: Path,
) -> None:
    (tmp_path / "kept.md").write_text("# Kept\n", "utf-8")
    tools = [
        call("write", path="kept.md", content="# Kept\n"),
        call("write", path="gone.md", content="# Gone\n"),  # then `exec rm gone.md`
        call("exec", command="rm gone.md"),
        call("edit", path="missing.md", oldText="a", newText="b"),  # failed: no such file
    ]
    assert [f.path for f in _files(tools, tmp_path)] == ["kept.md"]
    runs = [evidence(tools, files=_files(tools, tmp_path)) for _ in range(3)]
    whole = _whole(runs)
    assert _of(whole.items, "artifact_exists") == [{"type": "artifact_exists", "path": "kept.md"}]
    assert [m["path"] for m in _of(whole.items, "artifact_contains")] == ["kept.md"]
    apart = {i.mapping["path"]: i.comment for i in whole.unstable if "path" in i.mapping}
    for path in ("gone.md", "missing.md"):
        assert apart[path] == (
            "held in 0 of 3 runs; written in 3, not there after 3 of them (deleted, or the "
            "write or edit failed)"
        )


def test_a_file_a_delegated_agent_wrote_in_its_own_folder_is_found_there(tmp_path: Path) -> None:
    """OpenClaw puts an agent other than its default one in a folder of its own: a notary's
    `notes/x.md` is `notary/notes/x.md`, not a file "deleted, or the write failed"."""
    (tmp_path / "notary" / "notes").mkdir(parents=True)
    (tmp_path / "notary" / "notes" / "x.md").write_text("# Notarised\n", "utf-8")
    tools = [
        ToolCallRecord(name="sessions_spawn", agent="main", args={"agentId": "notary"}),
        ToolCallRecord(name="write", agent="notary", args={"path": "notes/x.md", "content": "."}),
    ]
    assert [f.path for f in _files(tools, tmp_path)] == ["notary/notes/x.md"]
    variables = {"workspace": str(tmp_path)}
    runs = [evidence(tools, files=_files(tools, tmp_path), variables=variables) for _ in range(2)]
    whole = _whole(runs)
    assert {"type": "artifact_exists", "path": "notary/notes/x.md"} in _of(
        whole.items, "artifact_exists"
    )
    assert not [i for i in whole.unstable if i.mapping.get("path") == "notes/x.md"]


# -- 3. OpenClaw's placeholder is not what the agent said ------------------------------------


def test_openclaws_placeholder_for_a_reply_is_never_proposed_and_is_listed_with_why() -> None:
    runs = [
        evidence([call("read", path="a.md")], reply=PLACEHOLDER),
        evidence([call("read", path="a.md")], reply=PLACEHOLDER),
    ]
    whole = _whole(runs)
    assert _of(whole.items, "reply_contains") == []
    [left] = [i for i in whole.left_out if i.mapping["type"] == "reply_contains"]
    assert left.mapping["text"] == PLACEHOLDER
    assert left.comment == (
        "held in 2 of 2 runs; the sentence is not what the agent said: OpenClaw recorded it "
        f'replaced by its placeholder "{PLACEHOLDER}"'
    )
    # A secret OpenClaw redacted inside a sentence leaves that sentence out, not the others.
    redacted = [evidence([], reply="Key <redacted> was used. The notes are saved.")] * 2
    whole = _whole(redacted)
    assert _of(whole.items, "reply_contains") == [
        {"type": "reply_contains", "text": "The notes are saved."}
    ]
    assert any("Key <redacted>" in i.mapping.get("text", "") for i in whole.left_out)


# -- 4. paths outside the workspace ----------------------------------------------------------


def test_paths_outside_the_workspace_are_left_out_and_the_rest_is_written(
    workspace: Path, write_contract, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for path in (tmp_path / "escape.md", outside / "abs.md", workspace / "in.md"):
        path.write_text("# Heading\n", "utf-8")
    tools = [
        call("write", path="../escape.md"),
        call("write", path=str(outside / "abs.md")),
        call("write", path="in.md"),
    ]
    contract = write_contract(PLAIN)
    seen = evidence(tools, files=_files(tools, workspace), reply="The three files are saved.")
    runs = [(Status.PASS, seen), (Status.PASS, seen)]
    path = _save(workspace / "r.json", result(contract.name, "drafts", _digest(contract), runs))
    assert _bless(contract, "drafts", path, more=("--write",)) == 0
    out = capsys.readouterr().out
    why = "the path is outside the workspace: an artifact assertion names a file in it"
    left = [
        yaml.safe_load(line.removeprefix("#   - ").split("  # ")[0])
        for line in out[out.index("# held, but cannot be written as it was seen") :].splitlines()
        if line.endswith(f"  # {why}")
    ]
    assert left == [
        {"type": "artifact_exists", "path": "../escape.md"},
        {"type": "artifact_exists", "path": str(outside / "abs.md")},
    ]
    then = yaml.safe_load(contract.read_text("utf-8"))["scenarios"][0]["then"]
    paths = [item["path"] for item in then if item["type"].startswith("artifact_")]
    assert paths == ["in.md", "in.md"]  # artifact_exists, artifact_contains
    assert {"type": "reply_contains", "text": "The three files are saved."} in then
    assert not isinstance(load_contract(contract, workspace, dict(os.environ)), list)


# -- 5. every candidate left out is mentioned ------------------------------------------------


def test_a_heading_in_only_some_runs_is_listed_with_its_count() -> None:
    runs = [
        evidence([], files=[FileSeen(path="n.md", sections=["Notes", "Sources"])]),
        evidence([], files=[FileSeen(path="n.md", sections=["Notes", "Sources"])]),
        evidence([], files=[FileSeen(path="n.md", sections=["Notes"])]),
    ]
    whole = _whole(runs)
    assert _of(whole.items, "artifact_contains") == [
        {"type": "artifact_contains", "path": "n.md", "sections": ["Notes"]}
    ]
    [apart] = [i for i in whole.unstable if i.mapping["type"] == "artifact_contains"]
    assert apart.mapping == {"type": "artifact_contains", "path": "n.md", "sections": ["Sources"]}
    assert apart.comment == "held in 2 of 3 runs"


def test_reply_sentences_in_one_run_and_over_the_limit_are_listed() -> None:
    every = [f"Sentence number {n} holds." for n in range(MAX_REPLY_SENTENCES + 2)]
    runs = [evidence([], reply=" ".join([*every, f"Only run {n} said this."])) for n in (1, 2, 3)]
    whole = _whole(runs)
    texts = [m["text"] for m in _of(whole.items, "reply_contains")]
    assert texts == every[:MAX_REPLY_SENTENCES]
    unstable = {i.mapping["text"]: i.comment for i in _replies(whole.unstable)}
    assert unstable == {f"Only run {n} said this.": "held in 1 of 3 runs" for n in (1, 2, 3)}
    over = {i.mapping["text"]: i.comment for i in _replies(whole.over_limit)}
    assert over == {
        text: "held in 3 of 3 runs; a sentence of every reply; not proposed: at most "
        f"{MAX_REPLY_SENTENCES} sentences of the reply are proposed"
        for text in every[MAX_REPLY_SENTENCES:]
    }


def _replies(items: list[Any]) -> list[Any]:
    return [i for i in items if i.mapping["type"] == "reply_contains"]


def test_the_output_lists_what_is_over_a_limit_and_counts_what_it_did_not_list(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(PLAIN)
    every = " ".join(f"Sentence number {n} holds." for n in range(MAX_REPLY_SENTENCES + 1))
    runs = [
        (Status.PASS, evidence([], reply=every + " ".join(f" Run {r} line {n}." for n in range(8))))
        for r in (1, 2)
    ]
    path = _save(workspace / "r.json", result(contract.name, "drafts", _digest(contract), runs))
    assert _bless(contract, "drafts", path) == 0
    out = capsys.readouterr().out
    assert "# held in every run, but over a limit (not proposed):" in out
    over = f"Sentence number {MAX_REPLY_SENTENCES} holds."
    assert f"#   - {{type: reply_contains, text: {over}}}  # held in 2 of 2 runs; " in out
    # 16 sentences held in one run of 2: 10 are listed, the others counted.
    assert out.count("  # held in 1 of 2 runs\n") == 10
    assert "# ... and 6 more reply sentences held in only some runs, not listed" in out
