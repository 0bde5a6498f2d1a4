"""Find and read JSON reports named by files, globs and folders (merge, `--durations`)."""

from __future__ import annotations

import glob
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawspec.errors import UsageError

_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Found:
    """A candidate report file; `named` when the user named it (not found in a folder)."""

    path: Path
    named: bool


def expand(patterns: Sequence[str]) -> list[Found]:
    """Files, globs (`**` allowed) and folders (every `*.json` below) → files, once each, in order.

    Raises UsageError for a name that matches nothing: a typo must not merge fewer shards.
    """
    found: list[Found] = []
    seen: set[Path] = set()

    def add(path: Path, named: bool) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            found.append(Found(path, named))

    for pattern in patterns:
        if _GLOB_CHARS & set(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise UsageError(f"{pattern}: matches no file")
        else:
            matches = [pattern]
        for match in matches:
            path = Path(match)
            if path.is_dir():
                for inner in sorted(path.rglob("*.json")):
                    add(inner, named=False)
            elif path.is_file():
                add(path, named=True)
            else:
                raise UsageError(f"{match}: no such file or folder")
    return found


def read_json(path: Path) -> Any:
    """Parse one JSON file; UsageError with the file and position when it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a JSON report (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:  # nested deeper than the interpreter follows: no report is
        raise UsageError(f"{path}: not a JSON report (nested too deep)") from None


def looks_like_report(data: Any) -> bool:
    return isinstance(data, dict) and "run_id" in data and isinstance(data.get("scenarios"), list)
