"""Benchmark reading one run from OpenClaw's run record (clawspec/gateway/trajectory/).

A store of 10,000 runs is synthesised from a run recorded on the real gateway (the write run of
tests/gateway/data/trajectory/2026.9.6): each copy gets its own job, session and run ids and the
rows OpenClaw writes for a hook run: `session_nodes` maps the job's key `agent:main:cron:<job id>`
to the session, `session_windows` holds the session with that key. A hook run is looked up by
the key the log's `gateway/hooks` line names, `agent:main:cron:<job id>:run:<session id>`, which
`session_nodes` holds only now and then (the recordings' README): no copy has it there, so every
such lookup takes the `session_windows` fallback, as it usually does on the gateway.

One run is read 200 times (spread over the store), each way:
- hook run by the log's key, and by the job's key (found in `session_nodes`);
- chat run by run id with its session key (OpenClaw's (session, run, seq) index);
- the hook run as ClawSpec reads a hook scenario's record (clawspec/evidence/record.py): the
  log's key, a reader of its own (connection opened, OpenClaw's schema read, the run read, the
  connection closed), `TrajectoryReader.hook_run` inside `wait_for`; and the job's key and the
  chat run through a reader of their own;
- by run id alone (ClawSpec never makes it): no index starts with the run id, so its session is
  first found by scanning the (session, run, seq) index, which grows with the store: up to the
  run's place in it (sessions sort by their random ids), the whole of it for a run id the
  store does not hold.
Goal: under 5 ms per run. The same lookups in a store of 100 runs give the ratios that show
whether a lookup grows with the store. Before the figures: every statement each lookup path
runs, recorded with its own parameters from the store's connection, with its `EXPLAIN QUERY
PLAN` (a run over the read bounds included: its final events and event envelopes), and `PRAGMA
index_list` of every table those statements touch. A sub-agent is read by the same lookups in
its own agent's store.

Run: .venv/bin/python benchmarks/bench_trajectory.py [--runs 10000]
Prints numbers only (no assertions).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import QUICK, repeat, row
from clawspec.gateway.trajectory.errors import RunNotFound
from clawspec.gateway.trajectory.layout import agent_of, store_path
from clawspec.gateway.trajectory.reader import TrajectoryReader, wait_for
from clawspec.gateway.trajectory.store import TrajectoryStore

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "gateway" / "data" / "trajectory" / "2026.9.6" / "default"
SAMPLE_PROMPT = "%[script:tj-write]%"
GOAL_MS = 5.0  # per run read
SMALL_STORE = 100  # a store of a few runs: what a lookup costs before the store has grown
SCANS = 20  # run-id-alone reads per repeat (each one scans the run index)


class Made(NamedTuple):
    """One synthesised run."""

    job_key: str  # `agent:main:cron:<job id>`, in `session_nodes`
    log_key: str  # the log's `…:run:<session id>`, not in `session_nodes`
    session_id: str
    run_id: str


def synthesise(state: Path, runs: int) -> list[Made]:
    """Copy the recorded store and add `runs` copies of its write run, each with the
    `session_nodes` and `session_windows` rows OpenClaw writes for a hook run."""
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
    columns = [c[1] for c in db.execute("PRAGMA table_info('session_windows')")]
    window = db.execute("SELECT * FROM session_windows WHERE session_id = ?", (sid,)).fetchone()
    insert_window = (
        f"INSERT INTO session_windows ({', '.join(columns)})"
        f" VALUES ({', '.join('?' for _ in columns)})"
    )
    old_run = rows[0][1]
    made: list[Made] = []
    with db:
        for _ in range(runs):
            new_sid, new_run = str(uuid.uuid4()), str(uuid.uuid4())
            new_key = f"agent:main:cron:{uuid.uuid4()}"

            def swap(
                text: str, sid2: str = new_sid, run2: str = new_run, key2: str = new_key
            ) -> str:
                return text.replace(old_key, key2).replace(sid, sid2).replace(old_run, run2)

            db.executemany(
                "INSERT INTO trajectory_runtime_events (session_id, seq, run_id, event_json,"
                " created_at) VALUES (?, ?, ?, ?, ?)",
                [(new_sid, seq, new_run, swap(text), at) for seq, _, text, at in rows],
            )
            db.execute(
                "INSERT INTO session_nodes (session_key, current_session_id, entry_json,"
                " updated_at) VALUES (?, ?, ?, 0)",
                (new_key, new_sid, swap(entry)),
            )
            fresh = {"session_id": new_sid, "session_key": new_key}
            db.execute(
                insert_window, [fresh.get(c, v) for c, v in zip(columns, window, strict=True)]
            )
            made.append(Made(new_key, f"{new_key}:run:{new_sid}", new_sid, new_run))
    db.close()
    print(
        f"  store: {runs:,} synthesised runs of {len(rows)} events,"
        f" {target.stat().st_size / 1024 / 1024:.0f} MiB"
    )
    return made


class Recorder:
    """A store's connection that records each statement it runs, with its parameters."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.seen: list[tuple[str, Any]] = []

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        if sql not in ("BEGIN", "ROLLBACK"):
            self.seen.append((sql, params))
        return self.db.execute(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def show_plans(state: Path, run: Made) -> None:
    """Each lookup path once: the query plan of every statement it ran, then the indexes of
    every table they touched."""
    paths: list[tuple[str, dict[str, int], Callable[[TrajectoryStore], object]]] = [
        ("hook run, log key", {}, lambda s: s.hook_run(run.log_key)),
        ("hook run, job key", {}, lambda s: s.hook_run(run.job_key)),
        (
            "chat run, run id + session key",
            {},
            lambda s: s.run(run.run_id, session_key=run.job_key),
        ),
        # A chat session key without `agent:<id>:` (`x-openclaw-session-key`): a second probe.
        (
            "chat run, session key without `agent:main:`",
            {},
            lambda s: s.run(run.run_id, session_key=run.job_key.removeprefix("agent:main:")),
        ),
        ("run id alone", {}, lambda s: s.run(run.run_id)),
        # Past the bounds: the run's final events read apart, an oversized event's envelope.
        (
            "hook run over the read bounds",
            {"max_run_events": 3, "max_event_bytes": 512},
            lambda s: s.hook_run(run.log_key),
        ),
    ]
    tables: set[str] = set()
    print("  query plans (each statement a lookup runs, with its own parameters):")
    for label, options, lookup in paths:
        store = TrajectoryStore.of(state, "main", **options)
        store.session_id(run.job_key)  # opens the connection
        recorder = Recorder(store._db)  # type: ignore[arg-type]
        store._db = recorder  # type: ignore[assignment]
        lookup(store)
        print(f"    {label}:")
        counts: dict[str, int] = {}
        for sql, _ in recorder.seen:
            counts[sql] = counts.get(sql, 0) + 1
        shown: set[str] = set()
        for sql, params in recorder.seen:
            if sql in shown:
                continue
            shown.add(sql)
            tables.update(re.findall(r"\bFROM\s+(\w+)", sql))
            plan = "; ".join(r[3] for r in recorder.db.execute(f"EXPLAIN QUERY PLAN {sql}", params))
            times = f" (x{counts[sql]})" if counts[sql] > 1 else ""
            print(f"      {plan}{times}")
        store.close()
    show_indexes(store_path(state, "main"), sorted(tables))


def show_indexes(path: Path, tables: list[str]) -> None:
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    for table in tables:
        print(f"  PRAGMA index_list('{table}'):")
        for seq, name, unique, origin, partial in db.execute(f"PRAGMA index_list('{table}')"):
            cols = [c[2] for c in db.execute(f"PRAGMA index_info('{name}')")]
            (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
            where = f" WHERE {sql.rpartition(' WHERE ')[2]}" if partial and sql else ""
            print(
                f"    {seq} {name} unique={unique} origin={origin} partial={partial}"
                f" ({', '.join(cols)}){where}"
            )
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    args, _ = parser.parse_known_args()  # --quick is the harness's
    reads = 50 if QUICK else 200
    need = args.runs * 100 * 1024 * 2  # ~90 KB of events a run, twice for SQLite's own work
    free = shutil.disk_usage(tempfile.gettempdir()).free
    if free < need:
        print(f"  skipped: {free / 2**30:.1f} GiB free for a {need / 2**30:.1f} GiB store")
        return
    with tempfile.TemporaryDirectory() as folder:
        small = measure(Path(folder) / "small", SMALL_STORE, reads, plans=False)
        large = measure(Path(folder) / "large", args.runs, reads, plans=True)
        print(f"  ratios, {args.runs:,} stored runs against {SMALL_STORE:,} (1.0: no growth):")
        for name, figure in large.items():
            print(f"    {name:<52} {figure / small[name]:.2f}")
        load = Path("/proc/loadavg").read_text().split()[0]
        print(f"  (load average {load})")


def measure(state: Path, runs: int, reads: int, *, plans: bool) -> dict[str, float]:
    """Median seconds per read of each lookup in a store of `runs` runs."""
    state.mkdir(parents=True)
    made = synthesise(state, runs)
    picks = made[:: max(1, len(made) // reads)][:reads]
    if plans:
        show_plans(state, picks[len(picks) // 2])
    store = TrajectoryStore.of(state, "main")

    def timed(read: Callable[[Made], object], picked: list[Made]) -> float:
        started = time.perf_counter()
        for run in picked:
            read(run)
        return (time.perf_counter() - started) / len(picked)

    def as_clawspec(run: Made) -> None:
        # clawspec/evidence/record.py (_lookup): a hook run, by the key of the log's
        # `gateway/hooks` line, through a reader of the scenario's own, waited for until settled.
        key = run.log_key
        with TrajectoryReader(state) as reader:
            agent = agent_of(key) or "main"
            wait_for(lambda: reader.hook_run(agent, key), timeout_s=30, poll_s=0.1)

    def own_hook(run: Made) -> None:
        with TrajectoryReader(state) as reader:
            reader.hook_run("main", run.job_key)

    def own_chat(run: Made) -> None:
        with TrajectoryReader(state) as reader:
            reader.chat_run("main", run.run_id, run.job_key)

    def absent(run: Made) -> None:
        with contextlib.suppress(RunNotFound):
            store.run(str(uuid.uuid4()))

    cases: tuple[tuple[str, Callable[[Made], object], list[Made]], ...] = (
        ("hook run, log key (session_windows)", lambda r: store.hook_run(r.log_key), picks),
        ("hook run, job key (session_nodes)", lambda r: store.hook_run(r.job_key), picks),
        (
            "chat run (run id + session key)",
            lambda r: store.run(r.run_id, session_key=r.job_key),
            picks,
        ),
        # What a scenario pays: its record is read once, through a reader of its own (the
        # connection opened, OpenClaw's schema read, the run read, the connection closed).
        ("hook run as ClawSpec reads it", as_clawspec, picks),
        ("hook run, job key, own reader", own_hook, picks),
        ("chat run, own reader", own_chat, picks),
        ("run id alone (scans the run index)", lambda r: store.run(r.run_id), picks[:SCANS]),
        # The scan's whole length: a run id the store does not hold (yet).
        ("run id alone, not recorded", absent, picks[:SCANS]),
    )
    figures: dict[str, float] = {}
    for name, read, picked in cases:
        timed(read, picked[:5])  # warm-up: the first pass of a lookup is not what it costs
        figure = repeat(3 if QUICK else 5, lambda read=read, picked=picked: timed(read, picked))
        figures[name] = figure.median
        row(
            f"{name} @{runs:,}",
            f"{figure.median * 1000:.2f} ms",
            figure.spread("ms", 1000),
            f"< {GOAL_MS:g} ms",
            f"x{figure.median * 1000 / GOAL_MS:.2f} of the goal",
        )
    store.close()
    return figures


if __name__ == "__main__":
    main()
