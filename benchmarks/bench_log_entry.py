"""Benchmark one plain `log_entry` whose pattern is absent from a big gateway log: MB/s, and
peak RSS that does not grow with the log.

A gateway log is generated from the recorded real gateway lines (as bench_logs.py does: fresh
run, session and trace ids in every copy) at two sizes (~100 and ~400 MiB; `--quick`: ~30 and
~100), and one process per pattern evaluates an un-scoped `log_entry` on it, as a scenario's run
would: a plain literal (`NEVER-IN-THIS-LOG`) and a simple regex (`tool=exec\\b`), both absent,
so the whole file is read. Printed: the search's own time (around `evaluate`, imports left
out), its MB/s by wall time and by CPU time, and the process's peak RSS (from wait4) beside
that of the same evaluation on an empty log (the imports' share). Last, a suite's pattern per
scenario on the shared gateway log, in this process: 4,000 times, 4.7 KB of a run's gateway
lines appended, then its run id looked up; CPU time after 1,000 and after 4,000 (the file goes
to the gram index once new patterns have read it 16 times over: it must not grow as N²).

The logs are written to a temporary folder (after checking free disk) and deleted afterwards.
CLAWSPEC_BENCH_SOURCE=<checkout> measures another checkout's code (e.g. the code before).

Run: .venv/bin/python benchmarks/bench_log_entry.py [--quick] [--sizes 100,400]
Prints numbers only (no assertions).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if os.environ.get("CLAWSPEC_BENCH_SOURCE"):  # the suite part runs in this process
    sys.path.insert(0, os.environ["CLAWSPEC_BENCH_SOURCE"])

from benchmarks.bench_limits import EVALUATE
from benchmarks.bench_logs import generate
from benchmarks.gateway_fake import run_lines
from benchmarks.harness import PYTHON, QUICK, ChildRun, child_env, row, run_child

PATTERNS = {"literal": "NEVER-IN-THIS-LOG", "regex": r"tool=exec\b"}
# The evaluation, timed around `evaluate` only (imports and start-up left out).
TIMED = (
    EVALUATE.replace(
        "verdict = ",
        "import time\nstarted, cpu = time.perf_counter(), time.process_time()\nverdict = ",
    )
    + "print('TIMED', time.perf_counter() - started, time.process_time() - cpu)\n"
)


def evaluate(root: Path, log: Path, pattern: str) -> tuple[ChildRun, float, float, str]:
    """One process evaluating the assertion: (the run, search seconds, CPU seconds, verdict)."""
    assertion = json.dumps({"type": "log_entry", "path": str(log), "pattern": pattern})
    child = run_child([PYTHON, "-c", TIMED, str(root), assertion], root, child_env())
    lines = child.stdout.strip().splitlines()
    timed = [line.split() for line in lines if line.startswith("TIMED ")]
    if child.returncode != 0 or not timed:
        raise SystemExit(child.stdout[-2000:])
    verdict = next((line for line in lines if not line.startswith("TIMED ")), "")
    return child, float(timed[-1][1]), float(timed[-1][2]), verdict


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30,100" if QUICK else "100,400")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="clawspec-bench-log-entry-"))
    try:
        free = shutil.disk_usage(root).free // (1024 * 1024)
        if free < 2 * max(sizes):
            print(f"skipped: {free} MB free in {root}, need {2 * max(sizes)}")
            return
        log = root / "openclaw.log"
        log.write_text("")
        empty, _, _, _ = evaluate(root, log, PATTERNS["literal"])
        row("log_entry on an empty log (imports only)", "-", f"{empty.max_rss_mb:.0f} MB RSS", "-")
        peaks: dict[str, list[float]] = {kind: [] for kind in PATTERNS}
        for size in sizes:
            generate(log, size)
            megabytes = log.stat().st_size / 1e6
            for kind, pattern in PATTERNS.items():
                child, seconds, cpu, verdict = evaluate(root, log, pattern)
                peaks[kind].append(child.max_rss_mb)
                used = (
                    f"{seconds:.2f} s, {cpu:.2f} s CPU ({megabytes / cpu:.0f} MB/s CPU), "
                    f"{child.max_rss_mb:.0f} MB peak RSS"
                )
                row(f"log_entry {kind} `{pattern}`, {megabytes:.0f} MB log",
                    f"{megabytes / seconds:.0f} MB/s", used, ">= 100 MB/s")  # fmt: skip
                print(f"    -> {verdict[:120]}", flush=True)
        for kind, (first, *rest) in peaks.items():
            for size, peak in zip(sizes[1:], rest, strict=True):
                print(f"{kind}: peak RSS at {size} MiB / at {sizes[0]} MiB = x{peak / first:.2f}"
                      f" (log x{size / sizes[0]:.1f})")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    suite(1000 if QUICK else 4000)


def suite(scenarios: int) -> None:
    """Each scenario appends its run's lines, then looks its run id up in the whole file."""
    from clawspec.gateway.logs.lines import LogLines, Pattern

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "openclaw.log"
        log.write_text("")
        lines = LogLines(log)
        started, marks = time.process_time(), []
        for number in range(1, scenarios + 1):
            run = str(uuid.uuid4())
            with log.open("a", encoding="utf-8") as handle:
                handle.write("".join(run_lines(run, ["write"])))
            if lines.first_match(Pattern(run)).line is None:
                raise SystemExit(f"run {run} not found")
            if number in (1000, scenarios):
                marks.append(f"{time.process_time() - started:.2f} s at {number:,}")
        size = log.stat().st_size / 1e6
        # Then regexes none of whose needles the log holds (a scenario's own absent pattern),
        # answered by the gram index the suite left: its segments are passed over unread.
        started = time.process_time()
        for number in range(100):
            if lines.first_match(Pattern(rf"no run {number:04d} .*done\b")).line is not None:
                raise SystemExit("an absent regex matched")
        regex = f"{(time.process_time() - started) * 10:.1f} ms"
    row(f"{scenarios:,} scenarios' own patterns, shared log", marks[-1], ", ".join(marks),
        "not N²", f"({size:.1f} MB log)")  # fmt: skip
    row("  then an absent regex, gram index", regex, "mean of 100", "-")


if __name__ == "__main__":
    main()
