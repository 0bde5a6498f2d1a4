"""Markdown documents as CommonMark reads them: front matter and headings (ATX and setext,
outside code fences). Used by the artifact assertions and by the judge's prompt (a rubric may
name a section), so it sits below both.
"""

from __future__ import annotations

import re

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_OR_QUOTE = re.compile(r"^ {0,3}([-*+>]|\d+[.)])(\s|$)")


def normalize_heading(text: str) -> str:
    """Case-fold and collapse whitespace so headings compare (`artifact_contains`)."""
    return " ".join(text.split()).casefold()


def split_front_matter(text: str) -> tuple[str | None, str]:
    """Return (front matter YAML or None, body) of a Markdown document."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    return None, text


def markdown_headings(text: str) -> list[tuple[int, str, int]]:
    """Return (level, text, line number) of every ATX and setext heading outside code fences."""
    _, body = split_front_matter(text)
    offset = text[: len(text) - len(body)].count("\n")
    headings: list[tuple[int, str, int]] = []
    fence: str | None = None
    # The paragraph lines (text, line number) a setext underline would turn into one heading.
    paragraph: list[tuple[str, int]] = []
    for number, line in enumerate(body.splitlines(), start=offset + 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            paragraph = []
            continue
        if opened:
            fence, paragraph = opened.group(1), []
            continue
        atx = _ATX.match(line)
        if atx:
            headings.append((len(atx.group(1)), (atx.group(2) or "").strip(), number))
            paragraph = []
            continue
        underline = _SETEXT.match(line)
        if underline:  # without a paragraph above: a thematic break, never heading text
            if paragraph:
                level = 1 if underline.group(1)[0] == "=" else 2
                joined = " ".join(part.strip() for part, _ in paragraph)
                headings.append((level, joined, paragraph[0][1]))
            paragraph = []
            continue
        is_text = bool(line.strip()) and not _LIST_OR_QUOTE.match(line)
        if not is_text:
            paragraph = []
        elif paragraph or not line.startswith("    "):  # indented lines only continue one
            paragraph.append((line, number))
    return headings
