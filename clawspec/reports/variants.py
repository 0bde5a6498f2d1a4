"""The variants side by side: rows = scenarios, columns = variants, then totals per variant.

One pure function (`variant_table`) builds the table from a report; the terminal, the job
summary (and so the PR comment) and the HTML report only format it. The models that answered
are read from each result's evidence (`evidence.models`) when it carries them: a variant whose
model override was ignored, or that fell back to another model, shows it there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from clawspec.identity import ScenarioIdentity
from clawspec.reports.model import (
    BudgetReport,
    RunReport,
    ScenarioResult,
    VariantComparison,
    VariantInfo,
)
from clawspec.reports.spend import cost_text, summed
from clawspec.status import Status

# What counts as passing, as the comparison counts it (a warning is not a failure).
PASSING = (Status.PASS, Status.WARN)


@dataclass(frozen=True, slots=True)
class Cell:
    """One scenario on one variant."""

    status: Status
    passes: int | None = None  # repeated runs: passing attempts of `attempts`
    attempts: int | None = None
    flaky: bool = False
    change: str | None = None  # against the reference variant: regressed, fixed, …

    @property
    def verdict(self) -> str:
        """'pass', 'fail', …; with repeats the pass rate: '2/3 fail'."""
        if self.attempts is not None:
            return f"{self.passes}/{self.attempts} {self.status.value}"
        return self.status.value


@dataclass(frozen=True, slots=True)
class Row:
    """One scenario (its identity without the variant) across the variants."""

    identity: ScenarioIdentity
    line: int
    cells: tuple[Cell | None, ...]  # one per column; None: it did not run on that variant

    @property
    def differs(self) -> bool:
        """The verdicts are not the same on every variant (or it is missing on one)."""
        return len({None if c is None else c.status for c in self.cells}) > 1

    @property
    def regressed(self) -> bool:
        return any(c is not None and c.change == "regressed" for c in self.cells)


@dataclass(frozen=True, slots=True)
class Column:
    """One variant and its totals."""

    info: VariantInfo
    scenarios: int
    passed: int
    passes: int  # attempts that passed (a single run is one attempt)
    attempts: int
    tokens: int | None  # None: no result recorded any usage
    spend: BudgetReport
    duration_ms_median: float | None
    models: tuple[tuple[str, int], ...]  # model that answered, runs it answered; () unknown
    gate: VariantComparison | None  # against the reference; None for the reference itself

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.attempts if self.attempts else None

    @property
    def cost(self) -> str:
        """The cost as every output says it: never $0 when it is not known."""
        return cost_text(self.spend) if self.spend.runs else "unknown"

    @property
    def role(self) -> str:
        """'reference', 'required' or 'advisory'."""
        if self.info.reference:
            return "reference"
        return "required" if self.info.required else "advisory"

    def models_text(self) -> str:
        """'anthropic/claude-haiku-4-5', or with several 'a (9), b (1)'; '' when not known."""
        if len(self.models) == 1:
            return self.models[0][0]
        return ", ".join(f"{model} ({runs:,})" for model, runs in self.models)


@dataclass(frozen=True, slots=True)
class VariantTable:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    @property
    def repeated(self) -> bool:
        return any(c is not None and c.attempts is not None for r in self.rows for c in r.cells)

    def gate_lines(self) -> list[tuple[Column, list[str]]]:
        """Per compared variant, its regressions against the reference (one line each)."""
        return [(c, c.gate.regressions) for c in self.columns if c.gate is not None]


def variant_table(report: RunReport) -> VariantTable | None:
    """The side-by-side table of a report whose results carry variants; None otherwise."""
    by_variant: dict[str, list[ScenarioResult]] = {}
    for s in report.scenarios:
        if s.variant is not None:
            by_variant.setdefault(s.variant, []).append(s)
    if not by_variant:
        return None
    infos = {v.name: v for v in report.variants}
    # Configured order; a variant the report does not describe (an older report) after them.
    names = [n for n in infos if n in by_variant] + [n for n in by_variant if n not in infos]
    gates = {g.variant: g for g in report.variant_comparisons}
    changes = {c.key: c.change for g in gates.values() for c in g.scenarios}
    rows: dict[ScenarioIdentity, dict[str, Cell]] = {}
    lines: dict[ScenarioIdentity, int] = {}
    for s in report.scenarios:
        if s.variant is None:
            continue
        identity = s.identity.with_variant(None)
        lines.setdefault(identity, s.line)
        stats = s.attempts
        rows.setdefault(identity, {})[s.variant] = Cell(
            status=s.status,
            passes=stats.passes if stats else None,
            attempts=stats.attempts if stats else None,
            flaky=s.flaky,
            change=changes.get(s.identity.key),
        )
    columns = tuple(
        _column(infos.get(n) or VariantInfo(name=n), by_variant[n], gates.get(n)) for n in names
    )
    return VariantTable(
        columns=columns,
        rows=tuple(
            Row(identity, lines[identity], tuple(cells.get(n) for n in names))
            for identity, cells in rows.items()
        ),
    )


def _column(
    info: VariantInfo, results: Sequence[ScenarioResult], gate: VariantComparison | None
) -> Column:
    passes = attempts = passed = 0
    durations: list[float] = []
    tokens: int | None = None
    models: dict[str, int] = {}
    for s in results:
        passed += s.status in PASSING
        if s.attempts is not None:
            passes += s.attempts.passes
            attempts += s.attempts.attempts
        elif s.status != Status.SKIP:
            passes += s.status in PASSING
            attempts += 1
        stats = s.attempts
        if s.status != Status.SKIP:
            typical = stats.duration_ms_median if stats else None  # repeats: their median
            durations.append(typical if typical is not None else s.duration_ms)
        found = _tokens(s)
        if found is not None:
            tokens = (tokens or 0) + int(found)
        for model in _answered(s):
            models[model] = models.get(model, 0) + 1
    return Column(
        info=info,
        scenarios=len(results),
        passed=passed,
        passes=passes,
        attempts=attempts,
        tokens=tokens,
        spend=summed(results),
        duration_ms_median=median(durations) if durations else None,
        models=tuple(sorted(models.items(), key=lambda item: -item[1])),
        gate=gate,
    )


def _tokens(result: ScenarioResult) -> float | None:
    """A run's tokens: the median over a repeated scenario's attempts; None when unknown."""
    if result.attempts is not None and result.attempts.tokens_median is not None:
        return result.attempts.tokens_median
    totals = result.evidence.tokens if result.evidence else None
    return totals.total if totals is not None else None


def _answered(result: ScenarioResult) -> list[str]:
    """The models that answered the run, as its evidence records them; [] when it does not
    (a report written before they were recorded, a run that never reached a model)."""
    found = getattr(result.evidence, "models", None)
    if not isinstance(found, list | tuple):
        return []
    return [m for m in found if isinstance(m, str) and m]
