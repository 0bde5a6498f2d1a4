"""Which names a SKILL.md reads from the environment, and which are its own values.

`env-undeclared` asks for a `requires.env` entry, which hides the skill wherever the variable
is unset, so it reports only names the skill reads from the environment and does not supply:

- read as an environment variable: `$NAME`, `${NAME}`, `process.env.NAME`,
  `os.environ["NAME"]`, `os.getenv("NAME")`, or named so in the prose ("environment variable
  `NAME`", "the `NAME` env var");
- not its own value: assigned by the skill's snippets (`NAME=…`, `export NAME=…`, `read NAME`,
  `for NAME in`), defined by its prose (a line or list item `NAME: …`, "set `NAME` to",
  "where `NAME` is", "replace `NAME` with"), shown as a placeholder elsewhere (`<page-id>`,
  `<PAGE_ID>`, `{page_id}`), used with a default (`${NAME:-…}`) or tested for (`[ -z "$NAME" ]`:
  the skill copes without it). Explicit environment reads (`process.env.NAME`, "environment
  variable NAME") are reported even when the name is also a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from clawspec.lint.document import Document

_NAME = r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z][A-Z0-9]{2,}"
# `$NAME`/`${NAME}` take names with an underscore only: `$HOME`-like words are the shell's.
DOLLAR = re.compile(r"\$\{?([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b(\}|:?[-=+?][^}]*\})?")
EXPLICIT = re.compile(
    rf"process\.env\.({_NAME})\b|process\.env\[['\"]({_NAME})['\"]"
    rf"|os\.(?:environ\[|getenv\(|environ\.get\()['\"]({_NAME})['\"]"
    rf"|Deno\.env\.get\(['\"]({_NAME})['\"]"
    rf"|\benv(?:ironment)?\s+var(?:iable)?s?\s+[`*\"']?\$?({_NAME})\b"
    rf"|[`*\"']\$?({_NAME})[`*\"']\s+(?:environment|env)\s+var"
)
# Variables every shell has: using them needs no declaration.
SHELL_ENV = {"HOME", "PATH", "PWD", "USER", "SHELL", "TMPDIR", "LANG", "TERM", "EDITOR"}
_ASSIGN = re.compile(
    r"(?:^|[\s;(&|])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Z][A-Z0-9_]*)\+?="
    r"|\bread\s+(?:-\w+\s+)*([A-Z][A-Z0-9_]*)|\bfor\s+([A-Z][A-Z0-9_]*)\s+in\b"
)
_ABOUT_ENVIRONMENT = re.compile(
    r"\benv\b|environment|secret|credential|token|api[ _-]?key|password", re.I
)
_PRESENCE = re.compile(r"(?:\[\[?|\btest)\s+-[nz]\s+['\"]?\$\{?([A-Z][A-Z0-9_]*)")


def _defined_in_prose(lines: list[tuple[int, str]]) -> set[str]:
    """Names the prose defines: `- NAME: …`, "set NAME to", "where NAME is", … A definition
    under a heading or on a line about the environment, secrets or keys documents a variable
    the user sets: that is still the environment's."""
    word = r"[`*]{0,2}\$?([A-Z][A-Z0-9]*_[A-Z0-9_]+)[`*]{0,2}"
    patterns = [
        # `- NAME: …`, `NAME = …`, `NAME — …` (em or en dash), "NAME is …"
        re.compile(
            rf"^\s*(?:[-*+]|\d+[.)])?\s*{word}\s*(?::|=|\u2014|\u2013| - | is\b| means\b|\()"
        ),
        re.compile(rf"\b(?:[Ss]et|[Ll]et|[Rr]eplace|[Ss]ubstitute|[Dd]erive|[Ff]ill in)\s+{word}"),
        re.compile(rf"\b[Ww]here\s+{word}\s+(?:is|are)\b"),
    ]
    found: set[str] = set()
    heading = ""
    for _, line in lines:
        if line.startswith("#"):
            heading = line
            continue
        if _ABOUT_ENVIRONMENT.search(heading) or _ABOUT_ENVIRONMENT.search(line):
            continue
        found |= {m.group(1) for p in patterns for m in p.finditer(line)}
    return found


def _placeholders(text: str) -> set[str]:
    """`<page-id>`, `<PAGE_ID>`, `{page_id}` → PAGE_ID."""
    found = re.findall(r"<([A-Za-z][\w-]*)>|(?<!\$)\{\{?\s*([A-Za-z][\w-]*)\s*\}?\}", text)
    return {re.sub(r"-", "_", a or b).upper() for a, b in found}


def _has_default(suffix: str) -> bool:
    """`${NAME:-x}`, `${NAME=x}`, `${NAME:+x}`: the skill works without the variable."""
    return suffix[:2] in (":-", ":=", ":+") or suffix[:1] in ("-", "=", "+")


@dataclass(frozen=True)
class EnvUse:
    name: str
    line: int
    column: int


def environment_reads(doc: Document) -> Iterator[EnvUse]:
    """The first environment read of every name the skill does not supply itself."""
    lines = doc.body_lines
    body = "\n".join(line for _, line in lines)
    own = {g for m in _ASSIGN.finditer(body) for g in m.groups() if g}
    own |= {m.group(1) for m in _PRESENCE.finditer(body)}
    own |= {m.group(1) for m in DOLLAR.finditer(body) if _has_default(m.group(2) or "")}
    soft = _defined_in_prose(lines) | _placeholders(body)
    seen: set[str] = set()
    for number, line in lines:
        found: list[tuple[int, str]] = []
        for match in EXPLICIT.finditer(line):
            found.append((match.start(), next(g for g in match.groups() if g)))
        for match in DOLLAR.finditer(line):
            name, suffix = match.group(1), match.group(2) or ""
            if name not in soft or suffix[:2] == ":?":
                found.append((match.start(), name))
        for start, name in sorted(found):
            if name in seen or name in own or name in SHELL_ENV:
                continue
            seen.add(name)
            yield EnvUse(name, number, start + 1)
