"""What changed, in the order every report leads with it: regressions since the
baseline, then fixed, then flaky, then behaviour changes. Renderers (job summary, PR comment,
terminal) format these sections; none of them recomputes a change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from clawspec.reports.model import RunReport, ScenarioChange, ScenarioResult, advisory_variants
from clawspec.status import Status
from clawspec.text import one_line

ARG_KEYS_SHOWN = 2  # arguments named per tool in a behaviour line; the rest are counted
ARG_VALUE_CHARS = 60


@dataclass(frozen=True)
class ChangeItem:
    """One line of a section: a scenario (when it is one) and what to say about it. `label`
    is the scenario's (`ScenarioIdentity.label`), or "" for a line about the run's totals."""

    label: str
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
        reason = comparison.baseline_missing
        # "no baseline configured (...)" says it alone; "No baseline found: no baseline
        # configured" would say it twice, and "found" is wrong when none was looked for.
        if reason.startswith("no baseline "):
            return f"No baseline {reason.removeprefix('no baseline ')}"
        return f"No baseline found: {reason}"
    since = report.baseline.describe() if report.baseline else "the baseline"
    count = len(comparison.regressions)
    return f"Regressions since {since}: {count:,}" if count else f"No regressions since {since}"


def no_baseline_judgement(report: RunReport) -> str:
    """How a run without a baseline was judged: against the reference variant when the run
    has variants (their comparison is the one `fail_on: regression` reads), else by the normal
    exit policy."""
    if report.variant_comparisons:
        return "judged against the reference variant"
    return "judged by the normal exit policy"


def change_counts(report: RunReport) -> str | None:
    """'Compared with the baseline: 1 regressed, 2 unchanged.' (None: not compared)."""
    comparison = report.comparison
    if comparison is None or comparison.baseline_missing is not None:
        return None
    counts = ", ".join(
        f"{n:,} {kind.replace('_', ' ')}" for kind, n in comparison.counts.items() if n
    )
    return f"Compared with the baseline: {counts or 'no scenarios'}."


TOTAL_LABELS = {"tokens": "Tokens", "cost_usd": "Cost (USD)", "duration_ms": "Duration (ms)"}


def total_changes(report: RunReport) -> list[tuple[str, dict[str, Any]]]:
    """The run's totals against the baseline's: (label, baseline/current/delta/ratio/over)."""
    totals = report.comparison.details if report.comparison is not None else {}
    return [(label, totals[key]) for key, label in TOTAL_LABELS.items() if key in totals]


def change_sections(report: RunReport) -> list[ChangeSection]:
    """Return the non-empty sections, in the order reports show them."""
    by_key = {s.identity.key: s for s in report.scenarios}
    comparison = report.comparison
    changes = comparison.scenarios if comparison else []
    regressed = ChangeSection("regressed", "Regressions")
    fixed = ChangeSection("fixed", "Fixed")
    behaviour = ChangeSection("behaviour", "Behaviour changes")
    # An advisory variant's regressions are listed, marked: they are not what the headline
    # counts (they never fail the job).
    advisory = advisory_variants(report)

    def failing(change: ScenarioChange, text: str) -> ChangeItem:
        if change.key[1] in advisory:
            text += f" (advisory variant {change.key[1]}: does not fail the job)"
        return ChangeItem(change.label, text, by_key.get(change.key))

    for change in changes:
        scenario, label = by_key.get(change.key), change.label
        if change.change == "regressed":
            regressed.items.append(failing(change, _regressed_text(change)))
        elif change.change == "fixed":
            fixed.items.append(
                ChangeItem(label, f"{_status(change.baseline_status)} → pass", scenario)
            )
        if lines := describe_behaviour(change.details.get("behaviour", {})):
            behaviour.items.append(ChangeItem(label, "; ".join(lines), scenario))
    # What else `--fail-on regression` fails on, from the same structured changes (never by
    # parsing the reason lines back: a name may hold ': '): new failing scenarios, budgets
    # over tolerance, then the run's totals over tolerance.
    for change in changes:
        if change.change == "new" and change.status in (Status.FAIL, Status.ERROR):
            regressed.items.append(failing(change, f"new scenario {_status(change.status)}s"))
        if unaccepted := change.details.get("unaccepted"):  # not compared, failing now
            regressed.items.append(failing(change, str(unaccepted)))
        for name in change.details.get("over_tolerance", []):
            regressed.items.append(failing(change, over_line(name, change.details[name])))
    for reason in comparison.regressions if comparison else []:
        if reason.startswith("total "):
            regressed.items.append(ChangeItem("", reason))
    flaky = ChangeSection(
        "flaky",
        "Flaky",
        [
            ChangeItem(s.identity.label, s.attempts.describe(), s)
            for s in report.scenarios
            if s.flaky and s.attempts is not None
        ],
    )
    return [section for section in (regressed, fixed, flaky, behaviour) if section.items]


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
        if what == "tools":
            lines += [
                _args_line(name, calls)
                for name, calls in diff.get("tools_args_changed", {}).items()
            ]
    return lines


def _args_line(tool: str, calls: list[dict[str, Any]]) -> str:
    """e.g. "'write' arguments changed: path 'a.md' → 'b.md' (call 1; 2 more call(s))"."""
    first = calls[0]
    changed: dict[str, dict[str, Any]] = first.get("changed", {})
    parts = [
        f"{key} {_value(sides, 'baseline')} → {_value(sides, 'current')}"
        for key, sides in list(changed.items())[:ARG_KEYS_SHOWN]
    ]
    where = [f"call {first.get('call')}"]
    if len(changed) > ARG_KEYS_SHOWN:
        where.append(f"{len(changed) - ARG_KEYS_SHOWN} more argument(s)")
    if len(calls) > 1:
        where.append(f"{len(calls) - 1} more call(s)")
    return f"'{tool}' arguments changed: {', '.join(parts)} ({'; '.join(where)})"


def _value(sides: dict[str, Any], side: str) -> str:
    """One side's value in one line, cut short (the JSON report has it as compared)."""
    if side not in sides:
        return "(none)"
    value = sides[side]
    if isinstance(value, str):
        return f"'{one_line(value, ARG_VALUE_CHARS)}'"
    return one_line(json.dumps(value, ensure_ascii=False), ARG_VALUE_CHARS)


def over_line(name: str, found: dict[str, Any]) -> str:
    """Return e.g. 'tokens 1,320 → 2,010 (+52%, tolerance 15%)'."""
    unit = {"tokens": "", "cost_usd": " USD", "duration_ms": " ms"}[name]
    label = {"tokens": "tokens", "cost_usd": "cost", "duration_ms": "duration"}[name]
    digits = 4 if name == "cost_usd" else 0
    before, now = f"{found['baseline']:,.{digits}f}", f"{found['current']:,.{digits}f}"
    return (
        f"{label} {before}{unit} → {now}{unit} ({found['ratio']:+.0%}, "
        f"tolerance {found['tolerance']:.0%})"
    )
