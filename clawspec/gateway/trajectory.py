"""OpenClaw's run record: the trajectory of each run in the agent's SQLite store, read-only.

OpenClaw (2026.9.5 and 2026.9.6 alike) records every run in its agent's store,
`<state dir>/agents/<agent id>/agent/openclaw-agent.sqlite`, table `trajectory_runtime_events`
(`session_id`, `seq`, `run_id`, `event_json`; primary key `(session_id, seq)`, and a partial index
`(session_id, run_id, seq)`). Each event is JSON of `traceSchema: "openclaw-trajectory"`,
`schemaVersion: 1` with `type`, `runId`, `sessionId`, `sessionKey`, `provider`, `modelId` and
`data`. What a run is made of (checked on both versions, stores kept in
tests/gateway/data/trajectory/):

- `prompt.submitted`: `data.prompt`, the message as the agent got it (a hook's is wrapped in
  OpenClaw's untrusted-content notice);
- `tool.call` `{toolCallId, name, args}` and `tool.result` `{toolCallId, name, success, result}`;
  with Tool Search a `tool_call` or `tool_search_code` wrapper is recorded beside the calls it
  made, whose ids read `tool_search_code:<wrapper id>:<tool>:<n>` (as in the log);
- `model.completed`, once per run however many model calls it made: `assistantTexts`, the summed
  `usage`, `stopReason` and the time-out/abort flags. The reply is the LAST element of
  `assistantTexts`: text the model wrote beside a tool call is commentary, which OpenClaw keeps out
  of `assistantTexts` (it is only in `messagesSnapshot`); checked against the chat response's
  `choices[0].message.content`;
- `trace.artifacts`: `finalStatus` and what the agent sent through messaging tools;
- `session.started` first and `session.ended` last: a run without `session.ended` has not been
  written out completely yet.

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
which only its final events are read, and on the bytes of one event). What OpenClaw itself cut or
redacted in a call's arguments is found by its markers (`args_cuts`), never taken as the value;
a text it kept only as its marker (a reply, a prompt or a message sent over its 32,768-character
limit) is None beside a `TextCut` saying so, and the rest of the run is read as usual.
Every event's `traceSchema`/`schemaVersion` is checked: an unknown one is an error naming both,
never a guess.
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from clawspec.errors import ClawSpecError
from clawspec.gateway.tool_search import CONTROLS, SPAWN_TOOL, WRAPPERS, wrapper_call_id

TRACE_SCHEMA = "openclaw-trajectory"
SCHEMA_VERSIONS = frozenset({1})
STORE_FILE = "openclaw-agent.sqlite"
TABLE = "trajectory_runtime_events"
SETTING_HINT = (
    "set openclaw_state_dir (environment CLAWSPEC_OPENCLAW_STATE_DIR or OPENCLAW_STATE_DIR, "
    "action input openclaw_state_dir) to the state folder of the gateway (its "
    "OPENCLAW_STATE_DIR)"
)
# Bounds of one read. An event over MAX_EVENT_BYTES is read without its bulk (the model
# snapshot, the prompts); if still over, only its envelope is kept and the run says so.
MAX_EVENT_BYTES = 1 << 20
MAX_RUN_EVENTS = 5_000
MAX_FOLLOW_DEPTH = 8  # sub-agents of sub-agents…: a guard against a cycle in the records
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
# The answer OpenClaw gives a call to a tool it does not offer; no tool ran.
_NOT_FOUND = "Tool {name} not found"
# The events a run ends with: read past the bound on a run's events (a run with more events
# still has its reply, usage, stop reason, messages sent and end).
_FINAL_KINDS = ("model.completed", "trace.artifacts", "session.ended")
# What a tool call is named when OpenClaw recorded it without its name (an event it cut whole).
UNKNOWN_TOOL = "(name not recorded)"


# --- errors -----------------------------------------------------------------------------------


class TrajectoryError(ClawSpecError):
    """The run record could not be read; the message says what to do."""


class StoreMissing(TrajectoryError):
    """No store where the state folder says it is."""


class StoreLocked(TrajectoryError):
    """The gateway held the store locked for longer than the reader waits."""


class StoreCorrupt(TrajectoryError):
    """The file is not a readable SQLite database, or not an OpenClaw agent store."""


class UnknownSchema(TrajectoryError):
    """An event of a trace schema or version this reader does not know."""

    def __init__(self, message: str, trace_schema: object, schema_version: object) -> None:
        super().__init__(message)
        self.trace_schema = trace_schema
        self.schema_version = schema_version


class BadEvent(TrajectoryError):
    """An event of a known version whose fields are not what that version writes."""


class RunNotFound(TrajectoryError):
    """The run (or session) is not in the store, or not yet."""


class RunNotRecorded(RunNotFound):
    """A wait for a run's record ended at its deadline without the whole record."""


