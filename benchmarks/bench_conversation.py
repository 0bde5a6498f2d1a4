"""ClawSpec's cost per conversation turn next to the agents' own time.

`clawspec run` (the CLI, in its own process: start-up, load, run, JSON report; the fake also
answers the `GET /v1/models` preflight of target mode) in target mode over generated suites of
conversations (3 turns each, every turn with a `reply_contains`, the scenario with a run-scoped
`log_entry` on the whole conversation) against the fake gateway (benchmarks/gateway_fake.py:
`POST /v1/chat/completions` answering after 200 ms with a completion that echoes the message,
real-looking chat-run log lines), side by side with the bare loop: the same 3 chat requests per
conversation, in order within a conversation, conversations at the same concurrency, nothing
else. Prints medians, spreads, goals and the ratio run / bare loop, with start-up and tail
apart, and the ratio of the runs alone (first request to last answer). Asserts nothing.

    .venv/bin/python benchmarks/bench_conversation.py [--quick] [--repeats N] [--big 800]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gateway_fake import GATEWAY_TOKEN
from benchmarks.harness import (
    CLAWSPEC,
    PYTHON,
    QUICK,
    ROOT,
    ChildRun,
    Figure,
    clawspec_env,
    fake_gateway,
    fresh,
    report_of,
    row,
    run_child,
    write_suite,
)

TURNS = 3
# One conversation: three turns, each judged on its own reply (the fake echoes the message),
# and a run-scoped log assertion on the whole conversation (its turns' runs in the gateway log).
# Not `token_budget`: in target mode without the plugin's output or `openclaw_state_dir` it has
# no usage records to judge (the chat responses' `usage` is not one of its sources) and skips.
CONVERSATION = """  - name: c{i}
    turns:
      - say: "My name is Zed{i}."
        then: [{{type: reply_contains, text: "zed{i}"}}]
      - say: "I like green tea."
        then: [{{type: reply_contains, text: "green tea"}}]
      - say: "What is my name?"
        then: [{{type: reply_contains, text: "my name"}}]
    then:
      - {{type: log_entry, path: {log}, pattern: "ended with stopReason=stop",
         run_id: "{{{{run_id}}}}"}}
"""
SAYS = ("My name is Zed{i}.", "I like green tea.", "What is my name?")

BARE_LOOP = """
import sys, requests
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, {root!r})
from benchmarks.gateway_fake import chat_body
url, n, c, token = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
says = {says!r}
http = requests.Session()
http.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=c))
def one(i):
    headers = {{"Authorization": "Bearer " + token,
               "x-openclaw-session-key": f"agent:main:clawspec:bare{{i}}"}}
    for say in says:
        answer = http.post(url + "/v1/chat/completions", json=chat_body(say.format(i=i)),
                           headers=headers, timeout=60)
        assert answer.json()["choices"][0]["message"]["content"]
with ThreadPoolExecutor(c) as pool:
    list(pool.map(one, range(n)))
"""


def bare_loop(workspace: Path, conversations: int, concurrency: int, latency_s: float) -> ChildRun:
    """The limit: the same chat requests (in order within a conversation), conversations at
    the same concurrency, nothing else (its own process, `import requests` included)."""
    with fake_gateway(workspace, latency_s) as url:
        code = BARE_LOOP.format(root=str(ROOT), says=SAYS)
        argv = [PYTHON, "-c", code, url, str(conversations), str(concurrency), GATEWAY_TOKEN]
        return run_child(argv, workspace)


def clawspec_run(workspace: Path, concurrency: int, latency_s: float) -> ChildRun:
    """`clawspec run` in target mode over the conversations in `workspace`."""
    with fake_gateway(workspace, latency_s) as url:
        env = clawspec_env(url)
        env["CLAWSPEC_GATEWAY_AUTH_TOKEN"] = GATEWAY_TOKEN
        env.pop("OPENCLAW_GATEWAY_TOKEN", None)
        env.pop("CLAWSPEC_OPENCLAW_STATE_DIR", None)
        env.pop("OPENCLAW_STATE_DIR", None)
        argv = [*CLAWSPEC, "run", "--concurrency", str(concurrency)]
        return run_child(argv, workspace, env)


def side_by_side(
    conversations: int, concurrency: int, latency_s: float, repeats: int
) -> tuple[list[ChildRun], list[ChildRun], list[int]]:
    """Alternate bare loop and clawspec run `repeats` times; fresh workspace and log each time.
    Returns both processes of each repeat and the last report's turn durations (ms)."""
    bare: list[ChildRun] = []
    run: list[ChildRun] = []
    turn_ms: list[int] = []
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(repeats):
            loop = bare_loop(fresh(Path(folder), f"bare{attempt}"), conversations, concurrency,
                             latency_s)  # fmt: skip
            workspace = fresh(Path(folder), f"run{attempt}")
            write_suite(workspace, conversations, targets=10, template=CONVERSATION)
            result = clawspec_run(workspace, concurrency, latency_s)
            report = report_of(workspace)
            turns = [t for s in report["scenarios"] for t in s.get("turns") or []]
            if (
                result.returncode != 0
                or loop.returncode != 0
                or len(turns) != conversations * TURNS
            ):
                print(result.stdout[-3000:], loop.stdout[-2000:])
                raise SystemExit(f"run failed: totals {report.get('totals')}")
            bare.append(loop)
            run.append(result)
            turn_ms = [t["duration_ms"] for t in turns]
    return bare, run, turn_ms


