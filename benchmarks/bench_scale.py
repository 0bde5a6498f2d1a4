"""Scale: 10,000 generated scenarios.

- `clawspec validate` of 10,000 scenarios (20 contracts; a precondition, three file assertions
  and a run-scoped log assertion each): wall time and peak RSS, start-up included;
- `clawspec run` of them against the fake gateway (20 ms per run, concurrency 16): peak RSS;
- writing the reports of that run (JSON, JUnit, GitHub job summary), timed in this process.

Medians of several repeats with the spread; prints figures and goals, asserts nothing.

    .venv/bin/python benchmarks/bench_scale.py [--quick] [--scenarios 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    CLAWSPEC,
    FILE_AND_LOG,
    QUICK,
    SOURCE,
    Figure,
    child_env,
    clawspec_run,
    report_of,
    row,
    run_child,
    write_suite,
)


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def report_writing(workspace: Path, repeats: int) -> None:
    if SOURCE:  # time that checkout's report writers, not this one's
        sys.path.insert(0, SOURCE)
    from clawspec import secrets
    from clawspec.reports.github.summary import render_summary
    from clawspec.reports.json_report import write_json
    from clawspec.reports.junit import write_junit
    from clawspec.reports.model import RunReport

    report = RunReport.model_validate(report_of(workspace))
    out = workspace / "again"
    cases = {
        "JSON report": lambda: write_json(report, out / "report.json"),
        "JUnit XML": lambda: write_junit(report, out / "junit.xml"),
        "job summary (Markdown, 1 MiB cap)": lambda: render_summary(report),
    }
    with secrets.scope() as registry:  # as in a run: the writers mask what the registry holds
        registry.add("bench-token-0123456789")
        figures = {
            name: Figure([timed(action) for _ in range(repeats)]) for name, action in cases.items()
        }
    total = Figure([sum(f.samples[i] for f in figures.values()) for i in range(repeats)])
    for name, figure in figures.items():
        row(f"write {name}", f"{figure.median:.2f} s", figure.spread("s"), "-")
    row("write all three", f"{total.median:.2f} s", total.spread("s"), "< 2 s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--scenarios", type=int, default=10000)
    args = parser.parse_args()
    repeats = 2 if QUICK else 3
    n = args.scenarios
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        write_suite(workspace, n, template=FILE_AND_LOG)
        print(f"scale: {n:,} scenarios in 20 contracts, {repeats} repeats")
        runs = [
            run_child([*CLAWSPEC, "validate", "."], workspace, child_env()) for _ in range(repeats)
        ]
        if runs[0].returncode != 0:
            raise SystemExit(runs[0].stdout[-2000:])
        wall, rss = Figure([r.seconds for r in runs]), Figure([r.max_rss_mb for r in runs])
        row("clawspec validate: load + validate", f"{wall.median:.2f} s", wall.spread("s"), "< 3 s")
        row("clawspec validate: peak RSS", f"{rss.median:.0f} MB", rss.spread("MB", digits=0),
            "-")  # fmt: skip
        result = clawspec_run(workspace, 16, 0.02)
        if result.returncode != 0:
            raise SystemExit(result.stdout[-2000:])
        row("clawspec run (c=16, 20 ms/run): wall", f"{result.seconds:.1f} s", "1 run", "-")
        row("clawspec run: peak RSS", f"{result.max_rss_mb:.0f} MB", "1 run", "< 150 MB")
        report_writing(workspace, repeats)


if __name__ == "__main__":
    main()
