"""Coverage for people and CI: a terminal table, JSON, and a job-summary section."""

from __future__ import annotations

import json

from clawspec.assertions.registry import CATEGORIES
from clawspec.authoring.coverage import CoverageReport, TargetCoverage
from clawspec.reports.github.markdown import code_span, inline
from clawspec.text import console_line

HEADERS = ("target", "kind", "contracts", "scenarios", "negative", "categories", "never passed")


def _cells(row: TargetCoverage, has_history: bool) -> tuple[str, ...]:
    categories = ", ".join(c for c in CATEGORIES if c in row.categories) or "-"
    never = "-" if not has_history else ("yes" if row.never_passed else "no")
    return (
        row.target.key,
        row.target.kind,
        str(len(row.contracts)),
        str(row.scenarios),
        "yes" if row.has_negative else "no",
        categories,
        never,
    )


def _totals(report: CoverageReport) -> list[str]:
    total = len(report.targets)
    lines = [
        f"coverage: {report.count('covered')}/{total} targets have scenarios "
        f"({report.ratio:.0%}); {report.count('has_negative')}/{total} have a negative scenario"
        if total
        else "coverage: no agents or skills found (nothing to cover)"
    ]
    if report.history:
        lines.append(
            f"history: {report.count('never_passed')}/{total} never passed in {report.history}"
        )
    elif report.history_problem:
        lines.append(f"history: not checked: {report.history_problem}")
    else:
        lines.append("history: no baseline store configured (`baseline`), not checked")
    lines += [f"contract for no target of this workspace: {path}" for path in report.unknown]
    lines += [f"contract that does not load (not counted): {path}" for path in report.invalid]
    return lines


def render_terminal(report: CoverageReport) -> str:
    rows = [
        HEADERS,
        *([console_line(c) for c in _cells(r, report.history is not None)] for r in report.targets),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    return "\n".join([*lines, "", *_totals(report)]) + "\n"


def render_json(report: CoverageReport) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def render_summary(report: CoverageReport) -> str:
    """The job-summary section (Markdown)."""
    has_history = report.history is not None
    lines = ["## ClawSpec coverage", "", "| " + " | ".join(HEADERS) + " |"]
    lines.append("|" + "---|" * len(HEADERS))
    for row in report.targets:
        # the target's name comes from the workspace: data, never markup (the other cells are
        # counts and ClawSpec's own words)
        cells = list(_cells(row, has_history))
        cells[0] = code_span(row.target.key, table=True)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *(f"- {inline(line)}" for line in _totals(report))]
    return "\n".join(lines) + "\n"
