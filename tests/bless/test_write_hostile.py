"""`--write` on contracts laid out in ways that line shapes misread: multi-line scalars that hold
`#` lines or trailing blank lines, lists shared through YAML anchors, flow-style owners, a
symlinked contract, and values holding control characters."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from clawspec.bless import write as writing
from clawspec.bless.write import Insert, WriteRefused, flow, insert_items, write_contract
from clawspec.cli import main
from clawspec.contracts.loader import load_contract
from tests.bless.test_bless_cli import _digest, _runs, _write_report

ITEM = ({"type": "run_completed"}, "held in 2 of 2 runs")
LINE = "      - {type: run_completed}  # held in 2 of 2 runs\n"

HEAD = 'version: "1.0"\ntarget: {type: skill, path: skills/news}\nscenarios:\n'
OTHER = (
    "  - name: other\n    when: {invoke: y}\n    then:\n"
    "      - {type: tool_was_called, tool: read}\n"
)


def _then_of(text: str, name: str = "drafts") -> list:
    (scenario,) = [s for s in yaml.safe_load(text)["scenarios"] if s["name"] == name]
    return scenario["then"]


# -- 1. where the last item really ends ---------------------------------------------------------

MULTI_LINE = {
    # A double-quoted text continued on a line that starts with `#`: not a comment.
    "double-quoted": '        text: "Hello\n          # world"\n',
    # A literal block holding a blank line and a `#` line.
    "block": "        text: |\n          Hello\n\n          # not a comment\n",
    # Keep chomping: the trailing blank lines are the value's own.
    "keep": "        text: |+\n          Hello\n\n\n",
    "folded-keep": "        text: >+\n          Hello\n\n",
    # A plain text on two lines, the second starting like a comment would not.
    "plain": "        text: Hello\n          world\n",
}


@pytest.mark.parametrize("last", list(MULTI_LINE.values()), ids=list(MULTI_LINE))
def test_the_block_goes_after_a_multi_line_scalar_and_leaves_it_as_it_was(last: str) -> None:
    scenario = (
        "  - name: drafts\n    when: {invoke: x}\n    then:\n      - type: reply_contains\n" + last
    )
    text = HEAD + scenario + OTHER
    out = insert_items(text, "drafts", [Insert(None, [ITEM])])
    # The block comes right after the scalar (its kept blank lines included), before `other`.
    assert out == HEAD + scenario + LINE + OTHER
    assert _then_of(out) == [*_then_of(text), {"type": "run_completed"}]
    assert _then_of(out, "other") == _then_of(text, "other")


def test_a_keep_scalar_at_the_end_of_the_file_keeps_its_blank_lines() -> None:
    text = (
        HEAD
        + "  - name: drafts\n    then:\n      - type: reply_contains\n"
        + "        text: |+\n          Hi\n\n"
    )
    out = insert_items(text, "drafts", [Insert(None, [ITEM])])
    assert out == text + LINE
    assert _then_of(out)[0]["text"] == "Hi\n\n"


def test_a_scope_without_then_gets_it_after_its_multi_line_scalar() -> None:
    text = (
        HEAD + '  - name: drafts\n    when:\n      invoke: "write\n        # the draft"\n' + OTHER
    )
    out = insert_items(text, "drafts", [Insert(None, [ITEM])])
    at = text.index(OTHER)
    assert out == text[:at] + "    then:\n" + LINE + text[at:]
    assert yaml.safe_load(out)["scenarios"][0]["when"] == {"invoke": "write # the draft"}


def test_comments_after_the_last_item_stay_after_the_block() -> None:
    text = (
        HEAD
        + "  - name: drafts\n    then:\n      - type: reply_contains\n        text: hi\n"
        + "\n        # about hi\n    # about other\n"
        + OTHER
    )
    out = insert_items(text, "drafts", [Insert(None, [ITEM])])
    at = text.index("\n\n        # about hi") + 1
    assert out == text[:at] + LINE + text[at:]


def test_a_text_that_would_not_read_as_the_old_items_plus_the_new_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (
        HEAD
        + "  - name: drafts\n    then:\n      - type: reply_contains\n"
        + "        text: |\n          Hello\n\n          # not a comment\n"
    )
    # Placed where the old line heuristics placed it: inside the scalar.
    inside = text.index("\n          # not") + 1
    monkeypatch.setattr(writing, "_content_end", lambda text, node: inside - 1)
    with pytest.raises(
        WriteRefused, match=r"plus exactly the proposed items.*add the items by hand"
    ):
        insert_items(text, "drafts", [Insert(None, [ITEM])])


def test_a_double_quoted_last_value_through_the_cli_keeps_the_value(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        HEAD
        + "  - name: drafts\n    when: {invoke: x}\n    then:\n      - type: reply_contains\n"
        + '        text: "Hello\n          # world"\n'
        + OTHER
    )
    contract = write_contract(text)
    path = _write_report(workspace, contract, _digest(contract), _runs())
    args = ["bless", str(contract), "--scenario", "drafts", "--from-report", str(path), "--write"]
    assert main(args) == 0
    after = contract.read_text("utf-8")
    assert after.startswith(text[: text.index(OTHER)]) and after.endswith(OTHER)
    then = _then_of(after)
    assert then[0] == {"type": "reply_contains", "text": "Hello # world"}
    assert len(then) > 1 and {"type": "run_completed"} in then
    loaded = load_contract(contract, workspace, dict(os.environ))
    assert not isinstance(loaded, list), loaded


# -- 2. lists shared through anchors ------------------------------------------------------------

SHARED = {
    "anchored-block": (
        "  - name: drafts\n    then: &common\n      - {type: tool_was_called, tool: read}\n"
        "  - name: other\n    then: *common\n",
        "drafts",
    ),
    "alias": (
        "  - name: other\n    then: &common\n      - {type: tool_was_called, tool: read}\n"
        "  - name: drafts\n    then: *common\n",
        "drafts",
    ),
    "anchored-flow": (
        "  - name: drafts\n    then: &common [{type: tool_was_called, tool: read}]\n"
        "  - name: other\n    then: *common\n",
        "drafts",
    ),
    "anchored-scenario": (
        "  - &base\n    name: drafts\n    when: {invoke: y}\n    then:\n"
        "      - {type: tool_was_called, tool: read}\n"
        "  - <<: *base\n    name: other\n",
        "drafts",
    ),
    "merged-then": (
        "  - &base\n    name: other\n    then:\n      - {type: tool_was_called, tool: read}\n"
        "  - <<: *base\n    name: drafts\n    when: {invoke: x}\n",
        "drafts",
    ),
}


@pytest.mark.parametrize(("body", "name"), list(SHARED.values()), ids=list(SHARED))
def test_a_then_shared_through_an_anchor_is_refused(body: str, name: str) -> None:
    with pytest.raises(WriteRefused, match=r"shared through a YAML anchor.*add the items by hand"):
        insert_items(HEAD + body, name, [Insert(None, [ITEM])])


def test_a_turn_shared_through_an_anchor_is_refused() -> None:
    text = HEAD + (
        "  - name: drafts\n    turns:\n      - &hello\n        say: hi\n"
        "        then:\n          - {type: reply_contains, text: hi}\n      - *hello\n"
    )
    for turn in (0, 1):
        with pytest.raises(WriteRefused, match=r"shared through a YAML anchor"):
            insert_items(text, "drafts", [Insert(turn, [ITEM])])


def test_an_anchor_on_an_item_or_elsewhere_does_not_stop_the_write() -> None:
    text = HEAD + (
        "  - name: drafts\n    when: &w {invoke: x}\n    then:\n"
        "      - &read {type: tool_was_called, tool: read}\n"
        "  - name: other\n    when: *w\n    then:\n      - *read\n"
    )
    out = insert_items(text, "drafts", [Insert(None, [ITEM])])
    at = text.index("  - name: other")
    assert out == text[:at] + LINE + text[at:]


def test_a_shared_then_through_the_cli_is_refused_with_the_proposal_printed(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEAD + (
        "  - name: drafts\n    when: {invoke: x}\n    then: &common\n"
        "      - {type: tool_was_called, tool: read}\n"
        "  - name: other\n    when: {invoke: y}\n    then: *common\n"
    )
    contract = write_contract(text)
    path = _write_report(workspace, contract, _digest(contract), _runs())
    args = ["bless", str(contract), "--scenario", "drafts", "--from-report", str(path), "--write"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "shared through a YAML anchor" in captured.err
    assert "tool: write}" in captured.out  # the proposal was printed
    assert contract.read_text("utf-8") == text


# -- 3. a symlinked contract --------------------------------------------------------------------


def test_writing_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "the.clawspec.yaml"
    real.write_text("old\n", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.clawspec.yaml"
    link.symlink_to(Path("real") / "the.clawspec.yaml")
    checked: list[Path] = []

    def validate(candidate: Path) -> list[str]:
        checked.append(candidate)
        return []

    write_contract(link, b"old\n", "new\n", validate)
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "the.clawspec.yaml")
    assert real.read_text("utf-8") == "new\n"
    assert real.stat().st_mode & 0o777 == 0o640
    # Validated next to the link (where its relative paths are read from); nothing left over.
    assert [c.parent for c in checked] == [tmp_path]
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["real", "the.clawspec.yaml", "link.clawspec.yaml"]
    )


def test_a_symlinked_contract_through_the_cli_stays_a_link(
    workspace: Path, write_contract, capsys: pytest.CaptureFixture[str]
) -> None:
    real = write_contract(
        HEAD
        + "  - name: drafts\n    when: {invoke: x}\n    then:\n"
        + "      - {type: tool_was_called, tool: read}\n",
        "real/the.clawspec.yaml",
    )
    link = workspace / "link.clawspec.yaml"
    link.symlink_to(Path("real") / "the.clawspec.yaml")
    before = real.read_text("utf-8")
    path = _write_report(workspace, real, _digest(real), _runs())
    path.write_text(
        path.read_text("utf-8").replace('"the.clawspec.yaml', '"real/the.clawspec.yaml')
    )
    args = ["bless", str(link), "--scenario", "drafts", "--from-report", str(path), "--write"]
    assert main(args) == 0, capsys.readouterr()
    assert link.is_symlink()
    after = real.read_text("utf-8")
    assert after.startswith(before) and "tool: write}" in after[len(before) :]


# -- 4. values holding control characters -------------------------------------------------------

HOSTILE = [
    "a\rb",
    "a\r\nb",
    "line\nnext",
    "tab\there",
    "nul\0byte",
    "bell\a esc\x1b del\x7f c1\x80\x9f nel\x85",
    "sep\u2028par\u2029",
    "bom\ufeff nbsp\xa0",
    "it's",
    'say "hi"',
    "back\\slash \\n",
    "  leading and trailing  ",
    " ",
    "",
    "# not a comment",
    "key: value",
    "a #b",
    "- dash",
    "[not, a, list]",
    "{not: a map}",
    "*alias &anchor !tag %dir @at `tick`",
    "yes",
    "null",
    "1.0",
    "0x1F",
    "2026-11-29",
    "~",
    "Zoë 名前 🎉 \U0001f600",
    "\ud800 lone surrogate",
    "\ufffe\uffff",
]


@pytest.mark.parametrize("value", HOSTILE, ids=[repr(v) for v in HOSTILE])
def test_every_value_reads_back_exactly_as_observed(value: str) -> None:
    item = {"type": "tool_called_with", "tool": "write", "args": {"content": value, value: 1}}
    text = flow(item)
    assert len(text.splitlines()) == 1 and "\r" not in text and "\u2028" not in text
    assert yaml.safe_load(text) == item
    contract = HEAD + "  - name: drafts\n    then:\n      - {type: run_completed}\n"
    out = insert_items(contract, "drafts", [Insert(None, [(item, "seen")])])
    out.encode("utf-8")  # written as escapes: even a lone surrogate can be saved
    assert _then_of(out)[-1] == item


# -- 5. flow-style owners -----------------------------------------------------------------------

FLOW = {
    "flow-turn": ('  - name: drafts\n    turns:\n      - {say: "My name is Zed."}\n', 0),
    "flow-turn-with-then": (
        "  - name: drafts\n    turns:\n      - {say: hi, then: [{type: run_completed}]}\n",
        0,
    ),
    "flow-turns": ("  - name: drafts\n    turns: [{say: hi}]\n", 0),
    "flow-scenario": ("  - {name: drafts, when: {invoke: x}}\n", None),
}


@pytest.mark.parametrize(("body", "turn"), list(FLOW.values()), ids=list(FLOW))
def test_an_owner_written_in_flow_style_is_refused_with_the_reason(
    body: str, turn: int | None
) -> None:
    with pytest.raises(WriteRefused, match=r"flow style.*add the items by hand"):
        insert_items(HEAD + body, "drafts", [Insert(turn, [ITEM])])


def test_a_flow_scenarios_list_is_refused_with_the_reason() -> None:
    text = (
        'version: "1.0"\ntarget: {type: skill, path: s}\n'
        "scenarios: [{name: drafts, then: [{type: run_completed}]}]\n"
    )
    with pytest.raises(WriteRefused, match=r"flow style.*add the items by hand"):
        insert_items(text, "drafts", [Insert(None, [ITEM])])


def test_two_blocks_at_the_end_of_a_file_without_a_last_newline_get_one_line_break() -> None:
    text = HEAD + (
        "  - name: drafts\n    turns:\n      - say: hi\n        then:\n"
        "          - {type: reply_contains, text: hi}"
    )
    out = insert_items(text, "drafts", [Insert(0, [ITEM]), Insert(None, [ITEM])])
    assert out == text + "\n    " + LINE + "    then:\n" + LINE


def test_a_merge_that_brings_no_then_does_not_stop_the_write() -> None:
    text = HEAD + (
        "  - &defaults\n    name: other\n    when: {invoke: y}\n    then:\n"
        "      - {type: tool_was_called, tool: read}\n"
        "  - <<: *defaults\n    name: drafts\n    then:\n      - {type: run_completed}\n"
    )
    out = insert_items(text, "drafts", [Insert(None, [({"type": "token_budget"}, "c")])])
    assert out == text + "      - {type: token_budget}  # c\n"
    assert _then_of(out, "other") == _then_of(text, "other")


def test_a_scope_with_nothing_to_add_beside_others_does_not_stop_the_write() -> None:
    """A conversation's turn where nothing held gets an insert without items: the turns and
    the scenario that do get items are written, and the empty one is left as it was."""
    text = (
        'version: "1.0"\n'
        "target: {type: agent, path: agents/main}\n"
        "scenarios:\n"
        "  - name: talk\n"
        "    turns:\n"
        '      - say: "My name is Zed."\n'
        '      - say: "What is my name?"\n'
        "        then:\n"
        "          - {type: reply_contains, text: Zed}\n"
    )
    new = insert_items(
        text,
        "talk",
        [
            Insert(0, []),
            Insert(1, [({"type": "reply_contains", "text": "Your name is Zed."}, "held")]),
            Insert(None, [({"type": "run_completed"}, "held")]),
        ],
    )
    data = yaml.safe_load(new)["scenarios"][0]
    assert "then" not in data["turns"][0]
    assert data["turns"][1]["then"][-1] == {"type": "reply_contains", "text": "Your name is Zed."}
    assert data["then"] == [{"type": "run_completed"}]
    assert new.startswith(text)
