"""One scenario run's evidence, built lazily and at most once: log indexes, plugin records, trace.

Several assertions of a scenario may ask for the same evidence; it is built once, under a lock,
and shared (the log is indexed once per run, never per assertion). Each kind has its
own typed slot, so the report condenses what the assertions built without guessing at values.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import requests

    from clawspec.evidence.context import Verdict
    from clawspec.evidence.record import RunRecords
    from clawspec.gateway.logs.index import LogIndex
    from clawspec.gateway.plugin_records import PluginRecord
    from clawspec.traces.backends.base import TraceBackend
    from clawspec.traces.model import Trace, TraceUnavailable


@dataclass(frozen=True)
class LogKey:
    """Which log index: a log file read from an offset, scoped to runs and session keys."""

    path: Path
    offset: int
    run_ids: tuple[str, ...]
    session_keys: tuple[str, ...]


@dataclass(frozen=True)
class PluginKey:
    """Which plugin records: the plugin's output from an offset, for these runs."""

    path: Path
    offset: int
    run_ids: tuple[str, ...]


@dataclass(frozen=True)
class RunBackend:
    """The trace backend the runner set up once for the whole run (None: no backend), or why
    it could not be set up (raised for every scenario, where it becomes each trace assertion's
    `skip` reason)."""

    backend: TraceBackend | None = None
    failure: Exception | None = None


class Evidence:
    """Lazy, cached evidence for one scenario run."""

    def __init__(
        self,
        http: requests.Session,
        gateway_log: Path | None = None,
        log_offset: int = 0,
        plugin_output: Path | None = None,
        plugin_offset: int = 0,
        *,
        log_inode: int | None = None,
        trace_backend: RunBackend | None = None,
        later_logs: Callable[[], list[Path]] | None = None,
    ) -> None:
        self.http = http
        self.gateway_log = gateway_log  # the active gateway log when the run started
        self.log_offset = log_offset  # its size then: the run's lines start after it
        self.log_inode = log_inode  # its inode then: tells whether it was rotated meanwhile
        # The log's files of the days after the run's start that exist when asked (a dated log
        # moves on at midnight), or None: the log is one file.
        self.later_logs = later_logs
        self.plugin_output = plugin_output  # ClawSpec plugin records (token usage, tools)
        self.plugin_offset = plugin_offset
        self.trace_backend = trace_backend  # None: made from the settings when first needed
        self._lock = threading.Lock()  # not reentrant: a build must not ask for evidence
        self._logs: dict[LogKey, LogIndex] = {}
        self._plugin: dict[PluginKey, list[PluginRecord]] = {}
        self._trace: Trace | TraceUnavailable | None = None
        self._records: RunRecords | Verdict | None = None
        # The reply's build reads the log index (through `log_index`): its own lock.
        self._records_lock = threading.Lock()

    def logs_after_start(self) -> list[Path]:
        """The active log's files of the days after the run's start, as they are now."""
        return self.later_logs() if self.later_logs is not None else []

    def log_index(self, key: LogKey, build: Callable[[], LogIndex]) -> LogIndex:
        """The log index for `key`, built on first use."""
        with self._lock:
            if key not in self._logs:
                self._logs[key] = build()
            return self._logs[key]

    def plugin_records(
        self, key: PluginKey, build: Callable[[], list[PluginRecord]]
    ) -> list[PluginRecord]:
        """The plugin records for `key`, read on first use."""
        with self._lock:
            if key not in self._plugin:
                self._plugin[key] = build()
            return self._plugin[key]

    def trace(self, build: Callable[[], Trace | TraceUnavailable]) -> Trace | TraceUnavailable:
        """The scenario's trace, or why it cannot be had: looked up once per scenario."""
        with self._lock:
            if self._trace is None:
                self._trace = build()
            return self._trace

    def records(
        self,
        build: Callable[[], RunRecords | Verdict],
        stale: Callable[[RunRecords | Verdict], bool] | None = None,
    ) -> RunRecords | Verdict:
        """The runs' records, or the verdict saying why they cannot be had: read once, and
        again only when `stale` says the read so far does not do for this reader."""
        with self._records_lock:
            if self._records is None or (stale is not None and stale(self._records)):
                self._records = build()
            return self._records

    # -- what has been built so far (never builds anything) -------------------------------------

    def built_log_indexes(self) -> list[LogIndex]:
        with self._lock:
            return list(self._logs.values())

    def built_plugin_records(self) -> list[list[PluginRecord]]:
        with self._lock:
            return list(self._plugin.values())

    def built_trace(self) -> Trace | TraceUnavailable | None:
        with self._lock:
            return self._trace

    def built_records(self) -> RunRecords | Verdict | None:
        with self._records_lock:
            return self._records
