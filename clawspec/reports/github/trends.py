"""The compact trend table of the job summary: pass rate and tokens per scenario over runs."""

from __future__ import annotations

from collections.abc import Sequence

from clawspec.reports.github.markdown import inline, table_cell
from clawspec.reports.model import RunReport, ScenarioTrend
from clawspec.text import fmt_number

BARS = "▁▂▃▄▅▆▇█"
DEFAULT_ROWS = 30


def sparkline(values: Sequence[float | None], top: float | None = None) -> str:
    """Return one bar per value, scaled to `top` (default: the largest); '·' for unknown."""
    known = [v for v in values if v is not None]
    top = top if top is not None else max(known, default=0)
    if not top:
        return "".join("·" if v is None else BARS[0] for v in values)
    return "".join(
        "·" if v is None else BARS[min(len(BARS) - 1, round(v / top * (len(BARS) - 1)))]
        for v in values
    )


def _interesting_first(trends: Sequence[ScenarioTrend]) -> list[ScenarioTrend]:
    """Scenarios whose pass rate was ever below 1 first, keeping report order within each group."""
    return sorted(trends, key=lambda t: all(r is None or r >= 1 for r in t.pass_rates))


def trend_table(report: RunReport, limit: int | None = None) -> list[str]:
    """Return the Markdown lines of the trend table (none when there is only this run).

    Scenario names and run labels come from the history: they are shown as data.
    """
    trends = report.trends
    if not trends or len(trends[0].runs) < 2:
        return []
    rows = _interesting_first(trends)[: min(limit or DEFAULT_ROWS, DEFAULT_ROWS)]
    first = inline(trends[0].runs[0], 80)
    lines = [
        f"### Trends over the last {len(trends[0].runs)} runs",
        "",
        f"Oldest ({first}) on the left, this run on the right; `·` = not run (for tokens: "
        "not run or not counted).",
        "",
        "| Scenario | Pass rate | Now | Tokens | Now |",
        "| --- | --- | ---: | --- | ---: |",
    ]
    names = {s.identity.key: s.name for s in report.scenarios}
    for trend in rows:
        rate, tokens = trend.pass_rates[-1], trend.tokens[-1]
        # A report written before trends carried the name: the result's, never a parsed id.
        shown = trend.name or names.get(trend.key, trend.id)
        if trend.variant is not None:
            shown += f" @ {trend.variant}"
        name = table_cell(shown, 200)
        lines.append(
            f"| {name} | `{sparkline(trend.pass_rates, 1.0)}` "
            f"| {'—' if rate is None else f'{rate:.2f}'} "
            f"| `{sparkline([float(t) if t is not None else None for t in trend.tokens])}` "
            f"| {'—' if tokens is None else fmt_number(tokens)} |"
        )
    if len(trends) > len(rows):
        lines.append(f"\n{len(trends) - len(rows):,} more scenarios in the JSON report's `trends`.")
    return [*lines, ""]