# --- values -----------------------------------------------------------------------------------

JsonValue = Any  # a value decoded from JSON: None, bool, int, float, str, list, dict


@dataclass(frozen=True)
class Usage:
    """A run's summed usage, as `model.completed` records it. `cost` is None when not recorded."""

    input: int
    output: int
    cache_read: int
    cache_write: int
    total: int
    cost: float | None


@dataclass(frozen=True)
class SubagentRef:
    """A sub-agent a `sessions_spawn` call started: its agent, session key and run id."""

    agent: str
    session_key: str
    run_id: str | None


@dataclass(frozen=True)
class ArgsCut:
    """A part of a call's arguments OpenClaw did not record as the model sent it: it bounds and
    redacts what it writes (see `args_cuts`). `path` is where in the arguments (keys and list
    indexes; () the arguments as a whole), `reason` OpenClaw's own word for it
    (`trajectory-field-size-limit`, …, or `redacted`), `detail` what that means, in words."""

    path: tuple[str | int, ...]
    reason: str
    detail: str

    @property
    def where(self) -> str:
        """The path as a message names it: `content`, `options.tags[64]`, `arguments`."""
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
        return text or "arguments"


@dataclass(frozen=True)
class TextCut:
    """A text OpenClaw recorded only as its marker, not as the text (over its limit of 32,768
    characters for one field, or redacted): `reason` is OpenClaw's own word for it, `detail`
    what is known of the text, in words ("40,004 characters, over its trajectory limit of
    32,768")."""

    reason: str
    detail: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a run, Tool Search's wrappers taken out.

    `args` is what the model sent; `args_known` is False when it cannot be told: a
    `tool_search_code` call with no inner call recorded (its code made the calls), or an event cut
    for its size (`note` says which). `cuts`: the parts of `args` OpenClaw itself cut or redacted
    before writing them (its markers stay in `args` at those places; the rest is as sent): an
    argument comparison that touches one cannot be decided. `name_known` is False for a call
    OpenClaw recorded without even its name (an event over its size limit, cut whole): its tool
    could be any. `refused`: the gateway answered without running the tool (not a call, for
    counting). `through`: the wrapper the call was made through, if any.
    """

    tool_call_id: str
    name: str
    args: JsonValue
    args_known: bool
    success: bool | None  # None: no result recorded
    refused: bool
    result_text: str | None
    through: str | None = None
    spawned: SubagentRef | None = None
    note: str | None = None
    cuts: tuple[ArgsCut, ...] = ()
    name_known: bool = True


@dataclass(frozen=True)
class SentMessage:
    """A message the agent sent through a messaging tool (`messagingToolSentTargets`; a text
    OpenClaw kept only as its marker, with no target of its own, is one with no target).
    `text_cut`: OpenClaw kept no text of it (`text` is None), only its marker."""

    tool: str | None
    provider: str | None
    to: str | None
    text: str | None
    text_cut: TextCut | None = None


@dataclass(frozen=True)
class Trajectory:
    """One run as OpenClaw recorded it."""

    store: Path
    agent: str
    run_id: str
    session_id: str
    session_key: str | None
    provider: str | None
    model: str | None
    prompt: str | None  # None: not recorded, or kept only as a marker (`prompt_cut`)
    # The last of assistant_texts; None: the run wrote no final text, or OpenClaw kept only its
    # marker (`reply_cut` then says so: its text is not known).
    reply: str | None
    assistant_texts: tuple[str | None, ...]  # None: a text OpenClaw kept only as its marker
    usage: Usage | None
    stop_reason: str | None
    final_status: str | None  # trace.artifacts' finalStatus ("success", …)
    timed_out: bool
    aborted: bool
    tool_calls: tuple[ToolCall, ...]
    sent_texts: tuple[str, ...]  # the texts recorded (those kept only as a marker are in `sent`)
    sent: tuple[SentMessage, ...]
    complete: bool  # session.ended recorded and every event read: nothing more to read
    children: tuple[Trajectory, ...] = ()  # sub-agent runs, followed into their own stores
    pending_children: tuple[SubagentRef, ...] = ()  # spawned, not (completely) recorded yet
    cut: tuple[str, ...] = ()  # notes on what the read bounds left out
    # More events than the read's bound (MAX_RUN_EVENTS): the calls are those of the first
    # events only; the run's final events (reply, usage, stop reason, messages, end) are read
    # past the bound all the same.
    capped: bool = False
    ended: bool | None = None  # session.ended recorded (None: as `complete`)
    reply_cut: TextCut | None = None  # OpenClaw kept only its marker of the reply
    prompt_cut: TextCut | None = None  # OpenClaw kept only its marker of the prompt

    @property
    def has_ended(self) -> bool:
        """session.ended is recorded: OpenClaw writes nothing more for this run (its record may
        still be `capped`)."""
        return self.complete if self.ended is None else self.ended

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The calls that ran (refused ones are not calls)."""
        return tuple(c for c in self.tool_calls if not c.refused)

    def with_refusals(self, refused: Container[tuple[str, str]]) -> Trajectory:
        """This run and its sub-agents with the calls ClawSpec's plugin saw refused marked so
        (keys (run id, tool call id), as `clawspec.gateway.refusals` gives them): the record
        itself tells only the gateway's "not found" answer from a call that ran."""
        calls = tuple(
            replace(call, refused=True) if (self.run_id, call.tool_call_id) in refused else call
            for call in self.tool_calls
        )
        children = tuple(child.with_refusals(refused) for child in self.children)
        return replace(self, tool_calls=calls, children=children)

    @property
    def settled(self) -> bool:
        """This run and every sub-agent it spawned have ended: nothing more will be recorded
        (a `capped` record is read as far as its bound, and no wait makes it longer)."""
        return (
            self.has_ended
            and not self.pending_children
            and all(child.settled for child in self.children)
        )


