"""Read a SKILL.md or SOUL.md for linting: text, lines, frontmatter with positions.

Never raises for bad input: a binary or non-UTF-8 file, an empty file, CRLF line endings, a
missing or broken frontmatter block all become facts the rules report.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawspec.inputs.source import Loc, Mark, SourceDoc, SourceError, parse_yaml

KINDS = {"SKILL.md": "skill", "SOUL.md": "soul"}
CONTRACT_SUFFIXES = (".yaml", ".yml")  # any other file linted is a contract
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")


@dataclass
class Document:
    """One file as the rules see it. Line numbers are 1-based and count the frontmatter."""

    path: Path
    display: str
    kind: str  # skill | soul
    text: str = ""
    unreadable: str | None = None  # why the file could not be read as text
    has_crlf: bool = False
    frontmatter: dict[str, Any] | None = None
    frontmatter_doc: SourceDoc | None = None
    frontmatter_problem: tuple[str, Mark] | None = None  # (message, position)
    body_start: int = 1  # line where the body begins
    lines: list[str] = field(default_factory=list)
    contract: SourceDoc | None = None  # a contract's YAML, every position kept

    @property
    def body_lines(self) -> list[tuple[int, str]]:
        """(line number, text) of the body, after the frontmatter."""
        return list(enumerate(self.lines, start=1))[self.body_start - 1 :]

    def key_mark(self, loc: Loc) -> Mark:
        """Where a frontmatter key is (line 1 when unknown)."""
        if self.frontmatter_doc is None:
            return Mark(1, 1)
        mark = self.frontmatter_doc.key_mark(loc)
        return Mark(mark.line + 1, mark.column)  # +1: the opening `---` line

    def code_lines(self, languages: set[str]) -> list[tuple[int, str]]:
        """Body lines inside fenced code blocks whose language is in `languages` ('' = none)."""
        found: list[tuple[int, str]] = []
        fence: str | None = None
        keep = False
        for number, line in self.body_lines:
            match = _FENCE.match(line.strip())
            if fence is None and match:
                fence, keep = match.group(1)[0] * 3, match.group(2).lower() in languages
            elif fence is not None and line.strip().startswith(fence):
                fence = None
            elif fence is not None and keep:
                found.append((number, line))
        return found


# The most of a SKILL.md, SOUL.md or AGENTS.md lint reads: what an agent loads as instructions is
# far smaller, and reading (and scanning) a file of hundreds of MB took minutes.
MAX_BYTES = 1024 * 1024


def read_document(path: Path, display: str) -> Document:
    """Read `path`; problems are recorded on the document, never raised."""
    kind = KINDS.get(path.name) or ("contract" if is_contract(path) else "skill")
    doc = Document(path, display, kind)
    try:
        with path.open("rb") as handle:  # never more than the limit (+1): a huge file is not read
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        doc.unreadable = f"cannot read the file: {exc.strerror or exc}"
        return doc
    if len(raw) > MAX_BYTES:
        what = "a contract" if kind == "contract" else "a skill's or an agent's instructions"
        doc.unreadable = f"over {MAX_BYTES:,} bytes, more than {what} holds: not linted"
        return doc
    if b"\x00" in raw[:8192]:
        doc.unreadable = "binary file (NUL bytes): expected UTF-8 Markdown"
        return doc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        doc.unreadable = f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        return doc
    doc.has_crlf = "\r\n" in text
    doc.text = text.replace("\r\n", "\n").replace("\r", "\n")
    doc.lines = doc.text.split("\n")
    if doc.lines and doc.lines[-1] == "":
        doc.lines.pop()
    if kind == "contract":
        # `clawspec validate` reports YAML errors; lint rules read valid YAML only.
        with contextlib.suppress(SourceError):
            doc.contract = parse_yaml(doc.text, path)
        return doc
    _split_frontmatter(doc)
    return doc


def is_contract(path: Path) -> bool:
    return path.name not in KINDS and path.suffix.lower() in CONTRACT_SUFFIXES


def _split_frontmatter(doc: Document) -> None:
    if not doc.lines or doc.lines[0].strip() != "---":
        return
    closing = next((i for i, line in enumerate(doc.lines[1:], 1) if line.strip() == "---"), None)
    if closing is None:
        doc.frontmatter_problem = (
            "frontmatter opened with '---' on line 1 is never closed",
            Mark(1, 1),
        )
        return
    doc.body_start = closing + 2
    block = "\n".join(doc.lines[1:closing])
    try:
        parsed = parse_yaml(block, doc.path)
    except SourceError as exc:
        doc.frontmatter_problem = (str(exc), Mark(exc.mark.line + 1, exc.mark.column))
        return
    if parsed.data is None:
        parsed.data = {}
    if not isinstance(parsed.data, dict):
        found = type(parsed.data).__name__
        doc.frontmatter_problem = (
            f"frontmatter must be a mapping of keys, found {found}",
            Mark(2, 1),
        )
        return
    doc.frontmatter = parsed.data
    doc.frontmatter_doc = parsed
