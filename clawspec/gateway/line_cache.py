"""Parse each gateway log line once per process, however many run indexes read it.

Scenarios running at once read overlapping slices of the same log: with concurrency 16 every
line is read by up to 16 run-scoped indexes (`LogIndex.build`, each from its own run's start
offset). Decoding, `json.loads` and the id scan dominate that work, and they depend only on the
line's bytes, so they are kept here for the lines recently seen. Two generations bound memory:
when the current one is full it becomes the previous one, and a hit there is carried forward.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, NamedTuple

GENERATION = 1024  # lines per generation: several times what concurrent runs share

_IDS = re.compile(
    r'(?:runId|sessionId|sessionKey|logicalSessionKey|session|run_id)(?:=|\\?":\\?")([^\s"\\,}]+)'
    r"|lane=session:(\S+)"
)


class ParsedLine(NamedTuple):
    text: str  # decoded, without the line break
    data: dict[str, Any] | None  # the JSON object of a line starting with '{' (never mutated)
    is_json: bool  # starts with '{' (legacy `key=value` lines are the others)
    ids: tuple[str, ...]  # run / session ids the line names, in order


_current: dict[bytes, ParsedLine] = {}
_previous: dict[bytes, ParsedLine] = {}
_lock = threading.Lock()
_INTERNED: dict[str, str] = {}


def parse_line(raw: bytes) -> ParsedLine:
    """The parsed form of one raw log line (cached by its bytes)."""
    global _current, _previous
    parsed = _current.get(raw)
    if parsed is not None:
        return parsed
    parsed = _previous.get(raw) or _parse(raw)
    with _lock:
        if len(_current) >= GENERATION:
            _previous, _current = _current, {}
        _current[raw] = parsed
    return parsed


def _parse(raw: bytes) -> ParsedLine:
    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    stripped = text.lstrip()
    data = None
    is_json = stripped.startswith("{")
    if is_json:
        try:
            loaded = json.loads(stripped)
        except ValueError:
            loaded = None  # a damaged or truncated line: kept for log_entry only
        data = loaded if isinstance(loaded, dict) else None
    ids = tuple(dict.fromkeys(intern(a or b) for a, b in _IDS.findall(text)))
    return ParsedLine(text, data, is_json, ids)  # type: ignore[arg-type]


def intern(value: str | None) -> str | None:
    """One string object per id (run indexes keep many references to few ids); the table is
    emptied now and then, so the ids of runs long finished do not pile up in a big suite."""
    if value is None:
        return None
    if len(_INTERNED) >= 20_000:
        _INTERNED.clear()
    return _INTERNED.setdefault(value, value)