# --- the event format (the edge: pydantic, through its public API) ----------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Envelope(_Model):
    type: str
    runId: str | None = None
    sessionId: str | None = None
    sessionKey: str | None = None
    provider: str | None = None
    modelId: str | None = None
    data: dict[str, Any] | None = None


class _ToolCallData(_Model):
    toolCallId: str
    name: str
    args: Any = None


class _ToolResultData(_Model):
    toolCallId: str
    name: str
    success: bool | None = None
    result: Any = None


class _Cost(_Model):
    total: float | None = None


class _Usage(_Model):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    total: int | None = None
    cost: _Cost | None = None


class _Outcome(_Model):
    """The flags model.completed, trace.artifacts and session.ended share."""

    stopReason: str | None = None
    aborted: bool = False
    externalAbort: bool = False
    timedOut: bool = False
    idleTimedOut: bool = False
    timedOutDuringCompaction: bool = False
    timedOutDuringToolExecution: bool = False
    timedOutByRunBudget: bool = False


def _text_or_marker(value: Any) -> Any:
    if isinstance(value, str) or bound_marker(value) is not None:
        return value
    raise ValueError(
        "Input should be a valid string, or OpenClaw's marker of a text it did not keep"
    )


# A text OpenClaw writes as is, or as its marker when it does not keep it (a string over 32,768
# characters becomes `{"truncated": true, "reason": "trajectory-field-size-limit", …}`).
_Text = Annotated[Any, AfterValidator(_text_or_marker)]


class _ModelCompleted(_Outcome):
    assistantTexts: list[_Text] = []
    usage: _Usage | None = None


class _Artifacts(_Outcome):
    finalStatus: str | None = None
    messagingToolSentTexts: list[_Text] = []
    messagingToolSentTargets: list[dict[str, Any]] = []


class _Prompt(_Model):
    prompt: _Text | None = None


M = TypeVar("M", bound=_Model)


@dataclass(frozen=True)
class _Event:
    seq: int
    envelope: _Envelope
    cut: bool  # only the envelope could be read within the bounds


def _data(event: _Event, model: type[M], where: str) -> M:
    try:
        return model.model_validate(event.envelope.data or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'data'}: {err['msg']}"
            for err in exc.errors(include_input=False, include_url=False)
        )
        raise BadEvent(
            f"{where}: event {event.seq} ({event.envelope.type}) of {TRACE_SCHEMA} version 1 "
            f"does not read as that version writes it ({problems}); the store may come from an "
            "OpenClaw release ClawSpec does not support yet"
        ) from None


