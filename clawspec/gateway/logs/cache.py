"""Work out each gateway log line once per process, however many run indexes read it.

Scenarios running at once read overlapping slices of the same log: with concurrency 16 every
line is read by up to 16 run-scoped indexes (`LogIndex.build`, each from its own run's start
offset). Decoding, `json.loads`, the id scan and what the line says about runs depend only on
the line's bytes, so they are kept here for the lines recently seen (`LineCache`). Two
generations bound memory: when the current one is full it becomes the previous one, and a hit
there is carried forward.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, TypeVar

GENERATION = 1024  # lines per generation: several times what concurrent runs share

_IDS = re.compile(
    r'(?:runId|sessionId|sessionKey|logicalSessionKey|session|run_id)(?:=|\\?":\\?")([^\s"\\,}]+)'
    r"|lane=session:(\S+)"
)
T = TypeVar("T")


class ParsedLine(NamedTuple):
    text: str  # decoded, without the line break
    data: dict[str, Any] | None  # the JSON object of a line starting with '{' (never mutated)
    is_json: bool  # starts with '{' (legacy `key=value` lines are the others)
    ids: tuple[str, ...]  # run / session ids the line names, in order


class LineCache(Generic[T]):
    """`work(raw)` for the lines recently asked about, computed once each (thread-safe)."""

    def __init__(self, work: Callable[[bytes], T]) -> None:
        self._work = work
        self._current: dict[bytes, T] = {}
        self._previous: dict[bytes, T] = {}
        self._lock = threading.Lock()

    def get(self, raw: bytes) -> T:
        done = self._current.get(raw)
        if done is not None:
            return done
        done = self._previous.get(raw)
        if done is None:
            done = self._work(raw)
        with self._lock:
            if len(self._current) >= GENERATION:
                self._previous, self._current = self._current, {}
            self._current[raw] = done
        return done


def parse_text(raw: bytes) -> ParsedLine:
    """Decode one raw log line, parse it when it is a JSON object, find the ids it names."""
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


_INTERNED: dict[str, str] = {}


def intern(value: str | None) -> str | None:
    """One string object per id (run indexes keep many references to few ids); the table is
    emptied now and then, so the ids of runs long finished do not pile up in a big suite."""
    if value is None:
        return None
    if len(_INTERNED) >= 20_000:
        _INTERNED.clear()
    return _INTERNED.setdefault(value, value)
