"""Benchmark the log index: what a run-scoped log assertion reads from a big gateway log.

1. In this process: index the run's slice at the end of a ~100 MB log vs the whole file (time
   to index, to answer 10 assertions, peak memory).
2. `clawspec run` (its own process) of 4 scenarios with run-scoped log assertions against the
   fake gateway, whose log already holds 1 GiB with 100 earlier runs: the bytes the process
   read (`rchar`) minus those of the same run on a log holding only the 100 runs = what the
   big log cost (goal: 0, only the run's slice is read). The log is generated in a temporary
   folder (after checking free disk) and deleted afterwards.

Run: .venv/bin/python benchmarks/bench_log_index.py [--size-mb 100] [--big-mb 1024]
Prints numbers only (no assertions).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gateway_fake import line, run_lines
from benchmarks.harness import LOG, PYTHON, clawspec_env, fake_gateway, row, run_child, write_suite
from clawspec.gateway.logs.index import LogIndex


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
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--big-mb", type=int, default=1024)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    slice_vs_whole(args.size_mb)
    big_log(args.big_mb)


def slice_vs_whole(size_mb: int) -> None:
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


SCOPED = """  - name: s{i}
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then:
      - {{type: artifact_exists, path: out/s{i}.md}}
      - {{type: tool_was_called, tool: write}}
      - {{type: log_entry, path: {log}, pattern: "embedded run done", run_id: "{{{{run_id}}}}"}}
"""
RCHAR = (
    "import sys\nfrom clawspec.cli import main\ncode = main(['run', '--concurrency', '1'])\n"
    "io = dict(l.split(': ') for l in open('/proc/self/io').read().splitlines())\n"
    "print('RCHAR', io['rchar'])\nsys.exit(code)"
)


def earlier_runs(path: Path, size_mb: int, runs: int) -> None:
    """`runs` earlier hook runs spread through `size_mb` of heartbeat lines."""
    noise = line("diagnostic", "heartbeat: webhooks=0/0/0 active=0 waiting=0 queued=0", None, "",
                 None)  # fmt: skip
    per_run = size_mb * 1024 * 1024 // runs
    block = noise * max(1, min(1024 * 1024, per_run) // len(noise))
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(runs):
            for _ in range(per_run // len(block)):
                handle.write(block)
            handle.write("".join(run_lines(str(uuid.uuid4()), ["read", "write", "exec"])))


def bytes_read(workspace: Path, log_mb: int) -> tuple[int, int]:
    """(bytes the clawspec process read, log size) for a run over a log of `log_mb`."""
    log = workspace / LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    earlier_runs(log, log_mb, 100)
    size = log.stat().st_size
    with fake_gateway(workspace, 0.05) as url:
        result = run_child([PYTHON, "-c", RCHAR], workspace, clawspec_env(url))
    if result.returncode != 0:
        raise SystemExit(result.stdout[-2000:])
    return int(result.stdout.rsplit("RCHAR", 1)[1].split()[0]), size


def big_log(size_mb: int) -> None:
    free = shutil.disk_usage(tempfile.gettempdir()).free
    if free < (size_mb * 3) * 1024 * 1024:
        print(f"skipped the {size_mb} MiB log: only {free / 2**30:.1f} GiB free")
        return
    with tempfile.TemporaryDirectory() as folder:
        small, big = Path(folder, "small"), Path(folder, "big")
        for workspace in (small, big):
            workspace.mkdir()
            write_suite(workspace, 4, targets=1, template=SCOPED)
        started = time.perf_counter()
        small_read, small_size = bytes_read(small, 0)
        big_read, big_size = bytes_read(big, size_mb)
        took = time.perf_counter() - started
    extra = big_read - small_read
    print(f"gateway log of {big_size / 2**20:,.0f} MiB with 100 earlier runs, 4 scenarios "
          f"({took:.0f} s)")  # fmt: skip
    read = f"{big_read / 2**20:.1f} MiB"
    row(f"bytes read by clawspec run, {size_mb} MiB log", read, "1 run", "-")
    row("same run, log of the 100 runs only", f"{small_read / 2**20:.1f} MiB", "1 run", "-",
        f"({small_size / 1024:.0f} KiB log)")  # fmt: skip
    row("extra bytes read because the log is big", f"{extra:,} B", "1 run", "0",
        f"({extra / big_size:.6%} of the log)")  # fmt: skip


if __name__ == "__main__":
    main()
