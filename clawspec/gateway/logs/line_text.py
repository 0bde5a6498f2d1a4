"""What the whole-file line searches share: lines as a text-mode file gives them, a JSON
line's `message`, the answer, and the error of a search the scenario abandoned."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class Interrupted(Exception):
    """The scenario was abandoned while the file was being read (what was read is kept)."""

    def __init__(self, path: Path, read: int, size: int) -> None:
        super().__init__(f"interrupted after reading {read:,} of the {size:,} bytes of '{path}'")
        self.read = read
        self.size = size


@dataclass(frozen=True)
class Match:
    line: int | None  # 1-based number of the first matching line, None: no line matches
    lines: int  # lines in the file when asked
    # Lines longer than a read block: counted, never searched (one may hold the match).
    unsearched: int = 0


def split_lines(data: bytes | bytearray) -> list[str]:
    """Lines as a text-mode file yields them (UTF-8 with replacement, universal newlines)."""
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def json_message(line: str) -> str | None:
    """The `message` of a JSON-object line, else None."""
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else None
