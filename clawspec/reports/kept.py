"""Finished scenario results, kept compact until the run is over.

As pydantic models a result (the scenario, its assertions, its evidence) takes ~5-6 KB of
memory; 10,000 of them were ~55 MB of a run's peak, held next to the loaded contracts. Each
result is serialised once, as soon as it has been reported (pydantic's JSON, the same encoder
the JSON report uses), and compressed in blocks with its neighbours, whose text repeats: about
150 bytes a scenario. The models come back once the run is over (`FinishedRun.report`), after
`api.run` has let the contracts go, so the two never take memory at the same time.

A run of up to `COMPACT_FROM` scenarios holds its results as models: a run that small takes
little memory (~12 MB at 2,000), and encoding them would only add to its time (~30 µs each,
~50 µs more to read back). A larger run keeps every result compact from its first one. The
choice is made once, from the run's size: switching when the threshold was reached encoded all
the results held so far at once, in the last scenario's path (0.1 s at the end of a
1,000-scenario run, when the threshold was 1,000).

A result keeps its models when JSON cannot carry it exactly: an assertion value that is not
plain JSON (a tuple, a dict with non-string keys, a str subclass, NaN...), a float that is not
finite, text pydantic cannot encode. What comes back is equal to what was kept.
"""

from __future__ import annotations

import math
import threading
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    # Imported where used: `clawspec run` creates its KeptResults before the first hook
    # request, and imports the report models while the agents run (see runner/run.py).
    from clawspec.reports.model import AssertionResult, BudgetReport, RunReport, ScenarioResult

BLOCK = 64  # results compressed together: enough for their repeated text to pay off
LEVEL = 1  # zlib's fastest level: a few bytes larger than the default, several times faster
COMPACT_FROM = 2000  # runs of at most this many scenarios hold their results as models
_MAX_INT = 1 << 63  # JSON integers beyond int64 are not worth the doubt


class Ran(NamedTuple):
    """What the end of a run still asks of an attempt once its result is kept."""

    invoked: bool
    unreachable: bool
    interrupted: bool  # an interrupt kept part of it from running


class KeptResults:
    """One result per plan index, compact where exact (thread-safe)."""

    def __init__(self, total: int) -> None:
        self._models: dict[int, ScenarioResult] = {}  # kept as they are
        self._block = array("i", [-1]) * total  # -1: not kept (yet), or kept as models
        self._start = array("q", [0]) * total  # where its JSON starts in its block
        self._end = array("q", [0]) * total
        self._blocks: list[bytes] = []  # zlib-compressed, each BLOCK results' JSON joined
        self._pending: list[bytes] = []  # the JSON of results not compressed yet
        self._pending_size = 0
        self._compact = total > COMPACT_FROM
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._block)

    def __contains__(self, index: int) -> bool:
        return self._block[index] >= 0 or index in self._models

    def keep(self, index: int, result: ScenarioResult) -> None:
        """Keep `result` as the result of plan `index` (once per index)."""
        with self._lock:
            if self._compact:
                self._add(index, result)
            else:
                self._models[index] = result

    def _add(self, index: int, result: ScenarioResult) -> None:
        """Keep `result` compact if it is exact as JSON, else as it is (under the lock)."""
        data = _encoded(result)
        if data is None:
            self._models[index] = result
        else:
            self._block[index] = len(self._blocks)
            self._start[index] = self._pending_size
            self._end[index] = self._pending_size + len(data)
            self._pending.append(data)
            self._pending_size += len(data)
        if len(self._pending) >= BLOCK:
            self._seal()

    def results(self) -> Iterator[ScenarioResult]:
        """Every kept result as models again, in plan order (each block decompressed once)."""
        from clawspec.reports.model import ScenarioResult

        with self._lock:
            self._seal()
        opened: tuple[int, bytes] = (-1, b"")
        for index in range(len(self._block)):
            block = self._block[index]
            if block < 0:
                yield self._models[index]
                continue
            if opened[0] != block:
                opened = (block, zlib.decompress(self._blocks[block]))
            data = opened[1][self._start[index] : self._end[index]]
            yield ScenarioResult.model_validate_json(data)

    def _seal(self) -> None:
        """Compress the pending results into a block (under the lock)."""
        if self._pending:
            self._blocks.append(zlib.compress(b"".join(self._pending), LEVEL))
            self._pending, self._pending_size = [], 0


@dataclass(frozen=True)
class FinishedRun:
    """A run's report, but for its results' models (`report()` builds them)."""

    version: str
    run_id: str
    started_at: str
    duration_ms: int
    interrupted: bool
    results: KeptResults
    budget: BudgetReport | None = None  # the spend limits and what the runs spent

    def report(self) -> RunReport:
        """The run's report: every result turned back into models (once the contracts are
        gone, see `api.run`)."""
        from clawspec.reports.model import RunReport, Totals
        from clawspec.speed.collector import collector_paused

        # Every result's models at once, and they live on: the collector would scan them again
        # and again while they are built (a third of the time at 10,000 scenarios).
        with collector_paused():
            scenarios = list(self.results.results())
        return RunReport(
            version=self.version,
            run_id=self.run_id,
            started_at=self.started_at,
            duration_ms=self.duration_ms,
            interrupted=self.interrupted,
            totals=Totals.of(scenarios),
            scenarios=scenarios,
            budget=self.budget,
        )


def _encoded(result: ScenarioResult) -> bytes | None:
    """The result's JSON, when reading it back gives an equal result; else None."""
    if not _exact(result):
        return None
    try:
        return type(result).__pydantic_serializer__.to_json(result)
    except (ValueError, UnicodeError):  # the models replace lone surrogates: to be safe
        return None


def _exact(result: ScenarioResult) -> bool:
    """Every value JSON could change is plain: the free-form assertion values, the tool calls'
    arguments and the floats (the only fields of a result whose type JSON does not pin
    down)."""
    if not all(_exact_assertion(a) for a in result.checks()):  # a conversation's turns' too
        return False
    attempts = result.attempts
    if attempts is not None:
        numbers = [attempts.pass_rate, attempts.ci_low, attempts.ci_high]
        numbers += [attempts.duration_ms_median, attempts.duration_ms_p90]
        numbers += [attempts.tokens_median, attempts.tokens_p90]
        if not all(_finite(n) for n in numbers):
            return False
    for evidence in (result.evidence, *(turn.evidence for turn in result.turns or ())):
        if evidence is None:
            continue
        if evidence.tokens is not None and not _finite(evidence.tokens.cost_usd):
            return False
        if not all(tool.args is None or _plain(tool.args) for tool in evidence.tools):
            return False
        for span in evidence.spans:
            if not (_finite(span.start_ms) and _finite(span.end_ms) and _finite(span.cost_usd)):
                return False
    return True


def _exact_assertion(assertion: AssertionResult) -> bool:
    if assertion.value is not None and not _plain(assertion.value):
        return False
    if assertion.limit is not None and not _plain(assertion.limit):
        return False
    if assertion.usage is not None and not _plain(assertion.usage):
        return False
    attempts = assertion.attempts
    return attempts is None or all(
        _finite(n) for n in (attempts.pass_rate, attempts.ci_low, attempts.ci_high)
    )


def _plain(value: Any) -> bool:
    """JSON gives back an equal value of the same type."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_MAX_INT <= value < _MAX_INT
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


def _finite(number: float | None) -> bool:
    return number is None or math.isfinite(number)
