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
from clawspec.status import PASSING, Status
from clawspec.text import fmt_duration_ms, one_line, pluralize


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
        return self.info.role

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


# The terminal lists every row up to this many scenarios; above it only the rows whose
# verdicts differ between variants (the JSON, summary and HTML reports have them all).
TERMINAL_ROWS = 50
_NAME_WIDTH = 60


def totals_rows(table: VariantTable) -> list[tuple[str, list[str]]]:
    """The per-variant totals as (label, one value per column): pass rate, tokens, cost,
    median duration, the models that answered (rows nobody has a value for are left out)."""

    def rate(c: Column) -> str:
        if c.pass_rate is None:
            return "—"
        return f"{c.pass_rate:.0%} ({c.passes:,}/{c.attempts:,})"

    rows = [
        ("pass rate", [rate(c) for c in table.columns]),
        ("tokens", ["—" if c.tokens is None else f"{c.tokens:,}" for c in table.columns]),
        ("cost", [c.cost for c in table.columns]),
        (
            "median duration",
            [
                "—" if c.duration_ms_median is None else fmt_duration_ms(c.duration_ms_median)
                for c in table.columns
            ],
        ),
        ("models that answered", [c.models_text() for c in table.columns]),
    ]
    return [(label, values) for label, values in rows if any(v not in ("", "—") for v in values)]


def column_title(column: Column) -> str:
    """'sonnet (reference)', 'haiku', 'mini (advisory)'."""
    return column.name if column.role == "required" else f"{column.name} ({column.role})"


_GATE_WORDS = {"not_compared": "not compared (skipped on a side)"}
_ERRORED_WORDS = {"not_compared": "not compared (skipped on a side, or errored on the reference)"}


def gate_text(column: Column) -> str:
    """One line on a variant against the reference, e.g. 'haiku against sonnet: 1 regressed,
    2 unchanged; fails the job under fail_on: regression'."""
    gate = column.gate
    assert gate is not None
    # A scenario skipped on either side (a spend limit, a precondition) was not compared
    # (`not_compared`): never counted as unchanged, which would claim a check that never happened.
    # One errored on the reference and failing here was not compared either (and counts against
    # the gate: regression/compare.py).
    skipped = gate.counts.get("not_compared", 0)
    errored = any(c.details.get("errored") for c in gate.scenarios)
    words = _ERRORED_WORDS if errored else _GATE_WORDS
    counts = ", ".join(
        f"{n:,} {words.get(k, k.replace('_', ' '))}" for k, n in gate.counts.items() if n > 0
    )
    if skipped and skipped == sum(gate.counts.values()) and not errored:
        here = all(c.status == Status.SKIP for c in gate.scenarios)
        where = column.name if here else f"{column.name} or {gate.reference}"
        counts = f"nothing compared: {pluralize(skipped, 'scenario')} skipped on {where}"
    line = f"{column.name} against {gate.reference}: {counts or 'nothing to compare'}"
    if gate.regressions:
        line += (
            "; fails the job under fail_on: regression"
            if gate.required
            else "; advisory: never fails the job"
        )
    return line


def text_table(table: VariantTable, max_rows: int = TERMINAL_ROWS) -> list[str]:
    """The table as plain text lines (the terminal's final table)."""
    rows = list(table.rows)
    note = ""
    if len(rows) > max_rows:
        differ = [r for r in rows if r.differs]
        note = (
            f"  … {len(rows) - len(differ):,} scenarios with the same verdict on every variant "
            "not listed (every row is in the JSON and HTML reports)"
        )
        rows = differ
    head = ["scenario", *(column_title(c) for c in table.columns)]
    body = [
        [
            one_line(r.identity.name, _NAME_WIDTH),
            *("—" if c is None else _marked(c) for c in r.cells),
        ]
        for r in rows
    ]
    body += [[label, *values] for label, values in totals_rows(table)]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]

    def fmt(cells: list[str]) -> str:
        return "  " + "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True))

    lines = [fmt(head).rstrip()]
    lines += [fmt(cells).rstrip() for cells in body[: len(rows)]]
    if note:
        lines.append(note)
    lines.append("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    lines += [fmt(cells).rstrip() for cells in body[len(rows) :]]
    return lines


def _marked(cell: Cell) -> str:
    """The verdict, upper case when not passing, with a mark for the change against the
    reference (↓ regressed, ↑ fixed)."""
    text = cell.verdict if cell.status in PASSING else cell.verdict.upper()
    mark = {"regressed": " ↓ regressed", "fixed": " ↑ fixed"}.get(cell.change or "", "")
    return text + (" flaky" if cell.flaky else "") + mark


def table_data(table: VariantTable | None) -> dict[str, object] | None:
    """The table as plain data for the HTML report (its script only lays it out)."""
    if table is None:
        return None
    return {
        "columns": [
            {"name": c.name, "title": column_title(c), "role": c.role} for c in table.columns
        ],
        "rows": [
            {
                "contract": r.identity.contract,
                "name": r.identity.name,
                "line": r.line,
                "cells": [
                    None
                    if cell is None
                    else {
                        "status": cell.status.value,
                        "verdict": cell.verdict,
                        "change": cell.change,
                        "flaky": cell.flaky,
                    }
                    for cell in r.cells
                ],
            }
            for r in table.rows
        ],
        "totals": [[label, values] for label, values in totals_rows(table)],
        "gates": [
            {"text": gate_text(column), "regressions": lines, "required": column.info.required}
            for column, lines in table.gate_lines()
        ],
    }
