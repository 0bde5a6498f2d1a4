"""Where `--write` puts the items: after the scope's last `then` line, like its siblings, and
nowhere else."""

from __future__ import annotations

import pytest
import yaml

from clawspec.bless.write import Insert, WriteRefused, flow, insert_items

ITEM = ({"type": "run_completed"}, "held in 2 of 2 runs")


def test_crlf_and_a_missing_last_newline_are_kept() -> None:
    text = (
        'version: "1.0"\r\ntarget: {type: skill, path: s}\r\nscenarios:\r\n  - name: a\r\n'
        "    when: {invoke: x}\r\n    then:\r\n      - {type: file_absent, path: y}"
    )
    out = insert_items(text, "a", [Insert(None, [ITEM])])
    assert out == text + "\r\n      - {type: run_completed}  # held in 2 of 2 runs\r\n"


def test_the_block_goes_after_a_multi_line_item_and_before_the_next_scenario() -> None:
    text = """\
scenarios:
  - name: a
    then:
    - type: artifact_contains   # items at the key's column
      path: x.md

      sections: [A]
    # a comment of the next scenario
  - name: b
    then: [{type: run_completed}]
"""
    out = insert_items(text, "a", [Insert(None, [ITEM])])
    at = text.index("    # a comment")
    assert out == text[:at] + "    - {type: run_completed}  # held in 2 of 2 runs\n" + text[at:]
    assert yaml.safe_load(out)["scenarios"][0]["then"][1] == {"type": "run_completed"}


def test_a_flow_then_is_refused_with_the_reason() -> None:
    text = "scenarios:\n  - name: b\n    then: [{type: run_completed}]\n"
    with pytest.raises(WriteRefused, match="not a block list"):
        insert_items(text, "b", [Insert(None, [ITEM])])


def test_items_are_one_line_flow_mappings_that_load_back() -> None:
    item = {
        "type": "tool_called_with",
        "tool": "write",
        "args": {"content": {"matches": "^# A\\n$"}, "n": 3, "flag": "yes", "q": "it's"},
    }
    text = flow(item)
    assert "\n" not in text
    assert yaml.safe_load(text) == item
