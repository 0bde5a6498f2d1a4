"""One agent's store (`TrajectoryStore`): a run's events, read while the gateway writes them,
built into a `Trajectory`.

Sessions: `session_nodes` maps a session key to its session id (its primary key), so a run is
found through the indexes when its session key is known; by run id alone its session is first
found by scanning the (session, run, seq) index (measured in benchmarks/bench_trajectory.py). A
conversation's turns are the runs of one session, in `seq` order. A hook run's session key is
the log's `gateway/hooks` line's (`agent:<id>:cron:<job id>:run:<session id>`); a chat run's
`run_id` is the response's `chatcmpl_…` id, its session `agent:<id>:<x-openclaw-session-key>`.

The store is the gateway's, written while we read: it is opened read-only (`mode=ro`, never
`immutable=1`, which would skip the locks and could read a page mid-write), one short read
transaction per lookup (a consistent snapshot across its queries, never held across a gateway
run), a short busy timeout retried briefly, and bounded reads (a cap on the events of a run, past
which only its final events are read, and on the bytes of one event).
"""

from __future__ import annotations

import json
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from clawspec.gateway.trajectory.calls import read_tool_calls, whole_cut
from clawspec.gateway.trajectory.cuts import bound_marker, text_cut
from clawspec.gateway.trajectory.errors import (
    BadEvent,
    RunNotFound,
    StoreCorrupt,
    StoreLocked,
    StoreMissing,
    TrajectoryError,
    UnknownSchema,
)
from clawspec.gateway.trajectory.events import (
    TRACE_SCHEMA,
    Artifacts,
    Envelope,
    Event,
    ModelCompleted,
    Outcome,
    Prompt,
    ToolResultData,
    UsageData,
    check_version,
    event_data,
)
from clawspec.gateway.trajectory.layout import SETTING_HINT, STORE_FILE, agent_of, store_path
from clawspec.gateway.trajectory.values import SentMessage, Trajectory, Usage

TABLE = "trajectory_runtime_events"
# Bounds of one read. An event over MAX_EVENT_BYTES is read without its bulk (the model
# snapshot, the prompts); if still over, only its envelope is kept and the run says so.
MAX_EVENT_BYTES = 1 << 20
MAX_RUN_EVENTS = 5_000
# Large parts of an event no field of a Trajectory needs.
_BULK = (
    "$.data.messagesSnapshot",
    "$.data.finalPromptText",
    "$.data.systemPrompt",
    "$.data.messages",
    "$.data.tools",
    "$.data.providerVisibleTools",
    "$.data.promptCache",
)
# The events a run ends with: read past the bound on a run's events (a run with more events
# still has its reply, usage, stop reason, messages sent and end).
_FINAL_KINDS = ("model.completed", "trace.artifacts", "session.ended")


T = TypeVar("T")
_Row = tuple[int, str | None, str, bool]  # seq, run id, event JSON, only the envelope read


