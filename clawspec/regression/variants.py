"""The variant gate: each variant against the reference variant, scenario by scenario.

Pure: a report in, a report out. The comparison is the baseline comparison's own
(`clawspec.regression.compare`: the same change classes, the same Fisher test over repeats),
with the reference variant's results in the baseline's place. Only scenario verdicts can fail
the gate: a variant differs from the reference by design in tokens, cost and duration (another
model, another price), so those deltas are computed and shown, never counted as regressions.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawspec.config.settings import RegressionSettings, VariantSettings
from clawspec.regression.compare import compare
from clawspec.reports.model import RunReport, VariantComparison, VariantInfo
from clawspec.traffic.volatile import DEFAULT_VOLATILE_PATTERNS


def variant_infos(
    report: RunReport, variants: Sequence[VariantSettings], reference: str | None
) -> list[VariantInfo]:
    """The configured variants that have results in the report, in configuration order."""
    ran = {s.variant for s in report.scenarios}
    return [
        VariantInfo(
            name=v.name,
            required=v.required,
            reference=v.name == reference,
            model=v.model,
            thinking=v.thinking,
            agent_id=v.agent_id,
            openclaw_version=v.openclaw_version,
        )
        for v in variants
        if v.name in ran
    ]


def compare_variants(
    report: RunReport,
    infos: Sequence[VariantInfo],
    settings: RegressionSettings,
    volatile_patterns: Sequence[str] = DEFAULT_VOLATILE_PATTERNS,
) -> list[VariantComparison]:
    """Each non-reference variant against the reference; [] when the reference did not run.

    A shard compares only the scenarios it ran on both sides (the rest ran on other shards;
    the merged report compares the whole run).
    """
    reference = next((v for v in infos if v.reference), None)
    if reference is None:
        return []
    # Tolerances off: only verdicts regress (see the module's docstring).
    verdicts_only = settings.model_copy(update={"tokens": None, "cost": None, "duration": None})
    by_variant: dict[str | None, list] = {}
    for scenario in report.scenarios:
        by_variant.setdefault(scenario.variant, []).append(scenario)
    base = by_variant.get(reference.name, [])
    gates: list[VariantComparison] = []
    for info in infos:
        if info.reference:
            continue
        mine = by_variant.get(info.name, [])
        # The reference's results keyed as this variant's, so the two sides meet by key.
        theirs = [s.model_copy(update={"variant": info.name}) for s in base]
        if report.shard is not None:
            ids = {s.id for s in mine}
            both = {s.id for s in theirs} & ids
            mine = [s for s in mine if s.id in both]
            theirs = [s for s in theirs if s.id in both]
        # `advisory` must not hide this variant's reasons inside compare(): it is decided here.
        current = report.model_copy(update={"scenarios": mine, "variants": []})
        before = report.model_copy(update={"scenarios": theirs, "variants": []})
        found = compare(current, before, verdicts_only, volatile_patterns)
        gates.append(
            VariantComparison(
                variant=info.name,
                reference=reference.name,
                required=info.required,
                scenarios=found.scenarios,
                counts=found.counts,
                details=found.details,
                regressions=[f"{line} (reference: {reference.name})" for line in found.regressions],
            )
        )
    return gates


def with_variants(
    report: RunReport,
    variants: Sequence[VariantSettings],
    reference: str | None,
    settings: RegressionSettings,
    volatile_patterns: Sequence[str] = DEFAULT_VOLATILE_PATTERNS,
) -> RunReport:
    """Return `report` with its `variants` and `variant_comparisons` filled in (unchanged
    when no result ran on a variant); `volatile_patterns` as for `compare`."""
    infos = variant_infos(report, variants, reference)
    if not infos:
        return report
    gates = compare_variants(report, infos, settings, volatile_patterns)
    return report.model_copy(update={"variants": infos, "variant_comparisons": gates})
