"""Join the shard reports of one matrix into the report of one run (`clawspec merge`).

The merge refuses what would make a wrong report (reports of another selection, of another
split, the same shard twice: exit 2) and never passes silently with a shard missing: the
merged report names the missing shards and the exit code is 1. `clawspec.api.merge` then puts
the merged report through `runner.finish`, the same step a run ends with, so it gets every
output a run writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from clawspec import __version__
from clawspec.config.settings import VariantSettings
from clawspec.errors import UsageError
from clawspec.reports.model import MergeInfo, RunReport, ScenarioResult, ShardInfo, Totals
from clawspec.reports.spend import merged as merged_spend
from clawspec.sharding.report_files import expand, looks_like_report, read_json


@dataclass(frozen=True)
class ShardReport:
    """One shard's report and the file it came from."""

    path: Path
    report: RunReport

    @property
    def shard(self) -> ShardInfo:
        assert self.report.shard is not None  # only asked of shard reports
        return self.report.shard

    def label(self) -> str:
        return f"{self.path} (shard {self.shard.index}/{self.shard.total})"


def collect(patterns: Sequence[str], note: Callable[[str], None]) -> list[ShardReport]:
    """Read every shard report the patterns name; skip other JSON found inside folders."""
    shards: list[ShardReport] = []
    skipped = 0
    for item in expand(patterns):
        data = read_json(item.path)
        if not looks_like_report(data) or not (data.get("shard") or _variant_run(data)):
            if item.named:
                what = "a ClawSpec report" if not looks_like_report(data) else "a shard report"
                raise UsageError(
                    f"{item.path}: not {what} (no 'shard' block): shard reports are written "
                    "by `clawspec run --shard i/n`, variant runs by `clawspec run --variant NAME`"
                )
            skipped += 1
            continue
        try:
            report = RunReport.model_validate(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(map(str, first["loc"]))
            raise UsageError(
                f"{item.path}: not a report this ClawSpec {__version__} can read: "
                f"{where}: {first['msg']}"
            ) from None
        shards.append(ShardReport(item.path, report))
    if skipped:
        note(f"note: {skipped} JSON file(s) in the folders given are not shard reports; ignored")
    if not shards:
        raise UsageError(
            f"no shard reports found in {', '.join(patterns)}: run the shards with "
            "`clawspec run --shard i/n` and pass their JSON reports"
        )
    return shards


def _variant_run(data: object) -> bool:
    """A whole (unsharded) run whose every result ran on a variant: one job of a matrix of
    variants, which merge joins with the others."""
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    return bool(scenarios) and all(
        isinstance(s, dict) and s.get("variant")
        for s in scenarios  # type: ignore[union-attr]
    )


def variants_of(report: RunReport) -> set[str | None]:
    return {s.variant for s in report.scenarios}


def runs(reports: Sequence[ShardReport]) -> list[list[ShardReport]]:
    """The reports grouped into runs: the shards of one split together (one fingerprint), each
    unsharded variant run alone. Several runs are joined only when each ran other variants
    (a matrix of variant jobs); otherwise they are one run's shards and `check` says what is
    wrong with them."""
    groups: dict[str, list[ShardReport]] = {}
    for item in reports:
        key = item.shard.fingerprint if item.report.shard is not None else f"run:{item.path}"
        groups.setdefault(key, []).append(item)
    found = list(groups.values())
    if len(found) == 1:
        return found
    seen: dict[str | None, ShardReport] = {}
    for group in found:
        for variant in set().union(*(variants_of(item.report) for item in group)):
            if variant is None or variant in seen:
                if all(item.report.shard is not None for item in reports):
                    return [list(reports)]  # shards of different selections: `check` says so
                other = seen.get(variant)
                where = f" and {other.path}" if other is not None else ""
                raise UsageError(
                    f"{group[0].path}{where} both hold results of variant '{variant}': merge "
                    "joins runs of different variants (`clawspec run --variant NAME` in each "
                    "job) or the shards of one run"
                )
            seen[variant] = group[0]
    return found


def join(parts: Sequence[RunReport], variants: Sequence[str] = ()) -> RunReport:
    """One report from the runs of different variants (each already a whole run, or its
    shards merged): every result once, scenarios in their first run's order, each scenario's
    variants side by side in the configured order (`variants`; one run's order, whatever
    order the files came in), others after them; spend summed; missing shards still named."""
    order: dict[str, int] = {}
    for part in parts:
        for s in part.scenarios:
            order.setdefault(s.id, len(order))
    rank = {name: n for n, name in enumerate(variants)}
    ranked = sorted(
        (
            (order[s.id], rank.get(s.variant or "", len(rank)), n, i, s)
            for n, part in enumerate(parts)
            for i, s in enumerate(part.scenarios)
        ),
        key=lambda item: item[:4],
    )
    scenarios = [s for *_, s in ranked]
    started, duration_ms = _span(list(parts))
    budgets = [(f"{n + 1}/{len(parts)}", p) for n, p in enumerate(parts)]
    merged = [p.merged for p in parts if p.merged is not None]
    incomplete = next((m for m in merged if m.missing), None)
    return RunReport(
        version=__version__,
        run_id=uuid.uuid4().hex[:16],
        started_at=started,
        duration_ms=duration_ms,
        interrupted=any(p.interrupted for p in parts),
        totals=Totals.of(scenarios),
        scenarios=scenarios,
        source=parts[0].source,
        selection=parts[0].selection,
        budget=merged_spend(budgets),
        merged=incomplete or (merged[0] if merged else None),
    )


def unknown_variants(report: RunReport, configured: Sequence[str], config: Path | None) -> str:
    """A warning when results ran on variants the merge's configuration does not define
    (merged where the repository was not checked out, say): the reference, the gate and
    which variants are advisory come from there, so without them the report is not the one
    run's. '' when every variant is known."""
    unknown = sorted({s.variant for s in report.scenarios if s.variant} - set(configured))
    if not unknown:
        return ""
    where = config or "the configuration (no clawspec.yaml found)"
    return (
        f"warning: the reports ran on variant(s) {', '.join(unknown)}, which {where} does not "
        "define: no comparison with the reference for them, and their failures count as a "
        "required variant's; merge with the clawspec.yaml that defines the variants (in a "
        "checkout of the repository, or --config FILE)"
    )


def missing_variants(report: RunReport, configured: Sequence[VariantSettings]) -> list[str]:
    """The required variants of the configuration no result ran on, when the reports ran on
    variants at all: the job of one of them failed before writing its report, or its report
    was not passed, and the gate would pass on what was never run."""
    ran = {s.variant for s in report.scenarios}
    if not ran - {None}:
        return []
    return [v.name for v in configured if v.required and v.name not in ran]


def check(shards: Sequence[ShardReport]) -> list[ShardReport]:
    """Refuse reports that cannot belong together; return one report per shard, by index."""
    counts: dict[str, int] = {}
    for item in shards:
        counts[item.shard.fingerprint] = counts.get(item.shard.fingerprint, 0) + 1
    # The selection most reports agree on is the reference; name the odd one out.
    common = max(counts, key=lambda f: (counts[f], -_first(shards, f)))
    reference = shards[_first(shards, common)]
    for item in shards:
        if item.shard.fingerprint != common:
            raise UsageError(
                f"{item.label()} is a shard of another selection than {reference.label()}: "
                f"selection fingerprint {item.shard.fingerprint[:19]}… vs {common[:19]}… "
                "(different contracts or filters); merge only the shards of one run"
            )
        commits = (_commit(item), _commit(reference))
        if None not in commits and commits[0] != commits[1]:
            # The selection can be the same on two commits: an earlier build's report left in
            # a workspace that outlives builds (Jenkins) would stand in for a shard that died.
            raise UsageError(
                f"{item.label()} ran on commit {str(commits[0])[:12]} and {reference.label()} "
                f"on {str(commits[1])[:12]}: an earlier build's report? Merge only the shards "
                "of one run (clear the shard reports' folder before each build)"
            )
        if item.shard.total != reference.shard.total:
            raise UsageError(
                f"{item.label()} and {reference.label()} split the selection into different "
                "numbers of shards"
            )
        if item.shard.split != reference.shard.split:
            raise UsageError(
                f"{item.label()} and {reference.label()} split the selection differently "
                "(were they given different --durations reports?); run every shard with the "
                "same inputs"
            )
    by_index: dict[int, ShardReport] = {}
    for item in shards:
        earlier = by_index.get(item.shard.index)
        if earlier is None:
            by_index[item.shard.index] = item
        elif earlier.report.run_id != item.report.run_id:
            raise UsageError(
                f"shard {item.shard.index}/{item.shard.total} appears twice: {earlier.path} "
                f"(run {earlier.report.run_id}) and {item.path} (run {item.report.run_id}); "
                "keep one report per shard"
            )
    for item in by_index.values():
        _check_positions(item)
    return [by_index[i] for i in sorted(by_index)]


def _commit(item: ShardReport) -> str | None:
    source = item.report.source
    return source.commit if source is not None else None


def _first(shards: Sequence[ShardReport], fingerprint: str) -> int:
    return next(i for i, s in enumerate(shards) if s.shard.fingerprint == fingerprint)


def _check_positions(item: ShardReport) -> None:
    positions = item.shard.positions
    if len(positions) != len(item.report.scenarios) or any(
        not 0 <= p < item.shard.selected for p in positions
    ):
        raise UsageError(
            f"{item.label()}: its shard block does not match its scenarios (edited or cut "
            "short?); re-run the shard"
        )


def merge(shards: Sequence[ShardReport]) -> RunReport:
    """One report from checked shard reports: scenarios in contract order, totals recomputed."""
    first = shards[0].shard
    placed: dict[int, ScenarioResult] = {}
    for item in shards:
        for position, scenario in zip(item.shard.positions, item.report.scenarios, strict=True):
            if position in placed:
                raise UsageError(
                    f"{item.label()}: scenario '{scenario.identity.label}' is also in another "
                    "shard; "
                    "the reports do not come from one split"
                )
            placed[position] = scenario
    scenarios = [placed[p] for p in sorted(placed)]
    present = [item.shard.index for item in shards]
    missing = [i for i in range(1, first.total + 1) if i not in present]
    started, duration_ms = _span([item.report for item in shards])
    return RunReport(
        version=__version__,
        run_id=uuid.uuid4().hex[:16],
        started_at=started,
        duration_ms=duration_ms,
        interrupted=any(item.report.interrupted for item in shards),
        totals=Totals.of(scenarios),
        scenarios=scenarios,
        source=shards[0].report.source,
        selection=shards[0].report.selection,  # the same on every shard: one fingerprint
        budget=merged_spend(
            [(f"{item.shard.index}/{item.shard.total}", item.report) for item in shards]
        ),
        merged=MergeInfo(
            total=first.total,
            present=present,
            missing=missing,
            unreported=first.selected - len(scenarios),
            fingerprint=first.fingerprint,
            selected=first.selected,
        ),
    )


def _span(reports: Sequence[RunReport]) -> tuple[str, int]:
    """The whole matrix's start and wall-clock duration (first start to last end)."""
    try:
        starts = [datetime.fromisoformat(r.started_at) for r in reports]
        pairs = zip(starts, reports, strict=True)
        ends = [start + timedelta(milliseconds=r.duration_ms) for start, r in pairs]
    except (ValueError, TypeError):  # a hand-made timestamp: the longest shard, roughly
        return reports[0].started_at, max(r.duration_ms for r in reports)
    begin = min(starts)
    return reports[starts.index(begin)].started_at, (max(ends) - begin) // timedelta(milliseconds=1)
