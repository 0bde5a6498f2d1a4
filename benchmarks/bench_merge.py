"""Merging shard reports: 20 shards of 500 scenarios each (10,000 scenarios) into one report.

Writes 20 realistic shard reports (four assertions and a few tool calls per scenario), then
times `clawspec merge` in two parts: reading, checking and merging the reports, and the whole
command with its outputs (JSON report, JUnit, job summary and annotations rendered). Peak
Python memory is measured in a second pass under tracemalloc (which slows what it measures),
and the process's peak RSS is printed too. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_merge.py [--shards 20] [--per-shard 500]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clawspec import api
from clawspec.assertions.base import Status
from clawspec.reports.github.annotations import select_annotations
from clawspec.reports.github.summary import render_summary
from clawspec.reports.json_report import write_json
from clawspec.reports.model import (
    AssertionResult,
    RunReport,
    ScenarioEvidence,
    ScenarioResult,
    ToolCallRecord,
    Totals,
)
from clawspec.sharding.merge import check, collect, merge
from clawspec.sharding.split import Shard, split_selection

STATUSES = [Status.PASS] * 8 + [Status.FAIL, Status.ERROR]


def scenario(number: int) -> ScenarioResult:
    contract = f"skills/skill-{number // 50:03d}/tests/scenarios.yaml"
    status = STATUSES[number % len(STATUSES)]
    assertions = [
        AssertionResult(
            phase="then",
            index=i,
            type="artifact_contains",
            line=10 + 3 * i,
            status=status if i == 3 else Status.PASS,
            message=f"section 'cta' missing in out/run-{number}.md" if i == 3 else "ok",
        )
        for i in range(4)
    ]
    tools = [
        ToolCallRecord(name=name, agent="main", run_id=f"r{number}")
        for name in ("read", "web_search", "write")
    ]
    return ScenarioResult(
        id=f"{contract}::case-{number:05d}",
        contract=contract,
        line=5 + 20 * (number % 50),
        name=f"case-{number:05d}",
        target=f"skills/skill-{number // 50:03d}",
        status=status,
        message="" if status == Status.PASS else "then[3] (artifact_contains): section missing",
        run_id=f"{number:016x}",
        duration_ms=1_000 + (number * 7919) % 60_000,
        assertions=assertions,
        evidence=ScenarioEvidence(tools=tools, delegations=["researcher"]),
    )


def write_shards(folder: Path, shards: int, per_shard: int) -> None:
    everything = [scenario(n) for n in range(shards * per_shard)]
    ids = [s.identity.key for s in everything]
    durations = {s.identity.key: s.duration_ms for s in everything}
    for index in range(1, shards + 1):
        part = split_selection(ids, Shard(index, shards), durations)
        chosen = [everything[p] for p in part.positions]
        report = RunReport(
            version="0.1.0",
            run_id=f"shard{index:02d}",
            started_at=f"2026-11-23T10:{index:02d}:00+00:00",
            duration_ms=sum(s.duration_ms for s in chosen) // 4,
            totals=Totals.of(chosen),
            scenarios=chosen,
            shard=part.info,
        )
        write_json(report, folder / f"shard-{index:02d}.json")


def merge_only(folder: Path) -> RunReport:
    return merge(check(collect([str(folder)], note=lambda _text: None)))


def whole_command(folder: Path, out: Path) -> RunReport:
    flags = {"report_json": str(out / "merged.json"), "junit": str(out / "junit.xml")}
    result = api.merge([str(folder)], environ={}, flags=flags, note=lambda _text: None)
    # The GitHub outputs are only written on GitHub; render them here so they are timed too.
    render_summary(result.report)
    select_annotations(result.report)
    return result.report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--per-shard", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, out = Path(tmp) / "shards", Path(tmp) / "out"
        folder.mkdir()
        out.mkdir()
        started = time.perf_counter()
        write_shards(folder, args.shards, args.per_shard)
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(
            f"{args.shards} shard reports x {args.per_shard} scenarios: "
            f"{size / 1e6:.1f} MB of JSON (written in {time.perf_counter() - started:.1f} s)"
        )
        cwd = os.getcwd()
        os.chdir(tmp)  # settings: no clawspec.yaml above a temporary folder
        try:
            for name, action in (
                ("read + check + merge", lambda: merge_only(folder)),
                (
                    "whole merge (+ JSON, JUnit, summary, annotations)",
                    lambda: whole_command(folder, out),
                ),
            ):
                timings = []
                for _ in range(3):
                    started = time.perf_counter()
                    report = action()
                    timings.append(time.perf_counter() - started)
                assert report.totals.scenarios == args.shards * args.per_shard
                tracemalloc.start()
                action()
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                per = min(timings) / report.totals.scenarios * 1e6
                print(
                    f"{name}: best {min(timings):.2f} s of 3 ({per:.0f} us per scenario), "
                    f"peak Python memory {peak / 1e6:.0f} MB"
                )
        finally:
            os.chdir(cwd)
        sys.stdout.flush()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"process peak RSS: {rss:.0f} MB (includes building the input reports)")


if __name__ == "__main__":
    main()
