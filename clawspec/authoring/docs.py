"""The documentation shipped in the package (`clawspec/docs/*.md`, the repository's `docs/`):
a page, or one section found by its heading's anchor as GitHub writes it, for `clawspec docs`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from clawspec.errors import UsageError
from clawspec.markdown_doc import markdown_headings


@dataclass(frozen=True)
class Section:
    page: str
    anchor: str
    level: int
    start: int  # 0-based line of the heading
    end: int  # 0-based line after the section


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def read_page(name: str) -> str:
    """The text of `docs/<name>.md` as installed."""
    path = resources.files("clawspec").joinpath("docs", f"{name}.md")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no page '{name}' (pages: {', '.join(pages())})") from None


def pages() -> list[str]:
    """The installed pages' names (`guide`, `ci`, …); an install without them says so."""
    folder = resources.files("clawspec").joinpath("docs")
    names = sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))
    if not names:  # pragma: no cover - a broken install
        raise UsageError("this install of ClawSpec has no documentation: reinstall the package")
    return names


def sections(page: str, text: str) -> list[Section]:
    """Every heading's section: from the heading to the next one of its level or above."""
    lines = text.splitlines()
    headings = markdown_headings(text)
    found = []
    for i, (level, title, number) in enumerate(headings):
        end = next((n - 1 for lv, _, n in headings[i + 1 :] if lv <= level), len(lines))
        found.append(Section(page, anchor(title), level, number - 1, end))
    return found


def find_topic(topic: str, order: Sequence[str]) -> str:
    """The page named `topic`, else the first section (in `order`'s pages, then the others)
    whose anchor it is; `page#anchor` looks in that page only. Unknown: a usage error naming
    the pages and the closest anchors."""
    installed = pages()
    topic = topic.strip().lower()
    page, _, wanted = topic.rpartition("#")
    if not wanted:
        raise UsageError(f"'{topic}': give a section's anchor after '#'")
    if not page and wanted in installed:
        return read_page(wanted)
    if page and page not in installed:
        raise UsageError(f"no page '{page}' (pages: {', '.join(installed)})")
    searched = [page] if page else [*(p for p in order if p in installed), *installed]
    known: list[str] = []
    for name in dict.fromkeys(searched):
        text = read_page(name)
        for section in sections(name, text):
            if section.anchor == wanted:
                return "\n".join(text.splitlines()[section.start : section.end]).rstrip() + "\n"
            known.append(section.anchor)
    close = difflib.get_close_matches(wanted, [*installed, *known], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UsageError(
        f"no page or section '{topic}' (pages: {', '.join(installed)}){hint} "
        "(`clawspec docs --list` lists every section)"
    )


def list_topics() -> str:
    """Each page, then its sections' anchors indented by level (`##` and `###`)."""
    out = []
    for name in pages():
        out.append(name)
        out += [
            f"{'  ' * (s.level - 1)}{s.anchor}"
            for s in sections(name, read_page(name))
            if 2 <= s.level <= 3 and s.anchor != "contents"
        ]
    return "\n".join(out) + "\n"
