"""ClawSpec's own overhead per scenario (SPEC §8: negligible next to the agent's time).

Runs N scenarios (each: one precondition, one invocation, four file assertions) through the real
runner against a local hooks server that completes at once, and compares the time with the bare
HTTP round trips to the same server. Prints numbers and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_runner.py [--scenarios 300] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clawspec import api
from tests.support.hooks_api import HooksServer

TOKEN = "bench-token-0123456789"
SCENARIO = """  - name: s{i}
    given: [{{type: file_present, path: SKILL.md}}]
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then:
      - {{type: artifact_exists, path: out/s{i}.md}}
      - {{type: artifact_contains, path: out/s{i}.md, sections: [hook, body, cta], fields: [title]}}
      - {{type: artifact_absent_words, path: out/s{i}.md, words: [guaranteed, limited time]}}
      - {{type: state_file, path: state.yaml, expected_fields: {{phase: done}}}}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "SKILL.md").write_text("# skill\n")
        (root / "state.yaml").write_text("phase: done\n")
        (root / "clawspec.yaml").write_text("report_dir: reports\n")
        body = "".join(SCENARIO.format(i=i) for i in range(args.scenarios))
        (root / "bench.clawspec.yaml").write_text(
            'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n' + body
        )
        os.chdir(root)
        with HooksServer(TOKEN, root) as server:
            environ = {"CLAWSPEC_HOOKS_TOKEN": TOKEN, "CLAWSPEC_GATEWAY_BASE_URL": server.base_url}
            session = requests.Session()
            started = time.perf_counter()
            for i in range(args.scenarios):
                session.post(
                    f"{server.base_url}/hooks/agent",
                    json={"message": f"[write:raw/{i}.md]"},
                    headers={"Authorization": f"Bearer {TOKEN}"},
                    timeout=10,
                )
            bare_s = time.perf_counter() - started

            load_started = time.perf_counter()
            loaded = api.load(["."], environ=environ)
            load_s = time.perf_counter() - load_started

            started = time.perf_counter()
            result = api.run(["."], environ=environ, flags={"concurrency": args.concurrency})
            run_s = time.perf_counter() - started
            tracemalloc.start()  # a separate pass: tracing slows Python down several times
            api.run(["."], environ=environ, flags={"concurrency": args.concurrency})
            peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
    n = args.scenarios
    assertions = sum(
        len(s.given) + len(s.then) for c in loaded.contracts for s in c.contract.scenarios
    )
    print(
        f"scenarios: {n}, assertions: {assertions}, concurrency: {args.concurrency}, "
        f"exit code: {result.exit_code}, passed: {result.report.totals.passed}"
    )
    print(f"load + validate:     {load_s * 1000:8.1f} ms  ({load_s / n * 1000:.2f} ms/scenario)")
    print(f"bare HTTP (serial):  {bare_s * 1000:8.1f} ms  ({bare_s / n * 1000:.2f} ms/request)")
    print(
        f"clawspec run:        {run_s * 1000:8.1f} ms  ({run_s / n * 1000:.2f} ms/scenario; "
        "load, run and JSON report included)"
    )
    print(f"ratio run / bare HTTP: {run_s / bare_s:.2f}x; peak Python memory {peak_mb:.1f} MB")


if __name__ == "__main__":
    main()
