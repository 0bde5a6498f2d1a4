"""The README's assertion tables are generated from the registry and must be current."""

from __future__ import annotations

from pathlib import Path

from clawspec.assertions import REGISTRY
from clawspec.assertions.docs import END, START, render_tables

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_assertion_tables_are_current() -> None:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == render_tables(), (
        "README assertion tables are stale: run `python -m clawspec.assertions.docs`"
    )


def test_every_assertion_type_has_a_section_and_an_example_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    for name in REGISTRY:
        assert f"#### `{name}`" in text
        assert f"- type: {name}" in text


def test_readme_documents_the_exit_codes_and_both_commands() -> None:
    text = README.read_text(encoding="utf-8")
    for code in ("| `0` |", "| `1` |", "| `2` |", "| `3` |", "| `130` |"):
        assert code in text
    assert "bash scripts/test.sh" in text
    assert "scripts/demo.sh" in text