def check_version(raw: Mapping[str, Any], where: str) -> None:
    """Raise UnknownSchema unless the event is `openclaw-trajectory` version 1."""
    schema, version = raw.get("traceSchema"), raw.get("schemaVersion")
    if schema == TRACE_SCHEMA and type(version) is int and version in SCHEMA_VERSIONS:
        return
    known = ", ".join(str(v) for v in sorted(SCHEMA_VERSIONS))
    raise UnknownSchema(
        f"{where}: an event has traceSchema {schema!r}, schemaVersion {version!r}; ClawSpec reads "
        f"traceSchema {TRACE_SCHEMA!r} version {known}: use an OpenClaw release ClawSpec supports "
        "or a ClawSpec release that reads this version",
        schema,
        version,
    )


# --- the store --------------------------------------------------------------------------------


def store_path(state_dir: Path, agent: str) -> Path:
    """Where OpenClaw keeps `agent`'s store under the gateway's state folder."""
    return Path(state_dir) / "agents" / agent / "agent" / STORE_FILE


def holds_agent_stores(state_dir: Path) -> bool:
    """Whether any agent ever ran with `state_dir` as its gateway's state folder (the folder
    `store_path` puts every agent's store in exists)."""
    return (Path(state_dir) / "agents").is_dir()


def agent_of(session_key: str) -> str | None:
    """The agent an agent-scoped session key names (`agent:<id>:…`), else None."""
    parts = session_key.split(":", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "agent" and parts[1] else None


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

    def _parse(self, rows: Sequence[_Row]) -> list[_Event]:
        events: list[_Event] = []
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
                envelope = _Envelope.model_validate(raw)
            except ValidationError as exc:
                fields = ", ".join(
                    ".".join(str(p) for p in err["loc"])
                    for err in exc.errors(include_input=False, include_url=False)
                )
                raise BadEvent(
                    f"{where}: the event's {fields} is not as {TRACE_SCHEMA} version 1 writes it;"
                    " the store may come from an OpenClaw release ClawSpec does not support yet"
                ) from None
            events.append(_Event(seq, envelope, cut))
        return events

    def _build(self, rows: Sequence[_Row], more: bool) -> Trajectory:
        events = self._parse(rows)
        first = events[0].envelope
        where = f"{self.path} run {first.runId}"
        calls: list[_Event] = []
        results: dict[str, _ToolResultData] = {}
        completed: _ModelCompleted | None = None
        artifacts: _Artifacts | None = None
        ended = False
        prompt: Any = None
        notes = [f"more than {self.max_run_events} events: read the first ones"] if more else []
        for event in events:
            kind = event.envelope.type
            whole = _whole_cut(event)
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
                data = _data(event, _ToolResultData, where)
                results[data.toolCallId] = data
            elif kind == "model.completed":
                completed = _data(event, _ModelCompleted, where)
            elif kind == "trace.artifacts":
                artifacts = _data(event, _Artifacts, where)
            elif kind == "prompt.submitted":
                prompt = _data(event, _Prompt, where).prompt
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
            tool_calls=tuple(_tool_calls(calls, results, where, self.max_event_bytes)),
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


def _timed_out(o: _Outcome) -> bool:
    return (
        o.timedOut
        or o.idleTimedOut
        or o.timedOutDuringCompaction
        or o.timedOutDuringToolExecution
        or o.timedOutByRunBudget
    )


def _usage(u: _Usage) -> Usage:
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


def _result_text(result: Any) -> str | None:
    """The text parts of a tool result's `content`, joined."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return None
    parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(parts) if parts else None


def _code_call_count(text: str | None) -> int | None:
    """How many tools a `tool_search_code` call's code called, from the telemetry its answer
    carries (`{"telemetry": {"callCount": N, …}, …}` on 2026.9.6), else None."""
    try:
        answer = json.loads(text) if text else None
    except json.JSONDecodeError:
        return None
    telemetry = answer.get("telemetry") if isinstance(answer, dict) else None
    count = telemetry.get("callCount") if isinstance(telemetry, dict) else None
    return count if type(count) is int else None


def _spawned(name: str, result: _ToolResultData | None) -> SubagentRef | None:
    if name != SPAWN_TOOL or result is None or not result.success:
        return None
    details = result.result.get("details") if isinstance(result.result, dict) else None
    if not isinstance(details, dict):
        return None
    key, run = details.get("childSessionKey"), details.get("runId")
    agent = agent_of(key) if isinstance(key, str) else None
    if not isinstance(key, str) or agent is None:
        return None
    return SubagentRef(agent, key, run if isinstance(run, str) else None)


# --- what OpenClaw cut or redacted in what it recorded -----------------------------------------
#
# OpenClaw (2026.9.x, dist/runtime-*.mjs `sanitizeTrajectoryPayload`) bounds an event's data
# before writing it (`limitTrajectoryPayloadValue`): a string over 32,768 characters, a value 6
# levels deep, the 65th key of an object (`_truncated`) and the 65th item of a list become a
# marker `{"truncated": true, "reason": "trajectory-…-limit", …}`; an event still over 256 KiB
# keeps only such a marker as its data. It then redacts (`sanitizeDiagnosticPayload`,
# `redactSecrets`): credential-like keys are left out, secrets in text become `<redacted>` (or
# `abcdef…wxyz`, `***`), binary data `{"redacted": "<redacted>", …}`, text it takes for broken
# JSON "[Malformed diagnostic JSON redacted]". The rest is as the model sent it.

EVENT_SIZE_LIMIT = "trajectory-event-size-limit"
OBJECT_SIZE_LIMIT = "trajectory-object-size-limit"
ARRAY_SIZE_LIMIT = "trajectory-array-size-limit"
TRUNCATED_KEY = "_truncated"  # where an object cut at its key limit says so
# Keys of an object, items of a list OpenClaw records. Its redaction, run after the bound, keeps
# only the first 64 keys of anything: the `_truncated` key and a list's 65th item (the marker)
# are dropped again, so a recorded object of 64 keys or list of 64 items may have been longer
# (checked on a real gateway: 66 keys sent, the first 64 recorded, no marker).
OPENCLAW_MAX_ITEMS = 64
REDACTED = "redacted"  # an ArgsCut's reason for a value OpenClaw redacted
# Whole values OpenClaw writes in place of one it would not record.
_PLACEHOLDERS = frozenset(
    {
        "[Malformed diagnostic JSON redacted]",
        "[Oversized diagnostic JSON redacted]",
        "[Truncated]",
        "[Circular]",
        "[Unserializable]",
        "***",
    }
)
_REDACTED_PARTS = ("<redacted>", "<redacted-jwt>", "\u2026redacted\u2026")
# A token masked as its first 6 and last 4 characters (redactSecrets' maskToken).
_MASKED_TOKEN = re.compile(
    r"(?:^|(?<=[\s\"'=:(\[{,]))[^\s\u2026]{6}\u2026[^\s\u2026]{4}(?=$|[\s\"';,&)\]}])"
)
# Keys OpenClaw leaves out of what it records (credential-like names, as it normalises them).
_CREDENTIAL_KEY = re.compile(
    r"(?:apikey|cookie|credential|passphrase|passwd|password|privatekey|secret|"
    r"secret(?:access)?key|signingkey|token)$"
)
_NOT_CREDENTIAL = frozenset(
    {"passwordfile", "tokenbudget", "tokencount", "tokenfield", "tokenlimit", "tokens"}
)
_MAX_WALK = 100_000  # values looked at in one call's arguments


def _number(value: Any) -> str:
    return f"{value:,}" if type(value) is int else "?"


def _count(value: Any, unit: str) -> str:
    return f"{_number(value)} {unit}"


def bound_marker(value: Any) -> str | None:
    """OpenClaw's reason, when `value` is one of its markers for a value it did not record
    (`{"truncated": true, "reason": "trajectory-…"}`, redacted binary data), else None."""
    if not isinstance(value, dict):
        return None
    reason = value.get("reason")
    if (
        value.get("truncated") is True
        and isinstance(reason, str)
        and reason.startswith("trajectory-")
    ):
        return reason
    if value.get("redacted") == "<redacted>" and set(value) <= {"redacted", "bytes", "sha256"}:
        return REDACTED
    return None


def _bound_detail(reason: str, marker: dict[str, Any]) -> str:
    """What a marker of OpenClaw's says, in words."""
    get = marker.get
    if reason == "trajectory-field-size-limit":
        return (
            f"cut at its {_number(get('limitChars'))}-character limit "
            f"({_count(get('originalChars'), 'characters')} sent)"
        )
    if reason == "trajectory-depth-limit":
        return f"cut at its nesting limit of {_count(get('limitDepth'), 'levels')}"
    if reason == ARRAY_SIZE_LIMIT:
        return (
            f"cut at its limit of {_count(get('limitItems'), 'items')} "
            f"({_count(get('originalLength'), 'items')} sent)"
        )
    if reason == OBJECT_SIZE_LIMIT:
        return (
            f"cut at its limit of {_count(get('limitKeys'), 'keys')} "
            f"({_count(get('originalKeys'), 'keys')} sent)"
        )
    if reason == "trajectory-circular-reference":
        return "replaced by its marker for a circular reference"
    if reason == EVENT_SIZE_LIMIT:
        return (
            f"over its {_number(get('limitBytes'))}-byte limit "
            f"({_count(get('originalBytes'), 'bytes')}), kept without its data"
        )
    if reason == REDACTED:
        return "replaced by its redaction of binary or media data"
    return f"cut ({_plain_reason(reason)})"


def text_cut(marker: Any) -> TextCut:
    """What OpenClaw's marker in place of a text says of it (`bound_marker(marker)` is set)."""
    reason = bound_marker(marker) or "unknown"
    if reason != "trajectory-field-size-limit":
        return TextCut(reason, _bound_detail(reason, marker))
    chars = marker.get("originalChars")
    size = f"{_count(chars, 'characters')}, over" if type(chars) is int else "over"
    return TextCut(reason, f"{size} its trajectory limit of {_number(marker.get('limitChars'))}")


def _plain_reason(reason: str) -> str:
    return "".join(c for c in reason[:80] if c.isprintable())


def redacted_text(text: str) -> bool:
    """Whether OpenClaw replaced `text` or part of it (a secret, broken JSON) before recording."""
    return (
        text in _PLACEHOLDERS
        or any(part in text for part in _REDACTED_PARTS)
        or ("\u2026" in text and _MASKED_TOKEN.search(text) is not None)
    )


def container_cut(value: Any) -> str | None:
    """What OpenClaw may have cut of an object or a list (keys or items past its limit of 64),
    in words, else None."""
    if isinstance(value, dict):
        marker = value.get(TRUNCATED_KEY)
        if bound_marker(marker) == OBJECT_SIZE_LIMIT:
            return _bound_detail(OBJECT_SIZE_LIMIT, marker)
        if len(value) >= OPENCLAW_MAX_ITEMS:
            return (
                f"with {len(value)} keys, its limit: any keys past them were left out of its record"
            )
    if isinstance(value, list) and value:
        if bound_marker(value[-1]) == ARRAY_SIZE_LIMIT:
            return _bound_detail(ARRAY_SIZE_LIMIT, value[-1])
        if len(value) >= OPENCLAW_MAX_ITEMS:
            return (
                f"with {len(value)} items, its limit: any items past them were left "
                "out of its record"
            )
    return None


def placeholder(text: str | None) -> bool:
    """Whether OpenClaw recorded its placeholder in place of a whole text (a reply holding
    text it takes for broken JSON is recorded as "[Malformed diagnostic JSON redacted]")."""
    return text in _PLACEHOLDERS


def cut_detail(value: Any) -> str | None:
    """What OpenClaw did to `value`, in words, when it is one of its markers or text it
    redacted (the value sent is then not known), else None."""
    reason = bound_marker(value)
    if reason is not None:
        return _bound_detail(reason, value)
    if isinstance(value, str) and redacted_text(value):
        if value in _PLACEHOLDERS:
            return f"replaced by its placeholder {json.dumps(value)}"
        return "with a part it redacted (a secret)"
    return None


def credential_key(key: str) -> bool:
    """Whether OpenClaw leaves a key of this name out of what it records."""
    name = re.sub(r"[^a-z0-9]", "", key.lower())
    if not name or name in _NOT_CREDENTIAL:
        return False
    return name in ("authorization", "proxyauthorization") or bool(_CREDENTIAL_KEY.search(name))


def args_cuts(args: Any) -> tuple[ArgsCut, ...]:
    """The parts of recorded arguments that OpenClaw cut or redacted (see above), in order.
    An object cut at its key limit, and a list at its item limit, are named by their own path;
    a walk of a hostile value stops after _MAX_WALK values (the rest taken as cut)."""
    cuts: list[ArgsCut] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), args)]
    seen = 0
    while stack:
        path, value = stack.pop()
        seen += 1
        if seen > _MAX_WALK:
            cuts.append(ArgsCut(path, "too-large", "too large to look through"))
            break
        reason = bound_marker(value)
        if reason is not None:
            cuts.append(ArgsCut(path, reason, _bound_detail(reason, value)))
            continue
        if isinstance(value, str):
            detail = cut_detail(value)
            if detail is not None:
                cuts.append(ArgsCut(path, REDACTED, detail))
            continue
        children: list[tuple[tuple[str | int, ...], Any]] = []
        bulk = container_cut(value)
        if bulk is not None:
            kind = OBJECT_SIZE_LIMIT if isinstance(value, dict) else ARRAY_SIZE_LIMIT
            cuts.append(ArgsCut(path, kind, bulk))
        if isinstance(value, dict):
            for key, item in value.items():
                if key == TRUNCATED_KEY and bound_marker(item) == OBJECT_SIZE_LIMIT:
                    continue
                children.append(((*path, str(key)), item))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if index == len(value) - 1 and bound_marker(item) == ARRAY_SIZE_LIMIT:
                    continue
                children.append(((*path, index), item))
        stack.extend(reversed(children))
    return tuple(cuts)


