"""The behaviour diff: what the agent did now against the baseline, even when both passed.

Tool names are compared as sets (added, removed), then the order of their first calls among the
tools both runs used (reordered), then how often each was called. Delegations (the agent ids
handed work to) are compared the same way. Nothing is reported when either run has no evidence:
a report without evidence says nothing about what the agent did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawspec.reports.model import ScenarioEvidence


def behaviour_diff(
    current: ScenarioEvidence | None, baseline: ScenarioEvidence | None
) -> dict[str, Any]:
    """Return the differences (empty when the behaviour is the same or unknown)."""
    if current is None or baseline is None:
        return {}
    diff = _sequence_diff(
        [t.name for t in current.tools], [t.name for t in baseline.tools], "tools"
    )
    diff |= _sequence_diff(current.delegations, baseline.delegations, "delegations")
    return diff


def _sequence_diff(current: Sequence[str], baseline: Sequence[str], what: str) -> dict[str, Any]:
    if current == baseline:
        return {}  # the common case, and the cheap one (5,000-scenario comparisons)
    now, before = _counts(current), _counts(baseline)
    first_now = list(dict.fromkeys(current))
    first_before = list(dict.fromkeys(baseline))
    diff: dict[str, Any] = {}
    added = [name for name in first_now if name not in before]
    removed = [name for name in first_before if name not in now]
    if added:
        diff[f"{what}_added"] = added
    if removed:
        diff[f"{what}_removed"] = removed
    common_now = [name for name in first_now if name in before]
    common_before = [name for name in first_before if name in now]
    if common_now != common_before:
        diff[f"{what}_reordered"] = {"baseline": common_before, "current": common_now}
    calls = {name: [before[name], now[name]] for name in common_now if before[name] != now[name]}
    if calls:
        diff[f"{what}_calls"] = calls
    return diff


def _counts(names: Sequence[str]) -> dict[str, int]:
    # A plain dict: for a handful of names it is several times cheaper than Counter.
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts
