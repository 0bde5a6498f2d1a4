"""Benchmark an un-scoped `log_entry` on large gateway logs: time and memory grow linearly.

For each size (30 / 100 / 300 / 500 MB; `--quick`: 30 / 100) a gateway log is generated from
the recorded real gateway lines (tests/gateway/fixtures/openclaw-real.log, each copy with fresh
run, session and trace ids), with the line the pattern names at its very end, and one process
evaluates `log_entry` on it (no `run_id`: the whole file is read), as a scenario's run would:
its wall time and peak RSS (from wait4), then the ratios to the smallest size. A regex pattern
(every line visited) is measured the same way. Last, the largest log's search is sent SIGTERM
one second in, turned into the stop an abandoned scenario gets (in `clawspec run`: a second
signal, or the first one's grace period over): how long the process takes to end after it.

The logs are written to a temporary folder (after checking free disk) and deleted afterwards.

Run: .venv/bin/python benchmarks/bench_logs.py [--quick] [--sizes 30,100,300,500]
Prints numbers only (no assertions).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_limits import EVALUATE
from benchmarks.harness import PYTHON, QUICK, ROOT, ChildRun, row, run_child

REAL_LOG = ROOT / "tests" / "gateway" / "fixtures" / "openclaw-real.log"
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")
NEEDLE = "hook:clawspec:bench-needle-0001"
# The same evaluation, stoppable: SIGTERM sets the stop event (what abandoning the scenario does).
STOPPABLE = EVALUATE.replace(
    "verdict = ",
    "import signal\nsignal.signal(signal.SIGTERM, lambda *_: ctx.stop.set())\n"
    "print('ready', flush=True)\nverdict = ",
)


def generate(path: Path, size_mb: int) -> None:
    """About `size_mb` of real gateway lines, fresh ids in every copy, the needle last."""
    source = REAL_LOG.read_text(encoding="utf-8")
    pieces, ids = _ID.split(source), _ID.findall(source)
    distinct = list(dict.fromkeys(ids))
    with path.open("w", encoding="utf-8") as handle:
        written = 0
        while written < size_mb * 1024 * 1024:
            fresh = {old: str(uuid.uuid4()) if "-" in old else uuid.uuid4().hex for old in distinct}
            parts = [pieces[0]]
            for old, piece in zip(ids, pieces[1:], strict=True):
                parts += [fresh[old], piece]
            written += handle.write("".join(parts))
        completion = {"message": json.dumps({"sessionKey": NEEDLE, "status": "ok"}), "time": "t"}
        handle.write(json.dumps(completion) + "\n")


def evaluate(root: Path, log: Path, pattern: str) -> ChildRun:
    assertion = json.dumps({"type": "log_entry", "path": str(log), "pattern": pattern})
    return run_child([PYTHON, "-c", EVALUATE, str(root), assertion], root)


def stop_after(root: Path, log: Path, delay_s: float) -> tuple[float, str]:
    """SIGTERM a search `delay_s` into it: seconds from the signal to the process's end."""
    assertion = json.dumps({"type": "log_entry", "path": str(log), "pattern": "^no such line$"})
    child = subprocess.Popen(
        [PYTHON, "-c", STOPPABLE, str(root), assertion], cwd=root, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert child.stdout is not None
    child.stdout.readline()  # "ready": imports done, the search starts
    time.sleep(delay_s)
    child.send_signal(signal.SIGTERM)
    sent = time.perf_counter()
    out = child.communicate()[0]
    return time.perf_counter() - sent, out.strip().splitlines()[-1] if out.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30,100" if QUICK else "30,100,300,500")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="clawspec-bench-logs-"))
    try:
        free = shutil.disk_usage(root).free // (1024 * 1024)
        if free < 2 * max(sizes):
            print(f"skipped: {free} MB free in {root}, need {2 * max(sizes)}")
            return
        figures: dict[str, list[tuple[int, ChildRun]]] = {"plain": [], "regex": []}
        log = root / "openclaw.log"
        for size in sizes:
            generate(log, size)
            actual = log.stat().st_size // (1024 * 1024)
            for kind, pattern in (("plain", NEEDLE), ("regex", NEEDLE.replace("-0001", r"-0+1\b"))):
                child = evaluate(root, log, pattern)
                verdict = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
                figures[kind].append((actual, child))
                used = f"{child.cpu_s:.2f} s CPU, {child.max_rss_mb:.0f} MB peak RSS"
                row(f"log_entry ({kind}), {actual} MB log", f"{child.seconds:.2f} s", used,
                    "linear")  # fmt: skip
                print(f"    -> {verdict[:120]}", flush=True)
        for kind, runs in figures.items():
            (small, first), *rest = runs
            for size, child in rest:
                cpu = child.cpu_s / first.cpu_s
                print(f"{kind}: {size} MB / {small} MB = size x{size / small:.1f}: time "
                      f"x{child.seconds / first.seconds:.1f}, CPU x{cpu:.1f}, peak RSS"
                      f" x{child.max_rss_mb / first.max_rss_mb:.2f}")  # fmt: skip
        took, verdict = stop_after(root, log, 1.0)
        row(f"SIGTERM 1 s into the search of the {sizes[-1]} MB log", f"{took:.2f} s to exit",
            "-", "< 1 s")  # fmt: skip
        print(f"    -> {verdict[:160]}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
