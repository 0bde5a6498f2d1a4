"""ClawSpec's cost per scenario next to the agents' own time.

`clawspec run` (the CLI, in its own process: start-up, load, run, JSON report) over generated
suites against the fake gateway (benchmarks/gateway_fake.py: 200 ms per hook run, real log
lines), side by side with the bare loop: the same hook requests at the same concurrency,
nothing else. At 200 scenarios also the loop that first loads the suite (`clawspec.api.load`,
which every run does before its first hook request): what loading costs, and what the rest
does. Each scenario carries two artifact assertions, an un-scoped `log_entry` on the shared
gateway log and two run-scoped log assertions. Prints medians, spreads, goals and the ratio
run / bare loop; then the per-scenario overhead at 100, 1,000 and 10,000 scenarios (fake
latency 20 ms, concurrency 16), which must not climb. Asserts nothing.

    .venv/bin/python benchmarks/bench_runner.py [--quick] [--repeats N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    QUICK,
    ChildRun,
    Figure,
    bare_loop,
    clawspec_run,
    fresh,
    report_of,
    row,
    write_suite,
)


def side_by_side(
    scenarios: int, concurrency: int, latency_s: float, repeats: int, loading: bool = False
) -> tuple[list[ChildRun], list[ChildRun], list[float], list[ChildRun]]:
    """Alternate bare loop and clawspec run `repeats` times; fresh workspace and log each time.
    Returns both processes of each repeat, the last report's first/last-tenth durations and,
    with `loading`, the loop that first loads the suite (harness.bare_loop), run between them."""
    bare: list[ChildRun] = []
    run: list[ChildRun] = []
    loaded: list[ChildRun] = []
    durations: list[int] = []
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(repeats):
            loop = bare_loop(fresh(Path(folder), f"bare{attempt}"), scenarios, concurrency,
                             latency_s)  # fmt: skip
            if loading:
                suite = fresh(Path(folder), f"load{attempt}")
                write_suite(suite, scenarios)
                loaded.append(bare_loop(suite, scenarios, concurrency, latency_s, load=True))
                if loaded[-1].returncode != 0:
                    raise SystemExit(f"loading loop failed: {loaded[-1].stdout[-2000:]}")
            workspace = fresh(Path(folder), f"run{attempt}")
            write_suite(workspace, scenarios)
            result = clawspec_run(workspace, concurrency, latency_s)
            report = report_of(workspace)
            if result.returncode != 0 or loop.returncode != 0:
                print(result.stdout[-2000:], loop.stdout[-2000:])
                raise SystemExit(f"run failed: totals {report.get('totals')}")
            bare.append(loop)
            run.append(result)
            durations = [s["duration_ms"] for s in report["scenarios"]]
    return bare, run, _tail(durations), loaded


def _seconds(runs: list[ChildRun]) -> Figure:
    return Figure([r.seconds for r in runs])


def _ratios(bare: list[ChildRun], run: list[ChildRun]) -> Figure:
    return Figure([r.seconds / b.seconds for b, r in zip(bare, run, strict=True)])


def _tail(durations: list[int]) -> list[float]:
    """Median scenario duration of the first and the last tenth (does it climb?)."""
    tenth = max(1, len(durations) // 10)
    first, last = sorted(durations[:tenth]), sorted(durations[-tenth:])
    return [first[len(first) // 2] / 1000, last[len(last) // 2] / 1000]


def ratio_case(
    scenarios: int, concurrency: int, repeats: int, goal: str, loading: bool = False
) -> None:
    bare_runs, runs, (first, last), loaded = side_by_side(
        scenarios, concurrency, 0.2, repeats, loading
    )
    bare, run, ratios = _seconds(bare_runs), _seconds(runs), _ratios(bare_runs, runs)
    label = f"{scenarios} scenarios, concurrency {concurrency}, 200 ms/run"
    print(f"{label}: {repeats} repeat(s), bare loop and clawspec run alternating")
    row("bare hook loop (the limit)", f"{bare.median:.2f} s", bare.spread("s"), "-")
    row("clawspec run", f"{run.median:.2f} s", run.spread("s"), "-")
    row("ratio run / bare loop", f"{ratios.median:.3f}", ratios.spread("", digits=3), goal)
    for name, part in (("start-up (to the first hook request)", "start_s"),
                       ("tail (last answer to exit)", "tail_s")):  # fmt: skip
        ours = Figure([getattr(r, part) for r in runs])
        limit = Figure([getattr(r, part) for r in bare_runs])
        row(f"  {name}", f"{ours.median:.2f} s", ours.spread("s"), "-",
            f"(bare loop {limit.median:.2f} s)")  # fmt: skip
    if loaded:
        # Where the run's cost beyond the bare loop goes: loading the suite, which every run
        # does before its first hook request, and the rest (checks, reports, the runner).
        floor = _ratios(bare_runs, loaded)
        start = Figure([r.start_s for r in loaded])
        row("ratio load + bare loop / bare loop", f"{floor.median:.3f}",
            floor.spread("", digits=3), "-", f"(start-up {start.median:.2f} s)")  # fmt: skip
        rest = _ratios(loaded, runs)
        row("ratio run / load + bare loop", f"{rest.median:.3f}", rest.spread("", digits=3),
            "-")  # fmt: skip
    row("scenario duration, first / last tenth", f"{first:.2f}/{last:.2f} s", "last repeat",
        "flat")  # fmt: skip


def flat_case(sizes: list[int], repeats: int) -> None:
    """Per-scenario overhead (run - bare) / N as the suite grows; short runs keep it quick."""
    print("per-scenario overhead, concurrency 16, 20 ms/run: (clawspec run - bare loop) / N")
    for size in sizes:
        bare, run, _, _ = side_by_side(size, 16, 0.02, repeats)
        per = Figure(
            [(r.seconds - b.seconds) / size * 1000 for b, r in zip(bare, run, strict=True)]
        )
        row(f"{size:>6} scenarios: overhead per scenario", f"{per.median:.2f} ms",
            per.spread("ms"), "flat", f"(ratio {_ratios(bare, run).median:.2f})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one repeat, no 10,000 case")
    parser.add_argument("--repeats", type=int, default=1 if QUICK else 3)
    parser.add_argument("--sizes", default="100,1000" if QUICK else "100,1000,10000")
    parser.add_argument("--big-repeats", type=int, help="repeats at 1,000 (default --repeats)")
    args = parser.parse_args()
    ratio_case(200, 4, args.repeats, "<= 1.02", loading=True)
    ratio_case(1000, 16, args.big_repeats or args.repeats, "<= 1.05")
    sizes = [int(size) for size in args.sizes.split(",") if size]
    flat_case(sizes, 1 if QUICK else 2)


if __name__ == "__main__":
    main()