@dataclass
class TrajectoryStore:
    """One agent's store, read-only: each lookup is one short read transaction.

    The connection stays open between lookups (opening one reads OpenClaw's whole schema, most
    of a lookup's cost), holding no lock or transaction in between; it is opened again when the
    file was replaced, and after any error. `busy_timeout_s` is SQLite's own wait for a lock; a
    read still refused is retried `retries` times `retry_s` apart (`sleep` injectable) before
    StoreLocked. Safe to share between threads; `close()` (or `with`) when done.
    """

    path: Path
    agent: str
    busy_timeout_s: float = 0.2
    retries: int = 5
    retry_s: float = 0.1
    max_event_bytes: int = MAX_EVENT_BYTES
    max_run_events: int = MAX_RUN_EVENTS
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    _db: sqlite3.Connection | None = field(default=None, init=False, repr=False, compare=False)
    _file: tuple[int, int] = field(default=(0, 0), init=False, repr=False, compare=False)
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @classmethod
    def of(cls, state_dir: Path, agent: str, **options: Any) -> TrajectoryStore:
        return cls(store_path(state_dir, agent), agent, **options)

    def close(self) -> None:
        with self._lock:
            self._close()

    def __enter__(self) -> TrajectoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # public lookups

    def session_id(self, session_key: str) -> str:
        """The session id OpenClaw keeps for `session_key` (its current one)."""
        return self._read(lambda db: self._session_id(db, session_key))

    def run(self, run_id: str, *, session_key: str | None = None) -> Trajectory:
        """The run `run_id` (a chat run: the response's id). With its session key the lookup
        goes through OpenClaw's indexes; without, its session is found by a scan first."""

        def read(db: sqlite3.Connection) -> Trajectory:
            if session_key is not None:
                sid = self._session_id(db, session_key)
            else:
                # No index starts with the run id: find its session by scanning the index of
                # (session, run, seq) alone (it holds no event text), then read through it.
                row = db.execute(
                    f"SELECT session_id FROM {TABLE} WHERE run_id = ? LIMIT 1", (run_id,)
                ).fetchone()
                sid = row[0] if row else ""
            where = "session_id = :sid AND run_id = :run"
            events, more = self._events(db, where, {"sid": sid, "run": run_id})
            if not events:
                raise RunNotFound(
                    f"{self.path}: no run {run_id!r} recorded"
                    + (f" in session {session_key!r}" if session_key else "")
                    + " (yet): is this the state folder of the gateway that ran it? "
                    + SETTING_HINT
                )
            if more:
                events += self._final_events(db, str(sid), run_id, events[-1][0])
            return self._build(events, more)

        return self._read(read)

    def session_runs(self, session_key: str) -> list[Trajectory]:
        """The runs of a session in the order they started (a conversation's turns)."""

        def read(db: sqlite3.Connection) -> list[Trajectory]:
            sid = self._session_id(db, session_key)
            events, more = self._events(db, "session_id = :sid", {"sid": sid})
            runs: dict[str, list[_Row]] = {}
            for row in events:
                if row[1]:  # events outside a run (none seen so far) belong to no turn
                    runs.setdefault(row[1], []).append(row)
            last = len(runs) - 1
            # The bound cut the session's last run read (the earlier ones are whole).
            built = []
            for i, (run_id, rows) in enumerate(runs.items()):
                capped = more and i == last
                tail = self._final_events(db, sid, run_id, events[-1][0]) if capped else []
                built.append(self._build(rows + tail, capped))
            return built

        return self._read(read)

    def hook_run(self, session_key: str) -> Trajectory:
        """The run a hook request started: the first run of its isolated session (the key of
        the log's `gateway/hooks` line, or `agent:<id>:cron:<job id>`)."""
        runs = self.session_runs(session_key)
        if not runs:
            raise RunNotFound(f"{self.path}: session {session_key!r} has no run recorded (yet)")
        return runs[0]

    # reading

    def _read(self, body: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return self._attempts(body)
            except (RunNotFound, UnknownSchema, BadEvent):
                raise  # the file reads well: keep the connection (a wait polls again)
            except BaseException:
                self._close()  # a damaged, replaced or busy file: start afresh next time
                raise

    def _attempts(self, body: Callable[[sqlite3.Connection], T]) -> T:
        try:
            status = self.path.stat()
        except OSError:
            status = None
        if status is not None and not stat.S_ISREG(status.st_mode):
            self._close()  # waiting cannot help: the gateway would write its store elsewhere
            raise StoreCorrupt(
                f"{self.path}: not a file where OpenClaw keeps agent {self.agent!r}'s store "
                f"(a folder?); " + SETTING_HINT
            )
        if status is None:
            self._close()
            raise StoreMissing(
                f"{self.path}: no OpenClaw agent store for agent {self.agent!r} there; "
                + SETTING_HINT
                + f", and check the agent id (the store is agents/<agent id>/agent/{STORE_FILE})"
            )
        if (status.st_dev, status.st_ino) != self._file:
            self._close()  # another file now (a new gateway state): not the one we had open
            self._file = (status.st_dev, status.st_ino)
        for attempt in range(self.retries + 1):
            try:
                return self._once(body)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise self._unreadable(exc) from None
                if attempt == self.retries:
                    raise StoreLocked(
                        f"{self.path}: the store stayed locked ({exc}); the gateway holds it "
                        "while it writes: read it after the run, or stop other programs that "
                        "write it"
                    ) from None
                self.sleep(self.retry_s)
            except sqlite3.DatabaseError as exc:
                raise self._unreadable(exc) from None
            except UnicodeDecodeError:
                # SQLite's own error message was not text (Python could not decode it): a
                # damaged file, whose damage reached the message.
                raise StoreCorrupt(
                    f"{self.path}: the store cannot be read (SQLite answered with an error "
                    "message that is not text); the file is damaged: run the scenario again on "
                    "a fresh gateway state folder"
                ) from None
        raise AssertionError("unreachable")  # the loop returns or raises

    def _once(self, body: Callable[[sqlite3.Connection], T]) -> T:
        if self._db is None:
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._db = sqlite3.connect(
                uri,
                uri=True,
                timeout=self.busy_timeout_s,
                isolation_level=None,  # transactions only where we open them
                check_same_thread=False,  # shared under self._lock
            )
        db = self._db
        # One read transaction: the lookup's queries see one snapshot; it always ends here.
        db.execute("BEGIN")
        try:
            return body(db)
        finally:
            if db.in_transaction:
                db.execute("ROLLBACK")

    def _unreadable(self, exc: sqlite3.DatabaseError) -> TrajectoryError:
        text = str(exc)
        if "no such table" in text or "no such column" in text:
            return StoreCorrupt(
                f"{self.path}: not an OpenClaw agent store this ClawSpec can read ({text}); "
                "check that the path is a gateway's state folder"
            )
        return StoreCorrupt(
            f"{self.path}: the store cannot be read ({text}); the file is damaged or not a "
            "SQLite database: run the scenario again on a fresh gateway state folder"
        )

    def _session_id(self, db: sqlite3.Connection, session_key: str) -> str:
        """The session's id: `session_nodes` names a key's current session; a hook run's key
        as the log gives it, `agent:<id>:cron:<job id>:run:<session id>`, is there only now and
        then, and names its session itself, which `session_windows` confirms (every lookup here
        goes through a primary key)."""
        row = db.execute(
            "SELECT current_session_id FROM session_nodes WHERE session_key = ?", (session_key,)
        ).fetchone()
        if row is None and agent_of(session_key) is None:
            # A chat request's x-openclaw-session-key K is the agent's session agent:<id>:K.
            row = db.execute(
                "SELECT current_session_id FROM session_nodes WHERE session_key = ?",
                (f"agent:{self.agent}:{session_key}",),
            ).fetchone()
        head, run_marker, session_id = session_key.rpartition(":run:")
        if row is None and run_marker and head and session_id:
            row = db.execute(
                "SELECT session_id FROM session_windows WHERE session_id = ? AND session_key = ?",
                (session_id, head),
            ).fetchone()
        if row is None:
            raise RunNotFound(
                f"{self.path}: no session {session_key!r} recorded (yet) for agent "
                f"{self.agent!r}; {SETTING_HINT}"
            )
        return str(row[0])

    def _events(
        self, db: sqlite3.Connection, where: str, params: dict[str, str]
    ) -> tuple[list[_Row], bool]:
        """(seq, run id, event JSON, cut) of the matching events in order, within the bounds, and
        whether there were more events than the bound.

        An event over the byte cap is read without its bulk (json_remove, in SQLite); one still
        over it is replaced by its envelope alone (cut = True)."""
        rows = self._select(db, where, {"limit": self.max_run_events + 1, **params})
        return self._bounded(db, rows[: self.max_run_events]), len(rows) > self.max_run_events

    def _final_events(
        self, db: sqlite3.Connection, session_id: str, run_id: str | None, after: int
    ) -> list[_Row]:
        """The run's final events (_FINAL_KINDS) after `after`: a run with more events than
        the bound still has its reply, usage, stop reason, messages sent and end read (each
        written once per run: a few rows; found through OpenClaw's (session, run, seq) index)."""
        kinds = ", ".join(f"'{kind}'" for kind in _FINAL_KINDS)
        where = (
            "session_id = :sid AND run_id IS :run AND seq > :after AND CASE WHEN"
            f" json_valid(event_json) THEN json_extract(event_json, '$.type') END IN ({kinds})"
        )
        params = {"sid": session_id, "run": run_id, "after": after, "limit": 4 * len(_FINAL_KINDS)}
        return self._bounded(db, self._select(db, where, params))

    def _select(
        self, db: sqlite3.Connection, where: str, params: Mapping[str, object]
    ) -> list[tuple[Any, ...]]:
        bulk = ", ".join(f"'{p}'" for p in _BULK)
        return db.execute(
            f"SELECT session_id, seq, run_id, length(CAST(event_json AS BLOB)) AS n,"
            f" CASE WHEN length(CAST(event_json AS BLOB)) <= :cap THEN event_json"
            f" WHEN json_valid(event_json) THEN json_remove(event_json, {bulk}) END"
            f" FROM {TABLE} WHERE {where} ORDER BY session_id, seq LIMIT :limit",
            {"cap": self.max_event_bytes, **params},
        ).fetchall()

    def _bounded(self, db: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> list[_Row]:
        out: list[_Row] = []
        for session_id, seq, run_id, size, text in rows:
            if text is not None and len(text) <= self.max_event_bytes:
                out.append((int(seq), run_id, str(text), False))
                continue
            envelope = db.execute(
                "SELECT CASE WHEN json_valid(event_json) THEN json_object("
                "'traceSchema', json_extract(event_json, '$.traceSchema'),"
                "'schemaVersion', json_extract(event_json, '$.schemaVersion'),"
                "'type', json_extract(event_json, '$.type'),"
                "'runId', json_extract(event_json, '$.runId'),"
                "'sessionId', json_extract(event_json, '$.sessionId'),"
                "'sessionKey', json_extract(event_json, '$.sessionKey'),"
                "'data', json_object("
                "'toolCallId', json_extract(event_json, '$.data.toolCallId'),"
                "'name', json_extract(event_json, '$.data.name'))) END"
                f" FROM {TABLE} WHERE session_id = ? AND seq = ?",
                (session_id, seq),
            ).fetchone()
            if envelope is None or envelope[0] is None:
                raise StoreCorrupt(
                    f"{self.path}: event {seq} of session {session_id} is {size} bytes of "
                    "damaged JSON; run the scenario again on a fresh gateway state folder"
                )
            out.append((int(seq), run_id, str(envelope[0]), True))
        return out

    # building a Trajectory

    def _parse(self, rows: Sequence[_Row]) -> list[Event]:
        events: list[Event] = []
        for seq, _, text, cut in rows:
            where = f"{self.path} (event {seq})"
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise StoreCorrupt(
                    f"{where}: the event is not JSON ({exc.msg} at {exc.pos}); run the scenario "
                    "again on a fresh gateway state folder"
                ) from None
            if not isinstance(raw, dict):
                raise StoreCorrupt(f"{where}: the event is not a JSON object")
            check_version(raw, where)
            try:
                envelope = Envelope.model_validate(raw)
            except ValidationError as exc:
                fields = ", ".join(
                    ".".join(str(p) for p in err["loc"])
                    for err in exc.errors(include_input=False, include_url=False)
                )
                raise BadEvent(
                    f"{where}: the event's {fields} is not as {TRACE_SCHEMA} version 1 writes it;"
                    " the store may come from an OpenClaw release ClawSpec does not support yet"
                ) from None
            events.append(Event(seq, envelope, cut))
        return events

    def _build(self, rows: Sequence[_Row], more: bool) -> Trajectory:
        events = self._parse(rows)
        first = events[0].envelope
        where = f"{self.path} run {first.runId}"
        calls: list[Event] = []
        results: dict[str, ToolResultData] = {}
        completed: ModelCompleted | None = None
        artifacts: Artifacts | None = None
        ended = False
        prompt: Any = None
        notes = [f"more than {self.max_run_events} events: read the first ones"] if more else []
        for event in events:
            kind = event.envelope.type
            whole = whole_cut(event)
            if whole is not None and kind != "tool.call":
                # Cut whole by OpenClaw (over its event size limit): what it held is not known;
                # a tool.result so cut no longer says which call it answers.
                notes.append(f"{kind} (event {event.seq}) {whole}")
                if kind == "session.ended":
                    ended = True
                continue
            if event.cut and kind not in ("tool.call", "tool.result"):
                notes.append(f"{kind} (event {event.seq}) over {self.max_event_bytes} bytes")
                if kind == "session.ended":
                    ended = True
                continue
            if kind == "tool.call":
                calls.append(event)
            elif kind == "tool.result":
                data = event_data(event, ToolResultData, where)
                results[data.toolCallId] = data
            elif kind == "model.completed":
                completed = event_data(event, ModelCompleted, where)
            elif kind == "trace.artifacts":
                artifacts = event_data(event, Artifacts, where)
            elif kind == "prompt.submitted":
                prompt = event_data(event, Prompt, where).prompt
            elif kind == "session.ended":
                ended = True
        texts = tuple(completed.assistantTexts) if completed else ()
        last = texts[-1] if texts else None
        sent_texts = tuple(artifacts.messagingToolSentTexts) if artifacts else ()
        flags = [o for o in (completed, artifacts) if o is not None]
        return Trajectory(
            store=self.path,
            agent=self.agent,
            run_id=first.runId or "",
            session_id=first.sessionId or "",
            session_key=first.sessionKey,
            provider=first.provider,
            model=first.modelId,
            prompt=prompt if isinstance(prompt, str) else None,
            reply=last if isinstance(last, str) else None,
            assistant_texts=tuple(t if isinstance(t, str) else None for t in texts),
            usage=_usage(completed.usage) if completed and completed.usage else None,
            stop_reason=(completed.stopReason if completed else None)
            or (artifacts.stopReason if artifacts else None),
            final_status=artifacts.finalStatus if artifacts else None,
            timed_out=any(_timed_out(o) for o in flags),
            aborted=any(o.aborted or o.externalAbort for o in flags),
            tool_calls=tuple(read_tool_calls(calls, results, where, self.max_event_bytes)),
            sent_texts=tuple(t for t in sent_texts if isinstance(t, str)),
            sent=_sent_messages(artifacts.messagingToolSentTargets, sent_texts)
            if artifacts
            else (),
            complete=ended and not more,
            cut=tuple(notes),
            capped=more,
            ended=ended,
            reply_cut=None if isinstance(last, str) or last is None else text_cut(last),
            prompt_cut=None if isinstance(prompt, str) or prompt is None else text_cut(prompt),
        )


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _timed_out(o: Outcome) -> bool:
    return (
        o.timedOut
        or o.idleTimedOut
        or o.timedOutDuringCompaction
        or o.timedOutDuringToolExecution
        or o.timedOutByRunBudget
    )


def _usage(u: UsageData) -> Usage:
    total = u.total if u.total is not None else u.input + u.output + u.cacheRead + u.cacheWrite
    return Usage(
        input=u.input,
        output=u.output,
        cache_read=u.cacheRead,
        cache_write=u.cacheWrite,
        total=total,
        cost=u.cost.total if u.cost is not None else None,
    )


def _sent(target: Mapping[str, Any]) -> SentMessage:
    def text(key: str) -> str | None:
        value = target.get(key)
        return value if isinstance(value, str) else None

    body = target.get("text")
    cut = text_cut(body) if bound_marker(body) is not None else None
    return SentMessage(text("tool"), text("provider"), text("to"), text("text"), cut)


def _sent_messages(
    targets: Sequence[Mapping[str, Any]], texts: Sequence[Any]
) -> tuple[SentMessage, ...]:
    """The messages sent: each target, then each text OpenClaw kept only as its marker beyond
    those of the targets (a text sent without its target, whose text is not known either)."""
    sent = [_sent(target) for target in targets]
    cut = [text_cut(t) for t in texts if not isinstance(t, str)]
    targeted = sum(1 for message in sent if message.text_cut is not None)
    sent += [SentMessage(None, None, None, None, c) for c in cut[targeted:]]
    return tuple(sent)
