"""`clawspec bless --from-report` and `--write` through the real CLI, on reports built in code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clawspec.bless.digest import scenario_digest
from clawspec.cli import main
from clawspec.contracts.loader import load_contract
from clawspec.reports.json_report import render_json
from clawspec.reports.model import FileSeen
from clawspec.status import Status
from tests.bless.factory import call, evidence, report, result

# Comments, odd spacing and a flow item: every byte of it must survive --write.
CONTRACT = """\
version: "1.0"   # the format
target: {type: skill, path: skills/news}

# the one we bless
scenarios:
  - name: drafts
    when:
      invoke: "write the draft"   # keep this comment
    then:
      - {type: tool_was_called, tool: read}    # written by hand

      # trailing comment inside then
  - name: other
    when: {invoke: "other"}
    then:
      - type: file_absent
        path: never.md
"""


def _digest(path: Path, index: int = 0) -> str:
    import yaml

    data = yaml.safe_load(path.read_text("utf-8"))
    digest = scenario_digest(data, index)
    assert digest is not None
    return digest


def _good(day: str, tokens: int, order: int) -> object:
    tools = [call("read", path="brief.md"), call("write", path=f"drafts/{day}.md")]
    return evidence(
        tools if order else list(reversed(tools)),
        tokens=tokens,
        reply="The draft is saved. Have a nice day.",
        files=[FileSeen(path=f"drafts/{day}.md", sections=["Draft", "Sources"], fields=None)],
        variables={"today": day},
    )


def _write_report(folder: Path, contract: Path, digest: str | None, runs, name="r.json") -> Path:
    built = report(result(contract.name, "drafts", digest, runs))
    path = folder / name
    path.write_text(render_json(built), encoding="utf-8")
    return path


@pytest.fixture
def contract(write_contract) -> Path:
    return write_contract(CONTRACT)


def _runs():
    return [
        (Status.PASS, _good("2026-11-26", 1840, 0)),
        (Status.PASS, _good("2026-11-27", 2310, 1)),
        (Status.WARN, _good("2026-11-28", 2000, 0)),
        (Status.FAIL, evidence([call("exec", command="rm")], tokens=9999)),
    ]


def test_from_report_prints_the_invariants_with_their_evidence(
    workspace: Path, contract: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write_report(workspace, contract, _digest(contract), _runs())
    before = contract.read_bytes()
    assert main(["bless", str(contract), "--scenario", "drafts", "--from-report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "3 good runs of 4" in out
    assert "left out: attempt 4 of" in out and "(fail: then[0] failed)" in out
    assert "- {type: tool_called_with, tool: write, args: {path: 'drafts/{{today}}.md'}}" in out
    assert (
        "- {type: artifact_contains, path: 'drafts/{{today}}.md', sections: [Draft, Sources]}"
        in out
    )
    assert (
        "- {type: token_budget, max_total_tokens: 3465}  # held in 3 of 3 runs; "
        "tokens 1,840\u20132,310" in out
    )
    assert "allowed_tools: [read, write]}  # allowed_tools is the union of the tools seen" in out
    # Already written by hand: marked, and exec (the failed run's) is nowhere.
    assert "tool: read}  # held in 3 of 3 runs; called 1 time  (already in the contract)" in out
    assert "exec" not in out
    assert "2026-11-2" not in out  # no literal date anywhere
    assert contract.read_bytes() == before  # without --write nothing is written


def test_an_item_the_contract_states_otherwise_is_not_called_already_there(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    """The contract's own token_budget is kept, never replaced: the proposal says so with the
    contract's value, not "(already in the contract)" as if the two agreed."""
    mine = CONTRACT.replace(
        "      - {type: tool_was_called, tool: read}    # written by hand\n",
        "      - {type: tool_was_called, tool: read}    # written by hand\n"
        "      - {type: token_budget, max_total_tokens: 99000}\n",
    )
    contract = write_contract(mine)
    path = _write_report(workspace, contract, _digest(contract), _runs())
    assert main(["bless", str(contract), "--scenario", "drafts", "--from-report", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "- {type: token_budget, max_total_tokens: 3465}  # held in 3 of 3 runs; tokens "
        "1,840\u20132,310; limit = highest x 1.5  (the contract has its own, kept: {type: "
        "token_budget, max_total_tokens: 99000})"
    ) in out


def test_write_appends_only_new_items_and_keeps_every_other_byte(
    workspace: Path, contract: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write_report(workspace, contract, _digest(contract), _runs())
    before = contract.read_text("utf-8")
    args = ["bless", str(contract), "--scenario", "drafts", "--from-report", str(path), "--write"]
    assert main(args) == 0
    after = contract.read_text("utf-8")
    anchor = "      - {type: tool_was_called, tool: read}    # written by hand\n"
    at = before.index(anchor) + len(anchor)
    assert after.startswith(before[:at])
    assert after.endswith(before[at:])
    block = after[at : at + len(after) - len(before)]
    lines = block.splitlines()
    assert all(line.startswith("      - {type: ") for line in lines)
    assert not any("tool: read}" in line for line in lines)  # already present
    assert any("tool: write}" in line for line in lines)
    loaded = load_contract(contract, workspace, dict(os.environ))
    assert not isinstance(loaded, list), loaded
    then = loaded.contract.scenarios[0].then
    assert [a.type for a in then][:2] == ["tool_was_called", "tool_was_called"]
    # Blessing again writes nothing: every item is there now (its digest still matches).
    assert main(args) == 0
    assert "nothing to write" in capsys.readouterr().out
    assert contract.read_text("utf-8") == after


CONVERSATION = """\
version: "1.0"
target: {type: agent, path: agents/concierge}
scenarios:
  - name: talk
    turns:
      - say: "My name is Zed."
      - say: "What is my name?"
        then:
          - type: reply_contains
            text: Zed
"""


def test_write_goes_into_each_turn_and_adds_a_then_to_a_turn_without_one(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = write_contract(CONVERSATION)

    def convo(tokens: int) -> object:
        turns = [
            evidence([call("memory_store", key="name")], reply="Nice to meet you, Zed.", tokens=90),
            evidence([], reply="Your name is Zed.", tokens=tokens - 90),
        ]
        return evidence([call("memory_store", key="name")], tokens=tokens, turns=turns)

    runs = [(Status.PASS, convo(300)), (Status.PASS, convo(320))]
    built = report(result(contract.name, "talk", _digest(contract), runs))
    path = workspace / "r.json"
    path.write_text(render_json(built), encoding="utf-8")
    args = ["bless", str(contract), "--scenario", "talk", "--from-report", str(path), "--write"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "# turn 1's then:" in out and "# turn 2's then:" in out
    after = contract.read_text("utf-8")
    first_turn = '      - say: "My name is Zed."\n'
    at = CONVERSATION.index(first_turn) + len(first_turn)
    assert after.startswith(CONVERSATION[:at])
    assert after[at:].startswith(
        "        then:\n"
        "          - {type: tool_was_called, tool: memory_store}  # held in 2 of 2 runs"
    )
    # Turn 2's then keeps its hand-written item; the new ones follow it at its column.
    assert (
        "            text: Zed\n          - {type: reply_contains, text: Your name is Zed.}"
        in after
    )
    # The scenario had no `then`: one is added at the scenario's keys' column.
    assert after.endswith("\n") and "\n    then:\n      - {type: run_completed}" in after
    loaded = load_contract(contract, workspace, dict(os.environ))
    assert not isinstance(loaded, list), loaded
    (scenario,) = loaded.contract.scenarios
    assert [len(t.then) for t in scenario.turns] == [3, 2]
    assert [a.type for a in scenario.then] == [
        "run_completed",
        "tool_not_permitted",
        "token_budget",
    ]


def test_a_file_changed_since_it_was_read_is_refused_and_the_proposal_still_printed(
    workspace: Path, contract: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    path = _write_report(workspace, contract, _digest(contract), _runs())
    from clawspec.bless import write as writing

    real = writing.insert_items

    def edited_meanwhile(text, scenario, inserts):
        contract.write_text(CONTRACT + "# edited by the user\n", encoding="utf-8")
        return real(text, scenario, inserts)

    monkeypatch.setattr(writing, "insert_items", edited_meanwhile)
    args = ["bless", str(contract), "--scenario", "drafts", "--from-report", str(path), "--write"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "changed since bless read it: nothing was written" in captured.err
    assert "tool: write}" in captured.out  # the proposal was printed first
    assert contract.read_text("utf-8") == CONTRACT + "# edited by the user\n"
    assert [p.name for p in contract.parent.iterdir() if p.name.startswith(".")] == []


def test_a_write_that_would_not_validate_is_refused_and_the_file_untouched(
    workspace: Path, contract: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    path = _write_report(workspace, contract, _digest(contract), _runs())
    from clawspec.bless import write as writing

    monkeypatch.setattr(
        writing,
        "flow",
        lambda mapping: "{type: tool_was_called}",  # no `tool`: invalid
    )
    before = contract.read_bytes()
    args = ["bless", str(contract), "--scenario", "drafts", "--from-report", str(path), "--write"]
    assert main(args) == 2
    assert "would not validate" in capsys.readouterr().err
    assert contract.read_bytes() == before
    assert sorted(p.name for p in contract.parent.iterdir()) == sorted(
        ["clawspec.yaml", contract.name, "r.json"]
    )


@pytest.mark.parametrize(
    ("change", "exit_code", "said"),
    [
        ("digest", 2, "another version of scenario 'drafts'"),
        ("no-digest", 2, "without the contract's digest"),
        ("no-evidence", 2, "no per-attempt evidence"),
        ("one-good", 1, "fewer than 2 good runs"),
        ("one-recording", 2, "every attempt replayed one recording"),
    ],
)
def test_bad_reports_are_refused_naming_why(
    workspace: Path, contract: Path, capsys: pytest.CaptureFixture[str], change, exit_code, said
) -> None:
    digest = _digest(contract)
    runs = _runs()
    built = result(contract.name, "drafts", digest, runs)
    if change == "digest":
        built = built.model_copy(update={"contract_digest": "0" * 64})
    elif change == "no-digest":
        built = built.model_copy(update={"contract_digest": None})
    elif change == "no-evidence":
        built = result(contract.name, "drafts", digest, [(s, None) for s, _ in runs])
    elif change == "one-good":
        built = result(contract.name, "drafts", digest, [runs[0], runs[3], runs[3]])
    elif change == "one-recording":
        from clawspec.reports.model import ModelTrafficResult

        built = result(contract.name, "drafts", digest, runs, recording="cassettes/drafts")
        traffic = ModelTrafficResult(mode="replay", cassette="cassettes/drafts", calls=1)
        built = built.model_copy(update={"model_traffic": traffic})
    path = workspace / "r.json"
    path.write_text(render_json(report(built)), encoding="utf-8")
    code = main(["bless", str(contract), "--scenario", "drafts", "--from-report", str(path)])
    assert code == exit_code
    assert said in capsys.readouterr().err


def test_usage_errors(workspace: Path, contract: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bless", str(contract), "--scenario", "nope", "--from-report", "x.json"]) == 2
    assert "has no scenario 'nope' (it has: 'drafts', 'other')" in capsys.readouterr().err
    assert main(["bless", str(contract), "--scenario", "drafts", "--runs", "1"]) == 2
    assert "fewer than 2 runs" in capsys.readouterr().err
    (workspace / "bad.json").write_text(json.dumps({"version": 1}), encoding="utf-8")
    assert main(["bless", str(contract), "--scenario", "drafts", "--from-report", "bad.json"]) == 2
    assert "is not a JSON report of this ClawSpec version" in capsys.readouterr().err
    broken = workspace / "broken.clawspec.yaml"
    broken.write_text('version: "1.0"\nscenarios: 3\n', encoding="utf-8")
    assert main(["bless", str(broken), "--scenario", "drafts", "--from-report", "bad.json"]) == 2
