"""Workspace-relative paths: relative paths never climb out of the workspace."""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path

from clawspec.text import cut

# What a file system allows (Linux; macOS allows less in a path): bytes in one name, in a path.
NAME_MAX = 255
PATH_MAX = 4096


class ContractPathError(ValueError):
    """A contract path that cannot be used: its verdict is `error`, with this message."""


class PathEscapeError(ContractPathError):
    """A relative contract path resolves outside the workspace root."""


def length_problem(value: str) -> str | None:
    """Why no file can have the path `value` (a name or the whole path too long), else None."""
    encoded = os.fsencode(value)
    if len(encoded) >= PATH_MAX:
        return f"it is {len(encoded):,} bytes long, over the {PATH_MAX - 1:,} a path may have"
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > NAME_MAX:
        return f"a name in it is {longest:,} bytes long, over the {NAME_MAX} a file name may have"
    return None


def escapes_workspace(value: str) -> bool:
    """Return True when a relative path climbs out of its root (lexically, before any I/O)."""
    if ".." not in value:
        return False  # the usual case: only '..' climbs (checked for every contract path)
    if os.path.isabs(value):
        return False
    normal = os.path.normpath(value)
    return normal == ".." or normal.startswith(".." + os.sep)


def resolve_in_workspace(value: str, workspace: Path) -> Path:
    """Resolve `value` against `workspace`; absolute paths are kept as they are.

    Symlinks are followed for relative paths so a link inside the workspace cannot be used to
    read outside it.
    """
    path = Path(value).expanduser()
    problem = length_problem(os.fspath(workspace / path))
    if problem is not None:
        shown = cut(value, 80)
        raise ContractPathError(f"path '{shown}' cannot name a file: {problem}")
    if path.is_absolute():
        return path
    if escapes_workspace(value):
        raise PathEscapeError(f"path '{value}' climbs out of the workspace {workspace}")
    root = _resolved_root(workspace) if workspace.is_absolute() else workspace.resolve()
    if _no_link_below(root, path):
        return root / path  # what resolving would give: `root` is resolved already
    resolved = (root / path).resolve()
    if resolved != root and root not in resolved.parents:
        raise PathEscapeError(f"path '{value}' resolves outside the workspace ({resolved})")
    return resolved


def _no_link_below(root: Path, path: Path) -> bool:
    """No part of the relative `path` is '..' or a symbolic link under `root`.

    Then `root / path` is already resolved, with an `lstat` per part of `path` only: resolving
    in full walks every part of the absolute path in Python, and every assertion over a file
    asks (4 times a scenario in a typical suite). A part that cannot be read counts as no link,
    as it does for `os.path.realpath`.
    """
    if ".." in path.parts:
        return False
    current = os.fspath(root)
    for part in path.parts:
        current = os.path.join(current, part)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except OSError:
            continue
    return True


@lru_cache(maxsize=64)
def _resolved_root(workspace: Path) -> Path:
    """The workspace root, resolved once per process (every path assertion needs it)."""
    return workspace.resolve()
