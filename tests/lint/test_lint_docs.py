"""The guide's lint rule table is generated from the rule registry and must be current."""

from __future__ import annotations

from pathlib import Path

from clawspec.lint.docs import END, START, render_rules
from clawspec.lint.rules import RULES

README = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def test_readme_lint_rule_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == render_rules(), (
        "docs/guide.md lint rules are stale: run `python -m clawspec.lint.docs`"
    )


def test_every_rule_is_documented_once() -> None:
    text = README.read_text(encoding="utf-8")
    for rule_id in RULES:
        assert text.count(f"| `{rule_id}` |") == 1
