"""Hermetic runs: what the model traffic proxy costs, and what replay saves.

1. Per model call: a streamed chat completion with a gateway-sized request (captured from the
   real gateway), sent directly to the scripted provider, through the proxy in record mode, and
   answered by the proxy in replay mode (normalise, match, stream the recorded events).
2. The bundled examples through the real CLI with ClawSpec's bring-up of a real OpenClaw gateway:
   wall time with `--model-traffic record` (scripted provider running) against `replay` (provider
   stopped). This part needs the gateway and a loopback-only network namespace: it re-runs itself
   under `unshare --net` and is skipped, with a message, when that is not possible.

Prints numbers and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_traffic.py [--calls 200] [--skip-examples]
        [--save-cassettes DIR]   (keep the examples' recording, e.g. examples/.clawspec/cassettes)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clawspec.traffic.normalize import Normalizer  # noqa: E402
from clawspec.traffic.session import TrafficSession  # noqa: E402
from tests.support.scripted_provider import ScriptedProvider, load_scripts  # noqa: E402

FIXTURE = ROOT / "tests" / "traffic" / "fixtures" / "gateway-requests.json"
SCRIPT = {"bench": [{"text": "A reasonably short answer from the model, in a few chunks."}]}


def _post(url: str, body: bytes, headers: dict[str, str]) -> bytes:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("POST", parts.path, body=body, headers=headers)
    data = conn.getresponse().read()
    conn.close()
    return data


def _timed(url: str, body: bytes, headers: dict[str, str], calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        _post(url, body, headers)
        out.append((time.perf_counter() - started) * 1000)
    return out


def _line(label: str, samples: list[float], base: float | None = None) -> str:
    median = statistics.median(samples)
    p90 = statistics.quantiles(samples, n=10)[-1]
    ratio = f"  ({median / base:.2f}x direct)" if base else ""
    return f"{label:<28} median {median:7.2f} ms   p90 {p90:7.2f} ms{ratio}"


def per_call(calls: int) -> None:
    captured = json.loads(FIXTURE.read_text("utf-8"))["requests"][0]
    body: dict[str, Any] = captured["body"]
    body["messages"][1]["content"] += "\n[script:bench]"
    raw = json.dumps(body).encode()
    headers = {
        "Content-Type": "application/json",
        "Authorization": "Bearer bench-key-0123456789",
        "traceparent": captured["headers"]["traceparent"],
    }
    print(f"== per model call ({calls} calls, request {len(raw) / 1024:.0f} KB, streamed answer)")
    normalizer = Normalizer.build()
    with tempfile.TemporaryDirectory() as folder:
        cassette = Path(folder) / "bench"
        with ScriptedProvider(SCRIPT) as provider:
            direct = _timed(f"{provider.base_url}/chat/completions", raw, headers, calls)
            print(_line("direct to the provider", direct))
            base = statistics.median(direct)
            record = TrafficSession("record", normalizer, {"fake": provider.base_url})
            url = f"{record.start()}/fake/chat/completions"
            with record.scenario("bench::s", cassette, "[script:bench]"):
                recorded = _timed(url, raw, headers, calls)
            record.stop()  # writes the cassettes
            print(_line("record (proxy -> provider)", recorded, base))
        replay = TrafficSession("replay", normalizer)  # the provider is stopped
        url = f"{replay.start()}/fake/chat/completions"
        with replay.scenario("bench::s", cassette, "[script:bench]") as traffic:
            replayed = _timed(url, raw, headers, calls)
        replay.stop()
        assert not traffic.unmatched, traffic.unmatched
    print(_line("replay (proxy, no provider)", replayed, base))
    started = time.perf_counter()
    for _ in range(calls):
        normalizer.key("chat/completions", body)
    each = (time.perf_counter() - started) * 1000 / calls
    print(f"{'  of which normalise + key':<28} {each:7.2f} ms per call")


def _only_loopback() -> bool:
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return [line.split(":", 1)[0].strip() for line in lines] == ["lo"]


def examples(save: Path | None) -> None:
    print("== bundled examples, real gateway (bring-up), record vs replay")
    if not _only_loopback():
        script = f"ip link set lo up && exec '{sys.executable}' '{__file__}' --examples-only"
        if save is not None:
            script += f" --save-cassettes '{save.resolve()}'"
        proc = subprocess.run(["unshare", "--net", "sh", "-c", script], check=False)
        if proc.returncode != 0:
            print(
                "skipped: the gateway must run in a loopback-only network namespace and "
                "`unshare --net` is not available here (needs root)"
            )
        return
    from clawspec.gateway.bringup import find_openclaw

    launcher = find_openclaw()
    if launcher is None:
        print("skipped: OpenClaw is not installed (run scripts/install-openclaw.sh)")
        return
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder) / "examples"
        shutil.copytree(ROOT / "examples", work)
        scripts = load_scripts(work / "provider-scripts.json")
        with ScriptedProvider(scripts, port=18080):  # the port examples/openclaw.json names
            record_s = _examples_run(work, launcher, "record")
        if save is not None:
            shutil.rmtree(save, ignore_errors=True)
            shutil.copytree(work / ".clawspec" / "cassettes", save)
            print(f"  recording kept in {save}")
        for produced in ("reports", "memory", "brand"):
            shutil.rmtree(work / produced, ignore_errors=True)
        replay_s = _examples_run(work, launcher, "replay")  # the provider is stopped
    print(f"{'record (scripted provider)':<28} {record_s:7.1f} s")
    print(f"{'replay (no provider)':<28} {replay_s:7.1f} s  ({replay_s / record_s:.2f}x record)")


def _examples_run(work: Path, launcher: str, mode: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": launcher, "PYTHONPATH": str(ROOT)})
    argv = [sys.executable, "-m", "clawspec", "run", str(work), "--no-color"]
    argv += ["--model-traffic", mode, "--report-dir", str(work / "reports")]
    started = time.perf_counter()
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, env=env, cwd=work)
    took = time.perf_counter() - started
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    totals = report["totals"]
    print(
        f"  {mode}: exit {proc.returncode}, {totals['passed']} passed, {totals['failed']} failed, "
        f"{totals['errored']} errored in {took:.1f} s"
    )
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--skip-examples", action="store_true")
    parser.add_argument("--examples-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--save-cassettes", type=Path, help="keep the examples' recording here")
    args = parser.parse_args()
    if not args.examples_only:
        per_call(args.calls)
    if not args.skip_examples:
        examples(args.save_cassettes)


if __name__ == "__main__":
    main()
