"""The docs: the assertion tables are generated from the registry and current; the README is
the short way in and every document it points to exists; each page's table of contents is its
headings (`python -m tests.test_docs` rewrites the tables of contents)."""

from __future__ import annotations

import re
from pathlib import Path

from clawspec.assertions import REGISTRY
from clawspec.assertions.docs import END, START, render_tables

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
CONTENTS_START = "<!-- contents: python -m tests.test_docs -->"
CONTENTS_END = "<!-- /contents -->"


def test_reference_assertion_tables_are_current() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == render_tables(), (
        "assertion tables are stale: run `python -m clawspec.assertions.docs`"
    )


def test_every_assertion_type_has_a_section_and_an_example_in_the_reference() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for name in REGISTRY:
        assert f"#### `{name}`" in text
        assert f"- type: {name}" in text


def test_the_exit_codes_and_both_commands_are_documented() -> None:
    reference = REFERENCE.read_text(encoding="utf-8")
    for code in ("| `0` |", "| `1` |", "| `2` |", "| `3` |", "| `130` |"):
        assert code in reference
    text = README.read_text(encoding="utf-8")
    assert "bash scripts/test.sh" in text
    assert "scripts/demo.sh" in text


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    """A user reads the README in ten minutes; the rest is in docs/, and no link is broken."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    for path in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        body = path.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([\w-]+))?\)", body):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            linked = (path.parent / target).resolve() if target else path
            assert linked.exists(), f"{path.name}: link to missing {target}"
            if anchor and linked.suffix == ".md":
                assert anchor in _anchors(linked), f"{path.name}: no #{anchor} in {linked.name}"


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _headings(text: str, deepest: int) -> list[tuple[int, str]]:
    """(level, title) of the `##`… headings down to `deepest`, outside fenced code."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"^(#{2,6}) (.+)$", line)
        if match and len(match.group(1)) <= deepest:
            found.append((len(match.group(1)), match.group(2).strip()))
    return found


def contents(path: Path) -> str:
    """The page's table of contents: its `##` headings (and `###` in docs/), as links."""
    text = path.read_text(encoding="utf-8")
    deepest = 2 if path == README else 3
    lines = [CONTENTS_START, "**Contents**", ""]
    for level, title in _headings(text, deepest):
        anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        lines.append(f"{'  ' * (level - 2)}- [{title}](#{anchor})")
    return "\n".join([*lines, CONTENTS_END])


def _with_contents(path: Path) -> str:
    """The page with its table of contents current: replaced where it is, else placed right
    before the first `##` heading."""
    text = path.read_text(encoding="utf-8")
    block = contents(path)
    if CONTENTS_START in text:
        start = text.index(CONTENTS_START)
        end = text.index(CONTENTS_END) + len(CONTENTS_END)
        return text[:start] + block + text[end:]
    first = re.search(r"^## ", text, flags=re.M)
    assert first is not None, path
    return text[: first.start()] + block + "\n\n" + text[first.start() :]


def test_every_page_has_a_current_table_of_contents() -> None:
    for path in PAGES:
        assert CONTENTS_START in path.read_text(encoding="utf-8"), f"{path.name}: no contents"
        assert _with_contents(path) == path.read_text(encoding="utf-8"), (
            f"{path.name}: the table of contents is stale: run `python -m tests.test_docs`"
        )


if __name__ == "__main__":
    for page in PAGES:
        page.write_text(_with_contents(page), encoding="utf-8")
        print(f"contents: {page.relative_to(ROOT)}")
