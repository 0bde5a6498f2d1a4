"""Silencing one rule for one file: in the file itself, or in clawspec.yaml.

- In a SKILL.md or SOUL.md: `<!-- clawspec-lint: disable=bin-undeclared,env-undeclared -->`
  anywhere in the file (an HTML comment: OpenClaw and Markdown viewers do not show it).
- In clawspec.yaml: `lint: {ignore: [{rule: bin-undeclared, path: skills/healthcheck/**}]}`,
  globs relative to the folder of clawspec.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from clawspec.contracts.discovery import pattern_regex
from clawspec.lint.document import Document

DIRECTIVE = re.compile(r"<!--\s*clawspec-lint:\s*(\S[^>]*?)\s*-->")
_DISABLE = re.compile(r"disable\s*=\s*([\w\s,-]+)")


@dataclass(frozen=True)
class Directive:
    """One rule id a comment names, where it is, and whether the comment could be read."""

    rule: str
    line: int
    column: int
    problem: str | None = None


def directives(doc: Document) -> Iterator[Directive]:
    """Every rule named by a `clawspec-lint: disable=…` comment (problems included)."""
    for number, line in enumerate(doc.lines, start=1):
        for match in DIRECTIVE.finditer(line):
            column = match.start() + 1
            wanted = _DISABLE.fullmatch(match.group(1))
            if not wanted:
                yield Directive(
                    "",
                    number,
                    column,
                    f"cannot read '{match.group(1)}': write "
                    "<!-- clawspec-lint: disable=RULE[,RULE] -->",
                )
                continue
            for name in filter(None, (n.strip() for n in wanted.group(1).split(","))):
                yield Directive(name, number, column)


def disabled_in_file(doc: Document) -> set[str]:
    return {d.rule for d in directives(doc) if d.problem is None}


@dataclass(frozen=True)
class Ignore:
    """A `lint.ignore` entry of clawspec.yaml."""

    rule: str
    path: str

    def matches(self, path: Path, base: Path) -> bool:
        try:
            relative = path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            return False
        return bool(pattern_regex(self.path.removeprefix("./")).match(relative))


def ignored_by_config(path: Path, base: Path, ignores: Sequence[Ignore]) -> set[str]:
    return {entry.rule for entry in ignores if entry.matches(path, base)}
