"""Which files are contracts: the paths given, folders searched with the scenario patterns."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from clawspec.errors import UsageError
from clawspec.identity import real_path
from clawspec.text import FileWarning

PRUNED_DIRS = {".git", ".venv", "venv", "node_modules", ".cache", "__pycache__", ".tox"}
# A YAML file no pattern matched is read this far to tell whether it looks like a contract.
LOOKALIKE_READ_BYTES = 64 * 1024
# Top-level keys (at the start of a line) every contract has.
_TOP_LEVEL_VERSION = re.compile(rb"^version[ \t]*:", re.MULTILINE)
_TOP_LEVEL_SCENARIOS = re.compile(rb"^scenarios[ \t]*:", re.MULTILINE)
_NAMED_AT_MOST = 10  # look-alikes named in one warning


def display_path(path: Path) -> str:
    """Show `path` relative to the current folder when it is inside it."""
    try:
        # Not through its links: a linked contract is named where it was found.
        return Path(os.path.abspath(path)).relative_to(Path.cwd().resolve()).as_posix()
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


def discover(
    paths: Sequence[str | Path],
    patterns: Sequence[str],
    on_warning: Callable[[str], None] | None = None,
    *,
    workspace: Path | None = None,
) -> list[Path]:
    """Return the contract files named by `paths` (files as given, folders searched).

    The patterns are the workspace's: a searched file matches by its path relative to the
    `workspace` root (default: the current folder), whatever folder was given or ClawSpec runs
    from; a file outside the workspace matches by its path relative to the folder given.

    A searched folder's YAML files that match no pattern but look like contracts (top-level
    `version:` and `scenarios:`) are named in a warning, with how to include them: a contract
    saved under another name would otherwise be skipped without a word.
    """
    regexes = [pattern_regex(p) for p in patterns]
    root = (workspace or Path.cwd()).resolve()
    found: list[Path] = []
    unmatched: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            matches: list[Path] = []
            for file, matched in _walk(path, regexes, root):
                (matches if matched else unmatched).append(file)
            if not matches:
                outside = _outside(path, root)
                lookalikes = _lookalikes(unmatched, set())
                if lookalikes:
                    hint = ignored_contracts(lookalikes, patterns)
                    raise UsageError(f"{raw}: no contract files found; {hint}{outside}")
                shown = ", ".join(patterns)
                raise UsageError(f"{raw}: no contract files found (patterns: {shown}){outside}")
            found.extend(sorted(matches))
        else:
            raise UsageError(f"{raw}: no such file or folder")
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(real_path(path), path)
    if on_warning is not None and unmatched:
        lookalikes = _lookalikes(unmatched, set(unique))
        if lookalikes:
            each = [(str(f), ignored_contracts([f], patterns)) for f in lookalikes[:_NAMED_AT_MOST]]
            on_warning(FileWarning(ignored_contracts(lookalikes, patterns), each))
    return list(unique.values())


def _outside(folder: Path, root: Path) -> str:
    """A hint when `folder` is outside the workspace: a config file elsewhere (`--config
    ci/x.yaml`) makes its own folder the workspace unless it sets `workspace:`."""
    if folder.resolve().is_relative_to(root):
        return ""
    return (
        f". {folder} is outside the workspace {display_path(root)} (the config file's folder "
        "unless it sets `workspace:`), so the patterns match its files by their path inside "
        f"{folder}; set `workspace:` in the config file (e.g. `workspace: ..`)"
    )


def ignored_contracts(files: Sequence[Path], patterns: Sequence[str]) -> str:
    """Say which files look like contracts but match no pattern, and how to include them."""
    names = [display_path(f) for f in files[:_NAMED_AT_MOST]]
    if len(files) > _NAMED_AT_MOST:
        names.append(f"and {len(files) - _NAMED_AT_MOST} more")
    if len(files) == 1:
        what = f"{names[0]} looks like a contract (top-level version and scenarios) but matches"
        what += " no scenario pattern, so it was not loaded. To include it, name it"
    else:
        what = f"{len(files)} files look like contracts (top-level version and scenarios) but"
        what += f" match no scenario pattern, so they were not loaded: {', '.join(names)}."
        what += " To include them, name them"
    return (
        f"{what} *.clawspec.yaml, give the file to the command, or add a pattern to "
        f"scenario_patterns in clawspec.yaml (now: {', '.join(patterns)})"
    )


def _lookalikes(files: Iterable[Path], loaded: set[Path]) -> list[Path]:
    """The YAML files among `files` that look like contracts and are not among `loaded`."""
    return [
        f
        for f in dict.fromkeys(files)
        if f.suffix in (".yaml", ".yml") and real_path(f) not in loaded and _looks_like_contract(f)
    ]


def _looks_like_contract(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(LOOKALIKE_READ_BYTES)
    except OSError:
        return False
    return bool(_TOP_LEVEL_VERSION.search(head) and _TOP_LEVEL_SCENARIOS.search(head))


def _walk(
    folder: Path, regexes: list[re.Pattern[str]], workspace: Path
) -> Iterable[tuple[Path, bool]]:
    """Yield every file under `folder` (pruned folders left out) and whether a pattern matches
    its path relative to the `workspace` root (resolved), or, outside it, to `folder`."""
    # By the workspace-relative path only: the same file is a contract or not whichever folder
    # is searched (`skills/**/tests/scenarios.yaml` finds skills/news/tests/scenarios.yaml from
    # `clawspec run .`, `clawspec run skills/news` or `cd skills && clawspec run news`).
    start = folder.resolve()
    for parent, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in PRUNED_DIRS)
        # Below the resolved folder as found: a symlinked folder keeps the path it is found at.
        here = Path(parent).relative_to(folder)
        try:
            base = (start / here).relative_to(workspace)
        except ValueError:  # outside the workspace
            base = here
        for name in sorted(files):
            rel = (base / name).as_posix()
            yield Path(parent, name), any(r.match(rel) for r in regexes)
