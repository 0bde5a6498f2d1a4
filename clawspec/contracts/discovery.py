"""Which files are contracts: the paths given, folders searched with the scenario patterns."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from clawspec.errors import UsageError

PRUNED_DIRS = {".git", ".venv", "venv", "node_modules", ".cache", "__pycache__", ".tox"}


def display_path(path: Path) -> str:
    """Show `path` relative to the current folder when it is inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob with `**` into a regex over '/'-separated relative paths."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def discover(paths: Sequence[str | Path], patterns: Sequence[str]) -> list[Path]:
    """Return the contract files named by `paths` (files as given, folders searched)."""
    regexes = [pattern_regex(p) for p in patterns]
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            matches = sorted(_walk(path, regexes))
            if not matches:
                shown = ", ".join(patterns)
                raise UsageError(f"{raw}: no contract files found (patterns: {shown})")
            found.extend(matches)
        else:
            raise UsageError(f"{raw}: no such file or folder")
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _walk(root: Path, regexes: list[re.Pattern[str]]) -> Iterable[Path]:
    # Patterns are written from the project root (`skills/**/tests/scenarios.yaml`), so a file
    # also matches by its path relative to the current folder: `clawspec run skills/newsletter`
    # finds `skills/newsletter/tests/scenarios.yaml`.
    cwd = Path.cwd().resolve()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS)
        for name in sorted(files):
            full = Path(folder, name)
            candidates = {full.relative_to(root).as_posix()}
            with contextlib.suppress(ValueError):
                candidates.add(full.resolve().relative_to(cwd).as_posix())
            if any(r.match(rel) for r in regexes for rel in candidates):
                yield full
