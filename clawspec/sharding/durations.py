"""Scenario durations that balance the shards: from `--durations`, else the baseline store.

Every shard must see the same durations (else the shards are split differently and `merge`
refuses them), so the sources are ones all machines of a matrix read alike: a report file or
artifact they all download, or the run the baseline store chooses for this commit.
"""

from __future__ import annotations

from collections.abc import Callable

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.errors import UsageError
from clawspec.identity import Key
from clawspec.sharding.report_files import expand, looks_like_report, read_json


def durations_for(
    settings: Settings, context: CIContext, warn: Callable[[str], None]
) -> dict[Key, int]:
    """(Scenario id, variant) → duration (ms) to balance by; {} balances by count.

    `context` is the run's CI context (the baseline store's choice depends on it)."""
    if settings.durations:
        return load_durations(settings.durations, warn)
    if settings.baseline:
        return baseline_durations(settings, context, warn)
    return {}


def load_durations(spec: str, warn: Callable[[str], None]) -> dict[Key, int]:
    """(Scenario id, variant) → duration (ms) from the report(s) `spec` names; {} (with a
    warning) if none. Read as raw JSON (the reports may come from another version): a result
    without a `variant` field has none.

    A missing earlier report is normal (the first run of a pipeline, an expired artifact), so
    it degrades to balancing by count instead of failing every shard.
    """
    durations: dict[Key, int] = {}
    try:
        files = expand([spec])
        for item in files:
            data = read_json(item.path)
            if not looks_like_report(data):
                if item.named:
                    warn(f"--durations: {item.path} is not a ClawSpec JSON report; ignored")
                continue
            for scenario in data["scenarios"]:
                if isinstance(scenario, dict) and isinstance(scenario.get("duration_ms"), int):
                    variant = scenario.get("variant")
                    key = (str(scenario.get("id")), None if variant is None else str(variant))
                    durations[key] = scenario["duration_ms"]
    except UsageError as exc:
        warn(f"--durations: {exc}; shards are balanced by count")
        return {}
    if not durations:
        warn(f"--durations: no scenario durations found in '{spec}'; shards are balanced by count")
    return durations


def baseline_durations(
    settings: Settings, context: CIContext, warn: Callable[[str], None]
) -> dict[Key, int]:
    """The durations of the baseline the store chooses for this run (`--baseline`)."""
    from clawspec.history.baseline import NoBaseline, find_baseline
    from clawspec.history.source import run_source

    found = find_baseline(settings.baseline, run_source(context, settings), settings, context)
    if isinstance(found, NoBaseline):
        warn(f"shards are balanced by count: no baseline for durations: {found.reason}")
        return {}
    return {s.identity.key: s.duration_ms for s in found.report.scenarios}
