"""The behaviour diff on tool arguments: volatile parts left out, names only against a baseline
without arguments, rendered briefly by every output that lists behaviour changes."""

from __future__ import annotations

from typing import Any

from clawspec.config.settings import RegressionSettings, VariantSettings
from clawspec.regression.behaviour import MAX_ARG_CHANGES, behaviour_diff
from clawspec.regression.compare import compare
from clawspec.regression.variants import with_variants
from clawspec.reports.changes import describe_behaviour
from clawspec.reports.model import ScenarioEvidence, ToolCallRecord
from tests.reports.factory import report, scenario


def calls(*pairs: tuple[str, Any]) -> ScenarioEvidence:
    return ScenarioEvidence(tools=[ToolCallRecord(name=name, args=args) for name, args in pairs])


def test_a_changed_argument_is_named_with_both_values() -> None:
    before = calls(("read", {"path": "in.md"}), ("write", {"path": "a.md", "content": "x"}))
    now = calls(("read", {"path": "in.md"}), ("write", {"path": "b.md", "content": "x"}))
    assert behaviour_diff(now, before) == {
        "tools_args_changed": {
            "write": [{"call": 1, "changed": {"path": {"baseline": "a.md", "current": "b.md"}}}]
        }
    }


def test_volatile_parts_are_not_changes() -> None:
    before = calls(("write", {"path": "log-2026-11-01.md", "id": "0123456789abcdef0123"}))
    now = calls(("write", {"path": "log-2026-11-29.md", "id": "fedcba9876543210fedc"}))
    assert behaviour_diff(now, before) == {}
    # The config's own patterns apply, in place of the defaults.
    runs = (calls(("exec", {"cmd": "job-41 start"})), calls(("exec", {"cmd": "job-42 start"})))
    assert behaviour_diff(*runs)
    assert behaviour_diff(*runs, volatile_patterns=[r"job-\d+"]) == {}


def test_a_baseline_without_arguments_is_compared_by_names_only() -> None:
    older = calls(("write", None), ("read", None))  # a report of an older ClawSpec
    now = calls(("write", {"path": "b.md"}), ("read", {"path": "c.md"}))
    assert behaviour_diff(now, older) == {}
    # A call whose arguments one side lacks is not compared; the others are.
    partly = calls(("write", None), ("read", {"path": "x.md"}))
    assert behaviour_diff(now, partly) == {
        "tools_args_changed": {
            "read": [{"call": 1, "changed": {"path": {"baseline": "x.md", "current": "c.md"}}}]
        }
    }


def test_keys_one_side_lacks_and_arguments_that_are_no_mapping() -> None:
    before = calls(("write", {"path": "a.md", "mode": "w"}), ("exec", ["ls"]))
    now = calls(("write", {"path": "a.md", "append": True}), ("exec", ["ls", "-l"]))
    assert behaviour_diff(now, before)["tools_args_changed"] == {
        "write": [{"call": 1, "changed": {"mode": {"baseline": "w"}, "append": {"current": True}}}],
        "exec": [
            {"call": 1, "changed": {"(arguments)": {"baseline": ["ls"], "current": ["ls", "-l"]}}}
        ],
    }


def test_cut_arguments_are_compared_only_with_cut_ones() -> None:
    cut = ToolCallRecord(name="write", args='{"path":"a.md","content":"xx', args_cut=True)
    whole = ToolCallRecord(name="write", args={"path": "b.md"})
    assert behaviour_diff(ScenarioEvidence(tools=[whole]), ScenarioEvidence(tools=[cut])) == {}
    other = cut.model_copy(update={"args": '{"path":"b.md","content":"xx'})
    changed = behaviour_diff(ScenarioEvidence(tools=[other]), ScenarioEvidence(tools=[cut]))
    assert list(changed["tools_args_changed"]["write"][0]["changed"]) == ["(arguments)"]


def test_the_diff_stays_small_for_a_loop_and_long_values() -> None:
    before = calls(*[("read", {"path": f"a{i}.md", "text": "x" * 5000}) for i in range(50)])
    now = calls(*[("read", {"path": f"b{i}.md", "text": "y" * 5000}) for i in range(50)])
    listed = behaviour_diff(now, before)["tools_args_changed"]["read"]
    assert len(listed) == MAX_ARG_CHANGES
    text = listed[0]["changed"]["text"]["current"]
    assert len(text) == 200 and text.endswith("…")


def test_the_line_every_output_shows() -> None:
    diff = {
        "tools_args_changed": {
            "write": [
                {"call": 2, "changed": {"path": {"baseline": "a.md", "current": "b.md"}}},
                {"call": 3, "changed": {"mode": {"current": "append"}}},
            ]
        }
    }
    assert describe_behaviour(diff) == [
        "'write' arguments changed: path 'a.md' → 'b.md' (call 2; 1 more call(s))"
    ]
    many = {"tools_args_changed": {"exec": [{"call": 1, "changed": {
        "cmd": {"baseline": "ls", "current": "ls -l"}, "cwd": {"baseline": "/"},
        "env": {"current": {"A": 1}},
    }}]}}  # fmt: skip
    assert describe_behaviour(many) == [
        "'exec' arguments changed: cmd 'ls' → 'ls -l', cwd '/' → (none) "
        "(call 1; 1 more argument(s))"
    ]


def test_the_baseline_comparison_and_the_variants_carry_it() -> None:
    before = calls(("write", {"path": "a.md"}))
    now = calls(("write", {"path": "b.md"}))
    expected = {
        "write": [{"call": 1, "changed": {"path": {"baseline": "a.md", "current": "b.md"}}}]
    }
    (item,) = compare(
        report(scenario("notes", "pass", evidence=now)),
        report(scenario("notes", "pass", evidence=before)),
    ).scenarios
    assert item.details["behaviour"] == {"tools_args_changed": expected}
    both = report(
        scenario("notes", "pass", evidence=before, variant="a"),
        scenario("notes", "pass", evidence=now, variant="b"),
    )
    variants = [VariantSettings(name="a"), VariantSettings(name="b")]
    judged = with_variants(both, variants, "a", RegressionSettings())
    (gate,) = judged.variant_comparisons
    (change,) = gate.scenarios
    assert change.details["behaviour"] == {"tools_args_changed": expected}
