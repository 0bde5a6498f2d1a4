"""Evidence shared by a scenario's assertions, computed lazily and at most once per run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import requests

T = TypeVar("T")


class Evidence:
    """Lazy, cached evidence for one scenario run (log index, trace, ...).

    Several assertions of a scenario may ask for the same evidence; it is built once, under a
    lock, and shared (SPEC §6: the log is indexed once per run, never per assertion).
    """

    def __init__(
        self,
        http: requests.Session,
        gateway_log: Path | None = None,
        log_offset: int = 0,
        plugin_output: Path | None = None,
        plugin_offset: int = 0,
    ) -> None:
        self.http = http
        self.gateway_log = gateway_log  # the active gateway log when the run started
        self.log_offset = log_offset  # its size then: the run's lines start after it
        self.plugin_output = plugin_output  # ClawSpec plugin records (token usage, tools)
        self.plugin_offset = plugin_offset
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.extra: dict[str, Any] = {}  # run facts later evidence needs (session key, ids...)

    def peek(self, key: str) -> Any:
        """Return the evidence under `key` if some assertion already built it, else None."""
        with self._lock:
            return self._cache.get(key)

    def values(self) -> list[Any]:
        """Everything built so far (e.g. the log index another assertion already read)."""
        with self._lock:
            return list(self._cache.values())

    def under(self, prefix: str) -> list[Any]:
        """Everything built so far under keys starting with `prefix` (e.g. "plugin_records|")."""
        with self._lock:
            return [value for key, value in self._cache.items() if key.startswith(prefix)]

    def cached(self, key: str, build: Callable[[], T]) -> T:
        """Return the evidence under `key`, building it on first use."""
        with self._lock:
            if key not in self._cache:
                self._cache[key] = build()
            return self._cache[key]
