"""Benchmark the log index: the run's slice at the end of a ~100 MB log vs the whole file.

Run: .venv/bin/python benchmarks/bench_log_index.py [size_mb]
Prints numbers only (no assertions): index time, time to answer 10 assertions, peak memory.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

from clawspec.gateway.logs import LogIndex

META = {"runtime": "node", "runtimeVersion": "24.21.0", "hostname": "vm", "logLevelId": 2,
        "logLevelName": "DEBUG", "parentNames": ["openclaw"]}  # fmt: skip


def line(subsystem: str, message: str, trace: str | None, span: str, parent: str | None) -> str:
    data = {"0": json.dumps({"subsystem": subsystem}), "1": message, "_meta": META,
            "time": "2026-11-22T01:43:34.443+00:00", "hostname": "vm",
            "message": message}  # fmt: skip
    if trace:
        data.update(traceId=trace, spanId=span)
        if parent:
            data["parentSpanId"] = parent
    return json.dumps(data, separators=(",", ":")) + "\n"


def run_lines(hook_run: str, tools: list[str]) -> list[str]:
    """The lines of one hook run, in the real gateway's shapes."""
    trace, req, span = uuid.uuid4().hex, uuid.uuid4().hex[:16], uuid.uuid4().hex[:16]
    rid, sid, job = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    key = f"agent:main:cron:{job}:run:{sid}"
    out = [
        line("diagnostic", f"session state: sessionId={sid} sessionKey={key} prev=idle "
             'new=processing reason="" queueDepth=1', trace, req, None),
        line("agent/embedded", f"embedded run start: runId={rid} sessionId={sid} provider=fake "
             "model=fake-model thinking=off messageChannel=unknown", trace, span, req),
    ]  # fmt: skip
    for n, tool in enumerate(tools):
        for phase in ("start", "end"):
            out.append(line("agent/embedded", f"embedded run tool {phase}: runId={rid} "
                            f"tool={tool} toolCallId=call_{n}", trace, span, req))  # fmt: skip
        fetch = "[model-fetch] response provider=fake api=openai-completions status=200"
        out.append(line("provider-transport-fetch", fetch, trace, span, req))
    out.append(line("agent/embedded", f"embedded run done: runId={rid} sessionId={sid} "
                    "durationMs=2059 aborted=false", trace, req, None))  # fmt: skip
    hook = {"runId": hook_run, "jobId": job, "sourcePath": "/hooks/agent", "agentId": "main",
            "status": "ok", "sessionId": sid, "sessionKey": key}  # fmt: skip
    data = json.loads(line("gateway/hooks", "", trace, req, None))
    data["1"] = hook
    data["message"] = json.dumps(hook)
    out.append(json.dumps(data, separators=(",", ":")) + "\n")
    return out


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
