"""Benchmark the log index: the run's slice at the end of a ~100 MB log vs the whole file.

Run: .venv/bin/python benchmarks/bench_log_index.py [size_mb]
Prints numbers only (no assertions): index time, time to answer 10 assertions, peak memory.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gateway_fake import line, run_lines
from clawspec.gateway.logs import LogIndex


def generate(path: Path, size_mb: int) -> tuple[int, str]:
    """Write ~size_mb of runs and heartbeats; the scenario's run is in the last slice."""
    target = size_mb * 1024 * 1024
    noise = line("diagnostic", "heartbeat: webhooks=0/0/0 active=0 waiting=0 queued=0", None, "",
                 None)  # fmt: skip
    with path.open("w", encoding="utf-8") as handle:
        written = 0
        while written < target:
            chunk = "".join(run_lines(str(uuid.uuid4()), ["read", "write", "exec"]) + [noise] * 5)
            written += handle.write(chunk)
        offset = handle.tell()
        scenario = str(uuid.uuid4())
        # the scenario's run interleaved with two concurrent runs
        a, b, c = (run_lines(scenario, ["read", "write"]), run_lines(str(uuid.uuid4()), ["exec"]),
                   run_lines(str(uuid.uuid4()), ["web_fetch"]))  # fmt: skip
        for trio in zip(a, b + [""] * len(a), c + [""] * len(a), strict=False):
            handle.write("".join(trio))
    return offset, scenario


def answer_ten(index: LogIndex) -> None:
    counts = index.tool_counts()
    for tool in ("read", "write", "exec", "sessions_spawn", "memory.search"):
        _ = counts.get(tool, 0)
    _ = [n for n in counts if n not in {"read", "write"}]
    _ = "main" in index.subagents
    _ = index.legacy_usage
    _ = sum(1 for _, text in index.lines() if "write" in text)
    _ = index.found


def measure(path: Path, offset: int, run: str) -> tuple[float, float, float, LogIndex]:
    """Time without tracing, then a second pass under tracemalloc for the peak memory."""
    started = time.perf_counter()
    index = LogIndex.build(path, offset, run_ids=["clawspec-run", run])
    built = time.perf_counter()
    answer_ten(index)
    answered = time.perf_counter()
    tracemalloc.start()
    answer_ten(LogIndex.build(path, offset, run_ids=["clawspec-run", run]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return built - started, answered - built, peak / 1024 / 1024, index


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "openclaw.log"
        started = time.perf_counter()
        offset, run = generate(path, size_mb)
        size = path.stat().st_size
        took = time.perf_counter() - started
        print(f"log: {size / 1024 / 1024:.1f} MB generated in {took:.1f} s; run slice starts "
              f"at byte {offset:,} ({(size - offset) / 1024:.1f} KB)")  # fmt: skip
        rows = []
        for label, start in (("run slice (offset)", offset), ("whole file (offset 0)", 0)):
            build_s, answer_s, peak_mb, index = measure(path, start, run)
            tools = [c.name for c in index.tool_calls]
            rows.append(build_s)
            print(f"{label:>22}: index {build_s * 1000:9.1f} ms  10 assertions "
                  f"{answer_s * 1000:7.2f} ms  peak {peak_mb:7.1f} MB  lines {index.lines_read:,}"
                  f"  found={index.found} tools={tools}")  # fmt: skip
        print(f"ratio whole/slice: {rows[1] / rows[0]:.0f}x")


if __name__ == "__main__":
    main()
