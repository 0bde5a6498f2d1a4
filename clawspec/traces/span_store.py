"""The receiver's spans in memory: bounded, indexed by trace id and correlation values, and
searched by exact keys or, when none matches, by a time window (never a guess among several).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clawspec.traces.otlp_json import ReceivedSpan, correlation_values

MAX_SPANS = 200_000


@dataclass
class _Trace:
    spans: dict[str, ReceivedSpan] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    updated: float = 0.0  # monotonic time of the last span received


@dataclass(frozen=True)
class TraceMatch:
    """What `SpanStore.find` found: the spans of the matching trace(s), and how."""

    by: str  # "key", "window", "none" (nothing matched) or "ambiguous" (window: several)
    trace_ids: tuple[str, ...] = ()
    spans: tuple[ReceivedSpan, ...] = ()
    idle_ms: float = 0.0  # time since the last of these spans arrived
    candidates: int = 0  # traces that matched (window: how many overlapped)

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "traceIds": list(self.trace_ids),
            "spans": [span.to_json() for span in self.spans],
            "idleMs": self.idle_ms,
            "candidates": self.candidates,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TraceMatch:
        return cls(
            by=str(data["by"]),
            trace_ids=tuple(data.get("traceIds") or ()),
            spans=tuple(ReceivedSpan.from_json(s) for s in data.get("spans") or ()),
            idle_ms=float(data.get("idleMs") or 0.0),
            candidates=int(data.get("candidates") or 0),
        )


class SpanStore:
    """Thread-safe, bounded in-memory spans indexed by trace id and correlation values.

    When more than `max_spans` are held, whole traces are dropped, oldest first.
    """

    def __init__(self, max_spans: int = MAX_SPANS, clock: Any = time.monotonic) -> None:
        self.max_spans = max_spans
        self._clock = clock
        self._lock = threading.Lock()
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._by_key: dict[str, set[str]] = {}
        self._owner: dict[str, str] = {}  # span id → trace id (for cross-trace parent links)
        self._count = 0
        self.dropped_traces = 0

    def __len__(self) -> int:
        with self._lock:
            return self._count

    @property
    def trace_count(self) -> int:
        with self._lock:
            return len(self._traces)

    def add(self, spans: Iterable[ReceivedSpan]) -> int:
        now = self._clock()
        added = 0
        with self._lock:
            for span in spans:
                trace = self._traces.get(span.trace_id)
                if trace is None:
                    trace = self._traces[span.trace_id] = _Trace()
                    self._index(span.trace_id, span.trace_id, trace)
                if span.span_id not in trace.spans:
                    self._count += 1
                trace.spans[span.span_id] = span  # a re-sent span replaces the earlier copy
                trace.updated = now
                self._owner[span.span_id] = span.trace_id
                for value in correlation_values(span.attributes) | correlation_values(
                    span.resource
                ):
                    self._index(value, span.trace_id, trace)
                added += 1
            while self._count > self.max_spans and len(self._traces) > 1:
                self._drop_oldest()
        return added

    def _index(self, value: str, trace_id: str, trace: _Trace) -> None:
        if value not in trace.keys:
            trace.keys.add(value)
            self._by_key.setdefault(value, set()).add(trace_id)

    def _drop_oldest(self) -> None:
        trace_id, trace = self._traces.popitem(last=False)
        self._count -= len(trace.spans)
        self.dropped_traces += 1
        for value in trace.keys:
            ids = self._by_key.get(value)
            if ids is not None:
                ids.discard(trace_id)
                if not ids:
                    del self._by_key[value]
        for span_id in trace.spans:
            if self._owner.get(span_id) == trace_id:
                del self._owner[span_id]

    def find(
        self,
        keys: Iterable[str],
        window: tuple[int, int] | None = None,
    ) -> TraceMatch:
        """The trace(s) any of `keys` names (trace ids or correlation values); when none, the
        single trace overlapping `window` (epoch ns, inclusive) — never a guess among several.
        Traces linked by a parent span id in another matched trace are merged in."""
        with self._lock:
            matched: set[str] = set()
            for key in keys:
                if key:
                    matched |= self._by_key.get(key, set())
            by = "key"
            candidates = len(matched)
            if not matched and window is not None:
                overlapping = [tid for tid, t in self._traces.items() if _overlaps(t, window)]
                candidates = len(overlapping)
                if len(overlapping) == 1:
                    matched, by = set(overlapping), "window"
                elif overlapping:
                    return TraceMatch(by="ambiguous", candidates=candidates)
            if not matched:
                return TraceMatch(by="none")
            matched = self._linked(matched)
            ordered = [tid for tid in self._traces if tid in matched]
            spans = [s for tid in ordered for s in self._traces[tid].spans.values()]
            spans.sort(key=lambda s: (s.start_ns, s.end_ns))
            idle = self._clock() - max(self._traces[tid].updated for tid in ordered)
            return TraceMatch(by, tuple(ordered), tuple(spans), idle * 1000.0, candidates)

    def _linked(self, matched: set[str]) -> set[str]:
        """Add traces whose spans name a parent span held by a matched trace (a sub-agent
        exported with its own trace id), and the traces holding a matched span's parent."""
        grew = True
        while grew:
            grew = False
            span_ids = {sid for tid in matched for sid in self._traces[tid].spans}
            for tid in list(matched):
                for span in self._traces[tid].spans.values():
                    owner = self._owner.get(span.parent_span_id or "")
                    if owner is not None and owner not in matched:
                        matched.add(owner)
                        grew = True
            for tid, trace in self._traces.items():
                if tid in matched:
                    continue
                for span in trace.spans.values():
                    if span.parent_span_id and span.parent_span_id in span_ids:
                        matched.add(tid)
                        grew = True
                        break
        return matched


def _overlaps(trace: _Trace, window: tuple[int, int]) -> bool:
    starts = [s.start_ns for s in trace.spans.values() if s.start_ns]
    ends = [s.end_ns or s.start_ns for s in trace.spans.values() if s.end_ns or s.start_ns]
    if not starts:
        return False
    return min(starts) <= window[1] and max(ends) >= window[0]
