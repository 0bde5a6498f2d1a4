"""Benchmark reading one run from OpenClaw's run record (clawspec/gateway/trajectory.py).

A store of 10,000 runs is synthesised from a run recorded on the real gateway (the write run of
tests/gateway/data/trajectory/2026.9.6: each copy gets its own session and run ids, and a row in
`session_nodes` as OpenClaw writes one), then one run is read 200 times (spread over the store):
by session key (a hook run), by run id with its session key (a chat run: OpenClaw's index), and
by run id alone (no index starts with it: a scan of the (session, run, seq) index finds its
session first); the first two also as a scenario reads its record, through a reader of its own
(connection opened and closed). Goal: under 5 ms per run. The same lookups in a store of 100
runs give the ratios that show whether a lookup grows with the store. Also prints `PRAGMA
index_list` and the query plans, to show which lookups the store's own indexes cover.

Run: .venv/bin/python benchmarks/bench_trajectory.py [--runs 10000]
Prints numbers only (no assertions).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import QUICK, repeat, row
from clawspec.gateway.trajectory import TrajectoryReader, TrajectoryStore, store_path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "gateway" / "data" / "trajectory" / "2026.9.6" / "default"
SAMPLE_PROMPT = "%[script:tj-write]%"
GOAL_MS = 5.0  # per run read
SMALL_STORE = 100  # a store of a few runs: what a lookup costs before the store has grown


def synthesise(state: Path, runs: int) -> list[tuple[str, str, str]]:
    """Copy the recorded store and add `runs` copies of its write run; returns (session key,
    session id, run id) of each copy."""
    target = store_path(state, "main")
    target.parent.mkdir(parents=True)
    shutil.copyfile(store_path(RECORDED, "main"), target)
    db = sqlite3.connect(target)
    (sid,) = db.execute(
        "SELECT session_id FROM trajectory_runtime_events WHERE event_json LIKE ? LIMIT 1",
        (SAMPLE_PROMPT,),
    ).fetchone()
    rows = db.execute(
        "SELECT seq, run_id, event_json, created_at FROM trajectory_runtime_events"
        " WHERE session_id = ? ORDER BY seq",
        (sid,),
    ).fetchall()
    (old_key, entry) = db.execute(
        "SELECT session_key, entry_json FROM session_nodes WHERE current_session_id = ? LIMIT 1",
        (sid,),
    ).fetchone()
    old_run = rows[0][1]
    made: list[tuple[str, str, str]] = []
    with db:
        for _ in range(runs):
            new_sid, new_run = str(uuid.uuid4()), str(uuid.uuid4())
            new_key = f"agent:main:cron:{uuid.uuid4()}"

            def swap(text: str, new_sid: str = new_sid, new_run: str = new_run) -> str:
                return text.replace(sid, new_sid).replace(old_run, new_run)

            db.executemany(
                "INSERT INTO trajectory_runtime_events (session_id, seq, run_id, event_json,"
                " created_at) VALUES (?, ?, ?, ?, ?)",
                [(new_sid, seq, new_run, swap(text), at) for seq, _, text, at in rows],
            )
            db.execute(
                "INSERT INTO session_nodes (session_key, current_session_id, entry_json,"
                " updated_at) VALUES (?, ?, ?, 0)",
                (new_key, new_sid, entry.replace(old_key, new_key).replace(sid, new_sid)),
            )
            made.append((new_key, new_sid, new_run))
    print(
        f"  store: {runs:,} synthesised runs of {len(rows)} events,"
        f" {target.stat().st_size / 1024 / 1024:.0f} MiB"
    )
    for table in ("trajectory_runtime_events", "session_nodes"):
        print(f"  PRAGMA index_list('{table}'):")
        for seq, name, unique, origin, partial in db.execute(f"PRAGMA index_list('{table}')"):
            cols = [c[2] for c in db.execute(f"PRAGMA index_info('{name}')")]
            print(
                f"    {seq} {name} unique={unique} origin={origin} partial={partial}"
                f" ({', '.join(cols)})"
            )
    for label, sql in (
        ("by session id", "SELECT seq FROM trajectory_runtime_events WHERE session_id = 'x'"),
        (
            "by session id + run id",
            "SELECT seq FROM trajectory_runtime_events WHERE session_id = 'x' AND run_id = 'y'",
        ),
        (
            "session of a session key",
            "SELECT current_session_id FROM session_nodes WHERE session_key = 'k'",
        ),
        (
            "session of a run id",
            "SELECT session_id FROM trajectory_runtime_events WHERE run_id = 'y' LIMIT 1",
        ),
    ):
        plan = "; ".join(r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}"))
        print(f"    plan {label}: {plan}")
    db.close()
    return made


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args()
    reads = 50 if QUICK else 200
    need = args.runs * 100 * 1024 * 2  # ~90 KB of events a run, twice for SQLite's own work
    free = shutil.disk_usage(tempfile.gettempdir()).free
    if free < need:
        print(f"  skipped: {free / 2**30:.1f} GiB free for a {need / 2**30:.1f} GiB store")
        return
    with tempfile.TemporaryDirectory() as folder:
        small = measure(Path(folder) / "small", SMALL_STORE, reads, with_scan=False)
        large = measure(Path(folder) / "large", args.runs, reads, with_scan=True)
        print(f"  ratios, {args.runs:,} stored runs against {SMALL_STORE:,} (1.0: no growth):")
        for name, figure in large.items():
            print(f"    {name:<52} {figure / small[name]:.2f}")
        load = Path("/proc/loadavg").read_text().split()[0]
        print(f"  (load average {load})")


def measure(state: Path, runs: int, reads: int, *, with_scan: bool) -> dict[str, float]:
    """Median seconds per read of each lookup in a store of `runs` runs."""
    state.mkdir(parents=True)
    made = synthesise(state, runs)
    picks = made[:: max(1, len(made) // reads)][:reads]
    store = TrajectoryStore.of(state, "main")

    def timed(read: object) -> float:
        started = time.perf_counter()
        for key, _, run in picks:
            read(key, run)  # type: ignore[operator]
        return (time.perf_counter() - started) / len(picks)

    def fresh_hook(key: str, run: str) -> None:
        with TrajectoryReader(state) as reader:
            reader.hook_run("main", key)

    def fresh_chat(key: str, run: str) -> None:
        with TrajectoryReader(state) as reader:
            reader.chat_run("main", run, key)

    cases = (
        ("hook run (by session key)", lambda key, run: store.hook_run(key)),
        ("chat run (run id + session key)", lambda key, run: store.run(run, session_key=key)),
        # What a scenario pays: its record is read once, through a reader of its own (the
        # connection opened, OpenClaw's schema read, the run read, the connection closed).
        ("hook run, a reader per scenario", fresh_hook),
        ("chat run, a reader per scenario", fresh_chat),
    )
    figures: dict[str, float] = {}
    for name, read in cases:
        figure = repeat(3 if QUICK else 5, lambda read=read: timed(read))
        figures[name] = figure.median
        ratio = f"x{figure.median * 1000 / GOAL_MS:.2f} of the goal"
        row(
            f"{name} @{runs:,}",
            f"{figure.median * 1000:.2f} ms",
            figure.spread("ms", 1000),
            f"< {GOAL_MS:g} ms",
            ratio,
        )
    if with_scan:
        scan_picks = picks[:10]
        started = time.perf_counter()
        for _, _, run in scan_picks:
            store.run(run)
        scan = (time.perf_counter() - started) / len(scan_picks)
        row("run id alone (scans the run index)", f"{scan * 1000:.2f} ms", "1 pass of 10", "none")
    store.close()
    return figures


if __name__ == "__main__":
    main()