def _whole_cut(event: _Event) -> str | None:
    """How OpenClaw cut the event, when it kept only its marker as the data, else None."""
    data = event.envelope.data
    if data is None or bound_marker(data) != EVENT_SIZE_LIMIT:
        return None
    return "cut by OpenClaw " + _bound_detail(EVENT_SIZE_LIMIT, data)


def _tool_calls(
    events: Iterable[_Event],
    results: Mapping[str, _ToolResultData],
    where: str,
    cap: int,
) -> list[ToolCall]:
    """The run's calls with Tool Search's controls taken out (clawspec.gateway.tool_search):
    a wrapper whose inner call is recorded is that call; a `tool_call` without one is its
    target, refused (nothing ran); a `tool_search_code` without one is kept, its arguments
    unknown, unless its answer says its code called nothing; `tool_search`/`tool_describe`
    only look tools up."""
    records: list[tuple[_Event, _ToolCallData | None]] = [
        (e, None if _whole_cut(e) is not None else _data(e, _ToolCallData, where)) for e in events
    ]
    wrapped = {
        outer
        for _, call in records
        if call is not None
        and call.name not in CONTROLS
        and (outer := wrapper_call_id(call.toolCallId, call.name))
    }
    names = {call.toolCallId: call.name for _, call in records if call is not None}
    out: list[ToolCall] = []
    for event, call in records:
        if call is None:  # OpenClaw cut the event whole: a call, of a tool not known
            out.append(
                ToolCall(
                    tool_call_id=f"(event {event.seq})",
                    name=UNKNOWN_TOOL,
                    args=None,
                    args_known=False,
                    success=None,
                    refused=False,
                    result_text=None,
                    note=f"recorded without its name and arguments, its event {_whole_cut(event)}",
                    name_known=False,
                )
            )
            continue
        result = results.get(call.toolCallId)
        text = _result_text(result.result) if result else None
        success = result.success if result else None
        cut_note = f"arguments over {cap} bytes: not read" if event.cut else None
        outer = wrapper_call_id(call.toolCallId, call.name)
        through = names.get(outer) if outer else None
        if call.name in WRAPPERS and call.toolCallId in wrapped:
            continue  # its inner calls are recorded: they are the calls
        if call.name in CONTROLS and call.name not in WRAPPERS:
            continue  # a look-up
        if call.name == "tool_call":
            args = call.args if isinstance(call.args, dict) else {}
            target = args.get("id")
            inner = None if event.cut else args.get("args", {})
            out.append(
                ToolCall(
                    tool_call_id=call.toolCallId,
                    name=target if isinstance(target, str) else "tool_call",
                    args=inner,
                    args_known=not event.cut,
                    success=success,
                    refused=result is not None,  # ended without an inner call: nothing ran
                    result_text=text,
                    through="tool_call",
                    note=cut_note,
                    cuts=args_cuts(inner),
                )
            )
            continue
        if call.name == "tool_search_code":
            if _code_call_count(text) == 0:
                continue  # its code only searched and described tools
            out.append(
                ToolCall(
                    tool_call_id=call.toolCallId,
                    name=call.name,
                    args=None,
                    args_known=False,
                    success=success,
                    refused=False,
                    result_text=text,
                    note="code mode: the calls its code made are not recorded one by one",
                )
            )
            continue
        refused = success is False and text == _NOT_FOUND.format(name=call.name)
        out.append(
            ToolCall(
                tool_call_id=call.toolCallId,
                name=call.name,
                args=None if event.cut else call.args,
                args_known=not event.cut,
                success=success,
                refused=refused,
                result_text=text,
                through=through,
                spawned=_spawned(call.name, result),
                note=cut_note,
                cuts=() if event.cut else args_cuts(call.args),
            )
        )
    return out


