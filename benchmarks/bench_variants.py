"""Variants cost nothing but their agent runs: 200 scenarios x 3 model variants.

`clawspec run` (the CLI in its own process) over the runner benchmark's suite with three model
variants (one gateway, a per-request model override) against the fake gateway
(benchmarks/gateway_fake.py, 200 ms per hook run), side by side with the bare loop: 600 hook
requests at the same concurrency, nothing else. The run also compares two variants with the
reference and writes the side-by-side table into every report. Prints medians, spreads and
the ratio run / bare loop (goal: at most 1.05). Asserts nothing.

    .venv/bin/python benchmarks/bench_variants.py [--repeats N] [--concurrency C]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    QUICK,
    SCENARIO,
    ChildRun,
    Figure,
    bare_loop,
    clawspec_run,
    fresh,
    report_of,
    row,
    write_suite,
)

SCENARIOS = 200
# The runner benchmark's scenario, each run writing a file of its own: the three variants of a
# scenario run at the same time, and a shared path would let one variant's write cut the file
# another is checking.
TEMPLATE = SCENARIO.replace("path: out/s{i}.md", 'path: "out/s{i}-{{{{run_id}}}}.md"').replace(
    "write:out/s{i}.md", "write:out/s{i}-{{{{run_id}}}}.md"
)
VARIANTS = """variants:
  - name: sonnet
    model: anthropic/claude-sonnet-4-6
  - name: haiku
    model: anthropic/claude-haiku-4-5
  - name: mini
    model: openai/gpt-5-mini
    required: false
"""


def measure(concurrency: int, repeats: int) -> tuple[list[ChildRun], list[ChildRun]]:
    bare: list[ChildRun] = []
    run: list[ChildRun] = []
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(repeats):
            loop = bare_loop(fresh(Path(folder), f"bare{attempt}"), 3 * SCENARIOS, concurrency,
                             0.2)  # fmt: skip
            workspace = fresh(Path(folder), f"run{attempt}")
            write_suite(workspace, SCENARIOS, template=TEMPLATE)
            config = workspace / "clawspec.yaml"
            config.write_text(config.read_text() + VARIANTS)
            result = clawspec_run(workspace, concurrency, 0.2)
            report = report_of(workspace)
            ran = len(report["scenarios"])
            if result.returncode != 0 or loop.returncode != 0 or ran != 3 * SCENARIOS:
                print(result.stdout[-2000:], loop.stdout[-2000:])
                raise SystemExit(f"run failed: {ran} results, totals {report.get('totals')}")
            bare.append(loop)
            run.append(result)
    return bare, run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=1 if QUICK else 3)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    bare_runs, runs = measure(args.concurrency, args.repeats)
    bare = Figure([r.seconds for r in bare_runs])
    run = Figure([r.seconds for r in runs])
    ratios = Figure([r.seconds / b.seconds for b, r in zip(bare_runs, runs, strict=True)])
    print(
        f"{SCENARIOS} scenarios x 3 variants, concurrency {args.concurrency}, 200 ms/run: "
        f"{args.repeats} repeat(s), bare loop and clawspec run alternating"
    )
    row("bare hook loop (600 requests)", f"{bare.median:.2f} s", bare.spread("s"), "-")
    row("clawspec run (3 variants)", f"{run.median:.2f} s", run.spread("s"), "-")
    row("ratio run / bare loop", f"{ratios.median:.3f}", ratios.spread("", digits=3), "<= 1.05")


if __name__ == "__main__":
    main()
