"""A legacy ClawSpec scenario `regression:` block → absolute limits, or a located warning.

Legacy ClawSpec compared each run with a baseline statistic (`compare`: p50 by default) captured
into `<report_dir>/baselines.yaml`: ratios for tokens, duration and cost, an absolute difference
for LLM calls. Without that scenario's baseline, legacy ClawSpec skipped the check silently. Here
a drift whose baseline value is known becomes an assertion with the limit it implied; any other
drift is dropped with a warning that says what to use instead (the assertion with a limit of your
own, or the run-level `regression:` tolerances of `clawspec.yaml`, which compare with a baseline
run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clawspec.inputs.source import Loc
from clawspec.migration.rewrite import Rewrite


@dataclass(frozen=True)
class Drift:
    """One legacy drift limit and what it becomes."""

    metric: str  # in legacy ClawSpec's baselines.yaml
    ratio: bool  # baseline * drift (else baseline + drift)
    assertion: str
    field: str
    setting: str | None  # the run-level tolerance in clawspec.yaml `regression:`, if any


DRIFTS = {
    "max_token_drift": Drift("total_tokens", True, "token_budget", "max_total_tokens", "tokens"),
    "max_duration_drift": Drift("duration_ms", True, "trace_duration", "max_ms", "duration"),
    "max_cost_drift": Drift("cost_usd", True, "trace_cost", "max_usd", "cost"),
    "max_step_drift": Drift("llm_call_count", False, "llm_call_count", "max", None),
}
KEPT = {"compare"}


def _instead(key: str, drift: Drift, value: Any) -> str:
    own = f"`{drift.assertion}` with `{drift.field}` in `then`"
    if drift.setting and isinstance(value, int | float) and not isinstance(value, bool):
        share = f"{value - 1:.0%}" if drift.ratio else str(value)
        return f"{own}, or `regression: {{{drift.setting}: {share}}}` in clawspec.yaml"
    return own


def migrate_regression(
    block: Any, baseline: Any, loc: Loc, where: str, rewrite: Rewrite
) -> list[dict[str, Any]]:
    """The assertions a scenario's `regression:` block (at `loc`) becomes; drops are warned."""
    if not isinstance(block, dict):
        rewrite.warn(loc, f"{where}: 'regression' is not a mapping: dropped")
        return []
    metrics = baseline.get("metrics") if isinstance(baseline, dict) else None
    stat = str(block.get("compare") or "p50")
    limits: list[dict[str, Any]] = []
    for key, value in block.items():
        drift = DRIFTS.get(key)
        if drift is None:
            if key not in KEPT:
                rewrite.warn(
                    (*loc, key), f"{where}: 'regression.{key}' is not a legacy drift: dropped"
                )
            continue
        base = ((metrics or {}).get(drift.metric) or {}).get(stat)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if base is None or not number or not isinstance(base, int | float):
            why = (
                "no baseline for this scenario in legacy ClawSpec's baselines.yaml"
                if metrics is None
                else f"its baseline has no '{drift.metric}' {stat}"
            )
            rewrite.warn(
                (*loc, key),
                f"{where}: 'regression.{key}' dropped ({why}; legacy ClawSpec skipped the check "
                f"too): use {_instead(key, drift, value)}",
            )
            continue
        limit = base * value if drift.ratio else base + value
        limit = round(limit, 6) if drift.metric == "cost_usd" else int(-(-limit // 1))
        limits.append({"type": drift.assertion, drift.field: limit})
        how = "*" if drift.ratio else "+"
        rewrite.change(
            (*loc, key),
            f"{where}: 'regression.{key}' → {drift.assertion}.{drift.field} {limit} "
            f"(baseline {stat} {base} {how} {value})",
        )
    return limits