# --- following sub-agents, and waiting --------------------------------------------------------


@dataclass
class TrajectoryReader:
    """The stores of one gateway's state folder: reads a run and follows its sub-agents into
    their own agents' stores."""

    state_dir: Path
    options: dict[str, Any] = field(default_factory=dict)  # TrajectoryStore's settings
    _stores: dict[str, TrajectoryStore] = field(default_factory=dict, init=False, repr=False)

    def store(self, agent: str) -> TrajectoryStore:
        """`agent`'s store (one per agent, kept open between lookups)."""
        if agent not in self._stores:
            self._stores[agent] = TrajectoryStore.of(self.state_dir, agent, **self.options)
        return self._stores[agent]

    def close(self) -> None:
        for store in self._stores.values():
            store.close()

    def __enter__(self) -> TrajectoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat_run(self, agent: str, run_id: str, session_key: str | None = None) -> Trajectory:
        """A chat run (`run_id`: the response's id), its sub-agents followed."""
        return self.follow(self.store(agent).run(run_id, session_key=session_key))

    def hook_run(self, agent: str, session_key: str) -> Trajectory:
        """The run a hook request started, its sub-agents followed."""
        return self.follow(self.store(agent).hook_run(session_key))

    def conversation(self, agent: str, session_key: str) -> list[Trajectory]:
        """The runs of a conversation's session in order, each with its sub-agents."""
        return [self.follow(run) for run in self.store(agent).session_runs(session_key)]

    def follow(self, run: Trajectory, depth: int = 0) -> Trajectory:
        """`run` with the runs its `sessions_spawn` calls started (a child not recorded yet,
        or not completely, is pending: read again later)."""
        refs = [c.spawned for c in run.calls if c.spawned is not None]
        if not refs or depth >= MAX_FOLLOW_DEPTH:
            return run
        children: list[Trajectory] = []
        pending: list[SubagentRef] = []
        for ref in refs:
            try:
                store = self.store(ref.agent)
                if ref.run_id:
                    child = store.run(ref.run_id, session_key=ref.session_key)
                else:
                    child = store.hook_run(ref.session_key)
            except (RunNotFound, StoreMissing):
                pending.append(ref)
                continue
            if child.has_ended:
                children.append(self.follow(child, depth + 1))
            else:
                pending.append(ref)
        return replace(run, children=tuple(children), pending_children=tuple(pending))


def wait_for(
    read: Callable[[], Trajectory],
    *,
    timeout_s: float,
    poll_s: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    until: Literal["complete", "settled"] = "settled",
) -> Trajectory:
    """Read until the run is completely recorded (with its sub-agents: `settled`), or until
    `timeout_s` has passed on `clock`; then RunNotRecorded says what was still missing.

    OpenClaw writes a run's events as it goes and a spawned sub-agent starts late, so the
    record may trail the hook's answer; the scenario's timeout bounds the wait."""
    deadline = clock() + timeout_s
    last: Trajectory | None = None
    missing = ""
    while True:
        try:
            last = read()
            done = last.settled if until == "settled" else last.has_ended
            if done:
                return last
            missing = (
                "the run has not ended"
                if not last.has_ended
                else f"{len(last.pending_children)} sub-agent run(s) have not ended"
            )
        except (
            RunNotFound,
            StoreMissing,
        ) as exc:  # a fresh gateway makes its store at its first run
            missing = str(exc)
        if clock() >= deadline:
            raise RunNotRecorded(
                f"the run's record was not complete after {round(timeout_s, 1):g} s: {missing}"
            )
        sleep(poll_s)
