"""What changed, in the order every report leads with it: regressions since the
baseline, then fixed, then flaky, then behaviour changes. Renderers (job summary, PR comment,
terminal) format these sections; none of them recomputes a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clawspec.reports.model import RunReport, ScenarioChange, ScenarioResult


@dataclass(frozen=True)
class ChangeItem:
    """One line of a section: a scenario (when it is one) and what to say about it."""

    id: str
    text: str
    scenario: ScenarioResult | None = None


@dataclass(frozen=True)
class ChangeSection:
    """One block: `regressed`, `fixed`, `flaky` or `behaviour`."""

    key: str
    title: str
    items: list[ChangeItem] = field(default_factory=list)


def change_headline(report: RunReport) -> str | None:
    """Return "Regressions since <baseline>", the no-baseline note, or None (no comparison)."""
    comparison = report.comparison
    if comparison is None:
        return None
    if comparison.baseline_missing is not None:
        return f"No baseline found: {comparison.baseline_missing}"
    since = report.baseline.describe() if report.baseline else "the baseline"
    count = len(comparison.regressions)
    return f"Regressions since {since}: {count:,}" if count else f"No regressions since {since}"


def change_sections(report: RunReport) -> list[ChangeSection]:
    """Return the non-empty sections, in the order reports show them."""
    by_id = {s.id: s for s in report.scenarios}
    comparison = report.comparison
    changes = comparison.scenarios if comparison else []
    regressed = ChangeSection("regressed", "Regressions")
    fixed = ChangeSection("fixed", "Fixed")
    behaviour = ChangeSection("behaviour", "Behaviour changes")
    for change in changes:
        scenario = by_id.get(change.id)
        if change.change == "regressed":
            regressed.items.append(ChangeItem(change.id, _regressed_text(change), scenario))
        elif change.change == "fixed":
            fixed.items.append(
                ChangeItem(change.id, f"{_status(change.baseline_status)} → pass", scenario)
            )
        if lines := describe_behaviour(change.details.get("behaviour", {})):
            behaviour.items.append(ChangeItem(change.id, "; ".join(lines), scenario))
    listed = {item.id for item in regressed.items}
    for reason in comparison.regressions if comparison else []:
        # New failing scenarios and budgets over tolerance: no "regressed" change names them.
        scenario_id, text = _split_reason(reason)
        if scenario_id in listed and not _is_budget(text):
            continue
        regressed.items.append(ChangeItem(scenario_id or "", text, by_id.get(scenario_id or "")))
    flaky = ChangeSection(
        "flaky",
        "Flaky",
        [
            ChangeItem(s.id, s.attempts.describe(), s)
            for s in report.scenarios
            if s.flaky and s.attempts is not None
        ],
    )
    return [section for section in (regressed, fixed, flaky, behaviour) if section.items]


def _split_reason(reason: str) -> tuple[str | None, str]:
    """Split "<scenario id>: <text>" (a scenario id holds '::', never ': ')."""
    if reason.startswith("total "):
        return None, reason
    scenario_id, _, text = reason.partition(": ")
    return scenario_id, text


def _is_budget(text: str) -> bool:
    return "tolerance" in text


def _regressed_text(change: ScenarioChange) -> str:
    rate = change.details.get("pass_rate")
    if change.details.get("significant_drop") and rate:
        return (
            f"pass rate {rate['baseline']:.2f} → {rate['current']:.2f} "
            f"(Fisher p = {change.details['p_value']:.4f})"
        )
    return f"{_status(change.baseline_status)} → {_status(change.status)}"


def _status(status: object) -> str:
    return getattr(status, "value", None) or "—"


def describe_behaviour(diff: dict[str, Any]) -> list[str]:
    """One short line per difference `regression.behaviour.behaviour_diff` found, e.g.
    "tool removed: 'memory_search'"."""
    lines = []
    for what, noun in (("tools", "tool"), ("delegations", "delegation")):
        for name in diff.get(f"{what}_added", []):
            lines.append(f"{noun} added: '{name}'")
        for name in diff.get(f"{what}_removed", []):
            lines.append(f"{noun} removed: '{name}'")
        if order := diff.get(f"{what}_reordered"):
            now, before = " → ".join(order["current"]), " → ".join(order["baseline"])
            lines.append(f"{what} reordered: {now} (baseline {before})")
        for name, (before, now) in diff.get(f"{what}_calls", {}).items():
            lines.append(f"'{name}' called {now} times (baseline {before})")
    return lines