def ratio_case(conversations: int, concurrency: int, latency_s: float, repeats: int) -> None:
    bare_runs, runs, turn_ms = side_by_side(conversations, concurrency, latency_s, repeats)
    bare = Figure([r.seconds for r in bare_runs])
    run = Figure([r.seconds for r in runs])
    ratios = Figure([r.seconds / b.seconds for b, r in zip(bare_runs, runs, strict=True)])
    requests = conversations * TURNS
    label = (
        f"{conversations} conversations x {TURNS} turns, concurrency {concurrency}, "
        f"{latency_s * 1000:.0f} ms/chat run"
    )
    print(f"{label}: {repeats} repeat(s), bare loop and clawspec run alternating")
    row("bare chat loop (the limit)", f"{bare.median:.2f} s", bare.spread("s"), "-")
    row("clawspec run", f"{run.median:.2f} s", run.spread("s"), "-")
    row("ratio run / bare loop", f"{ratios.median:.3f}", ratios.spread("", digits=3), "<= 1.05")
    for name, part in (("start-up (to the first chat request)", "start_s"),
                       ("tail (last answer to exit)", "tail_s")):  # fmt: skip
        ours = Figure([getattr(r, part) for r in runs])
        limit = Figure([getattr(r, part) for r in bare_runs])
        row(f"  {name}", f"{ours.median:.2f} s", ours.spread("s"), "-",
            f"(bare loop {limit.median:.2f} s)")  # fmt: skip
    # The runs alone (first request to last answer): start-up and tail are ClawSpec's fixed
    # cost, which a short suite cannot spread.
    runs_only = Figure(
        [
            (r.seconds - r.start_s - r.tail_s) / (b.seconds - b.start_s - b.tail_s)
            for b, r in zip(bare_runs, runs, strict=True)
        ]
    )
    row("  ratio first request to last answer", f"{runs_only.median:.3f}",
        runs_only.spread("", digits=3), "-")  # fmt: skip
    # Between the runs: what each turn adds beyond the bare loop's, over all its turns.
    middle = Figure(
        [
            ((r.seconds - r.start_s - r.tail_s) - (b.seconds - b.start_s - b.tail_s))
            / requests
            * concurrency
            * 1000
            for b, r in zip(bare_runs, runs, strict=True)
        ]
    )
    row("  per turn between runs (x concurrency)", f"{middle.median:.1f} ms",
        middle.spread("ms", digits=1), "-")  # fmt: skip
    cpu = Figure([r.cpu_s / requests * 1000 for r in runs])
    limit_cpu = Figure([b.cpu_s / requests * 1000 for b in bare_runs])
    row("  CPU per turn (whole process)", f"{cpu.median:.1f} ms", cpu.spread("ms", digits=1), "-",
        f"(bare loop {limit_cpu.median:.1f} ms)")  # fmt: skip
    over = sorted(ms - latency_s * 1000 for ms in turn_ms)
    row("  turn duration - latency, median / p90", f"{over[len(over) // 2]:.0f}/"
        f"{over[len(over) * 9 // 10]:.0f} ms", "last repeat", "-")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one repeat, no bigger case")
    parser.add_argument("--repeats", type=int, default=1 if QUICK else 3)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--big", type=int, default=0 if QUICK else 200,
                        help="conversations at concurrency 16 (0: none)")  # fmt: skip
    args = parser.parse_args()
    ratio_case(args.conversations, 4, 0.2, args.repeats)
    if args.big:
        ratio_case(args.big, 16, 0.2, args.repeats)


if __name__ == "__main__":
    main()
