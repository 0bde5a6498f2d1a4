"""OpenClaw's run record read from stores recorded on the real gateways 2026.9.5 and 2026.9.6.

The stores under data/trajectory/<version>/ were recorded by tests/support/record_trajectories.py
(see the README there): hook runs that write a file (text before the tool call, then the final
text), call a tool the gateway does not know, spawn a sub-agent of another agent, read one file
four times in a row; a two-turn chat conversation; on 2026.9.6 a run through Tool Search's
code mode; and runs that send messages through OpenClaw's Telegram channel, pointed at a fake
Bot API on loopback. `manifest.json` holds what the gateway answered (hook run ids, the log's
`gateway/hooks` lines, the chat responses) and what the Bot API was asked to send, which the
reader's results are checked against. The fault cases work on copies of those stores, changed
with SQLite itself.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.trajectory.errors import (
    BadEvent,
    RunNotFound,
    RunNotRecorded,
    StoreCorrupt,
    StoreLocked,
    StoreMissing,
    UnknownSchema,
)
from clawspec.gateway.trajectory.layout import agent_of, store_path
from clawspec.gateway.trajectory.reader import TrajectoryReader, wait_for
from clawspec.gateway.trajectory.store import TrajectoryStore
from clawspec.gateway.trajectory.values import SubagentRef, Trajectory, Usage
from tests.support.fake_time import FakeTime

DATA = Path(__file__).parent / "data" / "trajectory"
VERSIONS = ("2026.9.5", "2026.9.6")


def manifest(version: str) -> dict[str, Any]:
    return dict(json.loads((DATA / version / "manifest.json").read_text("utf-8")))


def hook_session(version: str, name: str, store: str = "default") -> str:
    """The session key of hook run `name`: the log's gateway/hooks line for the hook's run id."""
    recorded = manifest(version)["stores"][store]
    run_id = recorded["hooks"][name]["runId"]
    (line,) = [line for line in recorded["hook_lines"] if line["runId"] == run_id]
    return str(line["sessionKey"])


def hook_run(version: str, name: str, store: str = "default") -> Trajectory:
    return TrajectoryReader(DATA / version / store).hook_run(
        "main", hook_session(version, name, store)
    )


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A writable copy of the 2026.9.6 state folder's stores."""
    target = tmp_path / "state"
    shutil.copytree(DATA / "2026.9.6" / "default", target)
    return target


def connect(state: Path, agent: str = "main") -> sqlite3.Connection:
    return sqlite3.connect(store_path(state, agent), isolation_level=None)


# --- the recorded runs ------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_a_write_run_reads_whole(version: str) -> None:
    run = hook_run(version, "tj-write")
    session_key = hook_session(version, "tj-write")
    assert run.agent == "main" and run.store == store_path(DATA / version / "default", "main")
    assert run.session_key is not None and run.session_key.startswith(session_key)
    assert session_key.startswith("agent:main:cron:")
    # A hook run's embedded run id: 2026.9.5 uses the session id, 2026.9.6 one of its own.
    assert run.run_id and (run.run_id == run.session_id) == (version == "2026.9.5")
    assert (run.provider, run.model) == ("fake", "fake-model")
    assert run.prompt is not None and "Recorded run tj-write [script:tj-write]" in run.prompt
    # The text written beside the tool call is commentary: not in assistantTexts, not the reply.
    assert run.assistant_texts == ("Wrote notes.md.",)
    assert run.reply == "Wrote notes.md."
    # Two model calls (1200+40, 1300+6 tokens as scripted), summed once for the run.
    assert run.usage == Usage(
        input=2500, output=46, cache_read=0, cache_write=0, total=2546, cost=0.0
    )
    assert (run.stop_reason, run.final_status) == ("stop", "success")
    assert not run.timed_out and not run.aborted
    assert run.complete and run.settled and run.cut == ()
    (call,) = run.tool_calls
    assert (call.name, call.args) == (
        "write",
        {"path": "notes.md", "content": "# Notes\nsecond line\n"},
    )
    assert call.args_known and call.success is True and not call.refused and call.through is None
    assert call.result_text == "Successfully wrote 20 bytes to notes.md"
    assert (run.sent_texts, run.sent) == ((), ())


@pytest.mark.parametrize("version", VERSIONS)
def test_a_call_to_an_unknown_tool_is_refused_and_not_a_call(version: str) -> None:
    run = hook_run(version, "tj-refused")
    (call,) = run.tool_calls
    assert (call.name, call.args, call.success) == ("no_such_tool", {"x": 1}, False)
    assert call.refused and call.result_text == "Tool no_such_tool not found"
    assert run.calls == ()
    assert run.reply == "That tool does not exist."


@pytest.mark.parametrize("version", VERSIONS)
def test_a_failed_call_that_ran_is_not_refused(version: str, tmp_path: Path) -> None:
    """Only the gateway's own "not found" answer marks a refusal: a tool that ran and failed
    (success false, another answer) is a call."""
    state = tmp_path / "state"
    shutil.copytree(DATA / version / "default", state)
    with connect(state) as db:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
            " '$.data.success', json('false'), '$.data.result.content[0].text', 'ENOENT')"
            " WHERE json_extract(event_json, '$.type') = 'tool.result'"
            " AND json_extract(event_json, '$.data.name') = 'write'"
        )
    run = TrajectoryReader(state).hook_run("main", hook_session(version, "tj-write"))
    (call,) = run.calls
    assert call.success is False and not call.refused and call.result_text == "ENOENT"


@pytest.mark.parametrize("version", VERSIONS)
def test_a_sub_agent_is_followed_into_its_own_agents_store(version: str) -> None:
    run = hook_run(version, "tj-spawn")
    (call,) = run.tool_calls
    assert call.name == "sessions_spawn"
    assert call.args == {
        "task": "Review notes.md [script:tj-child]",
        "taskName": "review",
        "agentId": "reviewer",
    }
    # 2026.9.6 (Tool Search on) calls it through `tool_call`; 2026.9.5 offers it directly.
    assert call.through == ("tool_call" if version == "2026.9.6" else None)
    assert call.success is True and not call.refused
    assert isinstance(call.spawned, SubagentRef) and call.spawned.agent == "reviewer"
    assert call.spawned.session_key.startswith("agent:reviewer:subagent:")
    assert run.reply == "Delegated the review."
    (child,) = run.children
    assert run.pending_children == () and run.settled
    assert child.agent == "reviewer"
    assert child.store == store_path(DATA / version / "default", "reviewer")
    assert child.session_key == call.spawned.session_key
    assert child.run_id == call.spawned.run_id
    assert child.prompt is not None and "Review notes.md [script:tj-child]" in child.prompt
    assert child.reply == "Reviewed."
    (write,) = child.calls
    assert (write.name, write.args) == ("write", {"path": "review.md", "content": "looks fine\n"})


@pytest.mark.parametrize("version", VERSIONS)
def test_the_same_call_four_times_in_a_row(version: str) -> None:
    run = hook_run(version, "tj-loop")
    assert [(c.name, c.args) for c in run.calls] == [("read", {"path": "notes.md"})] * 4
    assert len({c.tool_call_id for c in run.calls}) == 4
    assert all(c.success for c in run.calls)
    assert run.reply == "Read it four times."


@pytest.mark.parametrize("version", VERSIONS)
def test_a_conversations_turns_are_its_sessions_runs_and_the_reply_is_the_chat_answer(
    version: str,
) -> None:
    recorded = manifest(version)["stores"]["default"]["conversation"]
    key, turns = recorded["session_key"], recorded["turns"]
    reader = TrajectoryReader(DATA / version / "default")
    runs = reader.conversation("main", key)
    assert [r.run_id for r in runs] == [t["id"] for t in turns]
    assert all(r.run_id.startswith("chatcmpl_") for r in runs)
    # The rule for the reply, checked against the response: the last assistant text.
    assert [r.reply for r in runs] == [t["reply"] for t in turns]
    assert [r.reply for r in runs] == ["Nice to meet you, Zed.", "Your name is Zed."]
    assert runs[0].assistant_texts == ("Nice to meet you, Zed.",)  # the commentary is not in it
    assert [r.model for r in runs] == ["fake-model", "fake-model-b"]  # x-openclaw-model
    assert {r.session_id for r in runs} == {reader.store("main").session_id(key)}
    assert all(r.session_key == key for r in runs)
    assert runs[0].prompt is not None and "My name is Zed." in runs[0].prompt
    assert runs[1].prompt is not None and "What is my name?" in runs[1].prompt
    for run, turn in zip(runs, turns, strict=True):
        assert run.usage is not None
        assert (run.usage.input, run.usage.output) == (
            turn["usage"]["prompt_tokens"],
            turn["usage"]["completion_tokens"],
        )
    (call,) = runs[0].calls
    assert (call.name, call.args) == ("write", {"path": "name.md", "content": "Zed\n"})
    assert runs[1].tool_calls == ()
    # A chat run by its id: through the session's index, or by scanning; the same run.
    by_key = reader.chat_run("main", turns[1]["id"], session_key=key)
    assert by_key == reader.chat_run("main", turns[1]["id"]) == runs[1]
    # The key as sent in x-openclaw-session-key names the agent's session agent:<id>:<key>.
    assert reader.conversation("main", key.removeprefix("agent:main:")) == runs


def test_tool_search_code_mode_records_the_calls_its_code_made() -> None:
    """2026.9.6 with tools.toolSearch.mode "code": the inner call is recorded (its id names the
    wrapper) and counts; the wrapper does not (its own arguments are recorded redacted)."""
    run = hook_run("2026.9.6", "tj-code", store="code")
    assert run.reply == "Wrote code.md through code."
    (call,) = run.calls
    assert (call.name, call.args, call.through) == (
        "write",
        {"path": "code.md", "content": "from code\n"},
        "tool_search_code",
    )
    assert call.tool_call_id == "tool_search_code:call_tj-code_0_0:write:1"
    assert call.args_known and call.success is True


def _without_inner_calls(tmp_path: Path, store: str, version: str = "2026.9.6") -> Path:
    """A copy of `store` whose inner (wrapped) calls were not recorded."""
    state = tmp_path / store
    shutil.copytree(DATA / version / store, state)
    with connect(state) as db:
        db.execute(
            "DELETE FROM trajectory_runtime_events"
            " WHERE json_extract(event_json, '$.data.toolCallId') LIKE 'tool\\_search\\_code:%'"
            " ESCAPE '\\'"
        )
    return state


def test_code_mode_without_inner_calls_keeps_the_call_with_unknown_arguments(
    tmp_path: Path,
) -> None:
    state = _without_inner_calls(tmp_path, "code")
    run = TrajectoryReader(state).hook_run("main", hook_session("2026.9.6", "tj-code", "code"))
    (call,) = run.calls
    assert call.name == "tool_search_code" and call.args is None and not call.args_known
    assert call.note is not None and "not recorded" in call.note


def test_code_mode_whose_code_called_nothing_is_no_call(tmp_path: Path) -> None:
    """Its answer's telemetry says how many tools its code called: none, no call."""
    state = _without_inner_calls(tmp_path, "code")
    with connect(state) as db:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
            " '$.data.result.content[0].text', '' || json_set(json_extract(event_json,"
            " '$.data.result.content[0].text'), '$.telemetry.callCount', 0))"  # '' ||: a string
            " WHERE json_extract(event_json, '$.type') = 'tool.result'"
        )
    run = TrajectoryReader(state).hook_run("main", hook_session("2026.9.6", "tj-code", "code"))
    assert run.tool_calls == () and run.reply == "Wrote code.md through code."


def test_a_tool_call_wrapper_without_an_inner_call_ran_nothing(tmp_path: Path) -> None:
    """Counted as its target (name and arguments), refused: nothing was executed."""
    state = _without_inner_calls(tmp_path, "default")
    run = TrajectoryReader(state).hook_run("main", hook_session("2026.9.6", "tj-spawn"))
    (call,) = run.tool_calls
    assert (call.name, call.through, call.refused) == ("sessions_spawn", "tool_call", True)
    assert call.args == {
        "task": "Review notes.md [script:tj-child]",
        "taskName": "review",
        "agentId": "reviewer",
    }
    assert run.calls == () and run.children == ()


# --- lookups that find nothing ----------------------------------------------------------------


def test_a_missing_store_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(StoreMissing) as caught:
        TrajectoryReader(tmp_path).hook_run("main", "agent:main:cron:x")
    message = str(caught.value)
    assert "openclaw_state_dir" in message and "CLAWSPEC_OPENCLAW_STATE_DIR" in message
    assert str(store_path(tmp_path, "main")) in message


def test_a_folder_where_the_store_should_be_is_said_at_once_not_waited_for(
    tmp_path: Path,
) -> None:
    """A fresh gateway creates its store at its first run, so a missing one is waited for;
    a folder in its place never becomes one (it waited the scenario's whole timeout)."""
    store_path(tmp_path, "main").mkdir(parents=True)
    reader = TrajectoryReader(tmp_path)
    fake = FakeTime()
    with pytest.raises(StoreCorrupt, match=r"not a file where OpenClaw keeps agent 'main'") as e:
        wait_for(
            lambda: reader.hook_run("main", "agent:main:cron:x"),
            timeout_s=30,
            clock=fake.clock,
            sleep=fake.sleep,
        )
    assert fake.pauses == []  # said at the first reading, not waited for
    assert "set openclaw_state_dir" in str(e.value)


def test_an_unknown_run_or_session(state: Path) -> None:
    store = TrajectoryStore.of(state, "main")
    with pytest.raises(RunNotFound, match="no run 'chatcmpl_nope'"):
        store.run("chatcmpl_nope")
    with pytest.raises(RunNotFound, match="no session 'agent:main:nope'"):
        store.session_runs("agent:main:nope")


def test_agent_of_a_session_key() -> None:
    assert agent_of("agent:reviewer:subagent:1") == "reviewer"
    assert agent_of("clawspec:run") is None and agent_of("agent::x") is None


# --- faults -----------------------------------------------------------------------------------


def test_a_store_locked_by_a_writer_is_retried_then_reported(state: Path) -> None:
    """The copy is in rollback-journal mode: a writer's EXCLUSIVE lock keeps readers out."""
    slept: list[float] = []
    store = TrajectoryStore.of(state, "main", busy_timeout_s=0.01, retries=3, sleep=slept.append)
    writer = connect(state)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreLocked, match="stayed locked"):
            store.session_runs(hook_session("2026.9.6", "tj-write"))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert slept == [store.retry_s] * 3
    assert store.session_runs(hook_session("2026.9.6", "tj-write"))  # free again: it reads


def test_a_lock_released_during_the_retries_is_read(state: Path) -> None:
    writer = connect(state)
    writer.execute("BEGIN EXCLUSIVE")

    def release(_: float) -> None:
        if writer.in_transaction:
            writer.execute("ROLLBACK")

    store = TrajectoryStore.of(state, "main", busy_timeout_s=0.01, retries=3, sleep=release)
    try:
        (run,) = store.session_runs(hook_session("2026.9.6", "tj-write"))
    finally:
        writer.close()
    assert run.reply == "Wrote notes.md."


def test_a_writer_holding_reserved_does_not_block_and_its_uncommitted_rows_are_unseen(
    state: Path,
) -> None:
    key = hook_session("2026.9.6", "tj-write")
    store = TrajectoryStore.of(state, "main", busy_timeout_s=0.01, retries=0)
    (before,) = store.session_runs(key)
    writer = connect(state)
    writer.execute("BEGIN IMMEDIATE")  # RESERVED
    writer.execute(
        "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
        " '$.data.assistantTexts', json('[\"changed\"]')) WHERE session_id = ?",
        (before.session_id,),
    )
    try:
        (during,) = store.session_runs(key)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert during.reply == before.reply == "Wrote notes.md."


def _wal_writer(state: Path) -> sqlite3.Connection:
    writer = connect(state)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")  # keep what it writes in the WAL
    return writer


def _append_reply(writer: sqlite3.Connection, session_id: str, text: str) -> None:
    writer.execute(
        "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
        " '$.data.assistantTexts', json_array(?)) WHERE session_id = ?"
        " AND json_extract(event_json, '$.type') = 'model.completed'",
        (text, session_id),
    )


def test_committed_rows_still_in_the_wal_are_read(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    store = TrajectoryStore.of(state, "main")
    session_id = store.session_id(key)
    writer = _wal_writer(state)
    try:
        _append_reply(writer, session_id, "from the WAL")
        wal = store_path(state, "main").with_name("openclaw-agent.sqlite-wal")
        assert wal.stat().st_size > 0  # not checkpointed
        (run,) = store.session_runs(key)
    finally:
        writer.close()
    assert run.reply == "from the WAL"


def test_a_half_written_wal_frame_is_ignored(state: Path, tmp_path: Path) -> None:
    """A copy taken mid-write (the last frame cut): the last whole commit is what is read."""
    key = hook_session("2026.9.6", "tj-write")
    session_id = TrajectoryStore.of(state, "main").session_id(key)
    writer = _wal_writer(state)
    snapshot = tmp_path / "snapshot"
    try:
        _append_reply(writer, session_id, "first commit")
        _append_reply(writer, session_id, "second commit")
        shutil.copytree(state, snapshot)
    finally:
        writer.close()
    wal = store_path(snapshot, "main").with_name("openclaw-agent.sqlite-wal")
    with wal.open("r+b") as handle:
        handle.truncate(wal.stat().st_size - 100)  # the second commit's last frame, cut
    (run,) = TrajectoryStore.of(snapshot, "main").session_runs(key)
    assert run.reply == "first commit"


def test_a_file_that_is_not_a_database(state: Path) -> None:
    path = store_path(state, "main")
    path.write_bytes(b"not a database at all " * 400)
    with pytest.raises(StoreCorrupt, match=r"cannot be read .*not a database"):
        TrajectoryStore.of(state, "main").session_runs("agent:main:x")


def test_damaged_pages(state: Path) -> None:
    path = store_path(state, "main")
    with connect(state) as db:
        (page_size,) = db.execute("PRAGMA page_size").fetchone()
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'trajectory_runtime_events'"
        ).fetchone()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = b"\xa5" * page_size  # the table's root page
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt, match=r"damaged|malformed"):
        TrajectoryStore.of(state, "main").session_runs(hook_session("2026.9.6", "tj-write"))


def test_a_store_without_the_table(tmp_path: Path) -> None:
    path = store_path(tmp_path, "main")
    path.parent.mkdir(parents=True)
    sqlite3.connect(path).execute("CREATE TABLE other (x)").connection.close()
    with pytest.raises(StoreCorrupt, match="not an OpenClaw agent store"):
        TrajectoryStore.of(tmp_path, "main").run("r")


def test_an_event_that_is_not_json(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    store = TrajectoryStore.of(state, "main")
    with connect(state) as db:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = '{\"traceSchema\": tru'"
            " WHERE session_id = ? AND seq = 0",
            (store.session_id(key),),
        )
    with pytest.raises(StoreCorrupt, match=r"event 0\).*not JSON"):
        store.session_runs(key)


@pytest.mark.parametrize(
    ("path", "value", "shown"),
    [
        ("$.schemaVersion", "2", "schemaVersion 2"),
        ("$.schemaVersion", "'1'", "schemaVersion '1'"),
        ("$.traceSchema", "'other-trace'", "traceSchema 'other-trace'"),
    ],
)
def test_an_unknown_schema_version_names_both(
    state: Path, path: str, value: str, shown: str
) -> None:
    key = hook_session("2026.9.6", "tj-write")
    store = TrajectoryStore.of(state, "main")
    with connect(state) as db:
        db.execute(
            f"UPDATE trajectory_runtime_events SET event_json = json_set(event_json, ?, {value})"
            " WHERE session_id = ? AND seq = 5",
            (path, store.session_id(key)),
        )
    with pytest.raises(UnknownSchema) as caught:
        store.session_runs(key)
    message = str(caught.value)
    assert shown in message and "traceSchema" in message and "schemaVersion" in message
    assert "'openclaw-trajectory' version 1" in message
    assert caught.value.schema_version != 1 or caught.value.trace_schema != "openclaw-trajectory"


def test_an_event_of_version_1_with_fields_of_another_shape(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    store = TrajectoryStore.of(state, "main")
    with connect(state) as db:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
            " '$.data.usage.input', 'many') WHERE session_id = ?"
            " AND json_extract(event_json, '$.type') = 'model.completed'",
            (store.session_id(key),),
        )
    with pytest.raises(BadEvent, match=r"model.completed.*usage.input") as caught:
        store.session_runs(key)
    assert "many" not in str(caught.value)  # the value is not shown (it could be anything)


# --- bounded reads ----------------------------------------------------------------------------


def _grow(state: Path, key: str, kind: str, path: str, size: int) -> None:
    session_id = TrajectoryStore.of(state, "main").session_id(key)
    with connect(state) as db:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = json_set(event_json, ?,"
            " printf('%.*c', ?, 'x')) WHERE session_id = ?"
            " AND json_extract(event_json, '$.type') = ?",
            (path, size, session_id, kind),
        )


def test_a_huge_tool_call_is_cut_and_its_arguments_unknown(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    _grow(state, key, "tool.call", "$.data.args.content", 300_000)
    (run,) = TrajectoryStore.of(state, "main", max_event_bytes=64 * 1024).session_runs(key)
    (call,) = run.calls
    assert call.name == "write" and call.tool_call_id == "call_tj-write_0_0"
    assert call.args is None and not call.args_known
    assert call.note == f"arguments over {64 * 1024} bytes: not read"
    assert call.success is True and run.reply == "Wrote notes.md."
    # Within the default bound it is read whole.
    (whole,) = TrajectoryStore.of(state, "main").session_runs(key)
    assert len(whole.calls[0].args["content"]) == 300_000


def test_a_huge_model_snapshot_is_left_out_and_the_reply_still_read(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    _grow(state, key, "model.completed", "$.data.messagesSnapshot", 300_000)
    (run,) = TrajectoryStore.of(state, "main", max_event_bytes=64 * 1024).session_runs(key)
    assert run.reply == "Wrote notes.md." and run.usage is not None and run.cut == ()


def test_a_huge_reply_is_reported_cut_not_guessed(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    _grow(state, key, "model.completed", "$.data.assistantTexts[0]", 300_000)
    (run,) = TrajectoryStore.of(state, "main", max_event_bytes=64 * 1024).session_runs(key)
    assert run.reply is None and run.usage is None
    assert any("model.completed" in note and "65536 bytes" in note for note in run.cut)


def test_a_run_with_more_events_than_the_bound(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-loop")
    (run,) = TrajectoryStore.of(state, "main", max_run_events=6).session_runs(key)
    assert not run.complete and run.cut == ("more than 6 events: read the first ones",)
    assert len(run.calls) == 1  # events 4 and 5 are the first call and its result


# --- waiting for a record that is still being written ------------------------------------------


@pytest.fixture
def late_run(state: Path) -> Iterator[tuple[Path, str, list[tuple[Any, ...]]]]:
    """The write run with its last two events (trace.artifacts, session.ended) taken out."""
    key = hook_session("2026.9.6", "tj-write")
    session_id = TrajectoryStore.of(state, "main").session_id(key)
    with connect(state) as db:
        held = db.execute(
            "SELECT session_id, seq, run_id, event_json, created_at FROM trajectory_runtime_events"
            " WHERE session_id = ? ORDER BY seq DESC LIMIT 2",
            (session_id,),
        ).fetchall()
        db.execute(
            "DELETE FROM trajectory_runtime_events WHERE session_id = ? AND seq >= ?",
            (session_id, min(row[1] for row in held)),
        )
    yield state, key, held


def test_a_run_not_ended_yet_is_waited_for(late_run: tuple[Path, str, list[Any]]) -> None:
    state, key, held = late_run
    clock = FakeTime()
    store = TrajectoryStore.of(state, "main")
    reads: list[Trajectory] = []

    def read() -> Trajectory:
        run = store.hook_run(key)
        reads.append(run)
        if len(reads) == 3:  # the gateway writes the rest between the third and fourth read
            with connect(state) as db:
                db.executemany("INSERT INTO trajectory_runtime_events VALUES (?, ?, ?, ?, ?)", held)
        return run

    run = wait_for(read, timeout_s=60, poll_s=0.5, clock=clock.clock, sleep=clock.sleep)
    assert [r.complete for r in reads] == [False, False, False, True]
    assert reads[0].reply == "Wrote notes.md." and reads[0].final_status is None
    assert run.complete and run.final_status == "success"
    assert clock.pauses == [0.5, 0.5, 0.5]


def test_a_run_that_never_ends_is_an_error_at_the_deadline(
    late_run: tuple[Path, str, list[Any]],
) -> None:
    state, key, _ = late_run
    clock = FakeTime()
    store = TrajectoryStore.of(state, "main")
    with pytest.raises(RunNotRecorded, match="not complete after 5 s: the run has not ended"):
        wait_for(
            lambda: store.hook_run(key), timeout_s=5, poll_s=1, clock=clock.clock, sleep=clock.sleep
        )
    assert clock.pauses == [1] * 5


def test_a_run_not_there_at_all_is_waited_for_then_named(state: Path) -> None:
    clock = FakeTime()
    store = TrajectoryStore.of(state, "main")
    with pytest.raises(RunNotRecorded, match="no run 'chatcmpl_late'"):
        wait_for(
            lambda: store.run("chatcmpl_late"), timeout_s=2, clock=clock.clock, sleep=clock.sleep
        )
    assert clock.now == 2


def test_a_sub_agent_not_recorded_yet_is_pending_until_it_is(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-spawn")
    reader = TrajectoryReader(state)
    child_store = store_path(state, "reviewer")
    hidden = child_store.with_name("hidden.sqlite")
    child_store.rename(hidden)  # the child's agent has no store yet
    clock = FakeTime()

    def read() -> Trajectory:
        run = reader.hook_run("main", key)
        if run.pending_children and clock.now >= 1:
            hidden.rename(child_store)
        return run

    first = reader.hook_run("main", key)
    assert first.complete and not first.settled and first.children == ()
    assert [ref.agent for ref in first.pending_children] == ["reviewer"]
    run = wait_for(read, timeout_s=30, poll_s=1, clock=clock.clock, sleep=clock.sleep)
    assert run.settled and [c.reply for c in run.children] == ["Reviewed."]
    assert clock.pauses == [1, 1]


def test_a_store_replaced_between_lookups_is_opened_again(state: Path) -> None:
    """The connection is kept between lookups; a new file at the path (a new gateway state)
    is read, not the old one still open."""
    key = hook_session("2026.9.6", "tj-write")
    with TrajectoryStore.of(state, "main") as store:
        (before,) = store.session_runs(key)
        path = store_path(state, "main")
        replacement = path.with_name("replacement.sqlite")
        shutil.copyfile(path, replacement)
        with sqlite3.connect(replacement) as db:
            db.execute(
                "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
                " '$.data.assistantTexts', json('[\"replaced\"]')) WHERE session_id = ?"
                " AND json_extract(event_json, '$.type') = 'model.completed'",
                (before.session_id,),
            )
        db.close()
        replacement.replace(path)
        (after,) = store.session_runs(key)
    assert (before.reply, after.reply) == ("Wrote notes.md.", "replaced")


def _set_artifacts(state: Path, key: str, changes: str) -> None:
    """json_set `changes` (SQL arguments after event_json) on the run's trace.artifacts."""
    session_id = TrajectoryStore.of(state, "main").session_id(key)
    with connect(state) as db:
        db.execute(
            f"UPDATE trajectory_runtime_events SET event_json = json_set(event_json, {changes})"
            " WHERE session_id = ? AND json_extract(event_json, '$.type') = 'trace.artifacts'",
            (session_id,),
        )


@pytest.mark.parametrize("version", VERSIONS)
def test_messages_sent_through_the_telegram_channel(version: str) -> None:
    """Recorded through OpenClaw's Telegram channel and a fake Bot API on loopback: each
    message the Bot API took is recorded with the target as the model wrote it, prefixed with
    the channel (`telegram:@clawspec_updates`, although the Bot API was sent the channel's
    numeric id), and its text; through Tool Search on 2026.9.6, as the inner `message` call."""
    run = hook_run(version, "tj-send", "send")
    assert [(c.name, c.args["target"]) for c in run.calls] == [
        ("message", "123456789"),
        ("message", "@clawspec_updates"),
    ]
    assert run.sent_texts == ("Order 4521 is ready for pickup.", "Shipped: order 4521.")
    assert [(m.tool, m.provider, m.to, m.text, m.text_cut) for m in run.sent] == [
        ("message", "telegram", "telegram:123456789", "Order 4521 is ready for pickup.", None),
        ("message", "telegram", "telegram:@clawspec_updates", "Shipped: order 4521.", None),
    ]
    received = manifest(version)["stores"]["send"]["bot_api_sends"]
    assert [r["params"]["text"] for r in received[:2]] == list(run.sent_texts)
    assert [r["params"]["chat_id"] for r in received[:2]] == ["123456789", "-1000000001703"]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_send_the_channel_refused_is_not_recorded_as_sent(version: str) -> None:
    """The Bot API answered 400 "chat not found": the `message` call succeeded with status
    `delivery_queued` (the gateway owning the retry), and the run records no message sent."""
    run = hook_run(version, "tj-send-refused", "send")
    (call,) = run.calls
    assert call.success is True and call.result_text is not None
    assert '"delivered": false' in call.result_text and "chat not found" in call.result_text
    assert (run.sent_texts, run.sent, run.final_status) == ((), (), "success")
    received = manifest(version)["stores"]["send"]["bot_api_sends"]
    assert received[2]["params"] == {
        "chat_id": "1000404",
        "text": "Your order is delayed.",
        "parse_mode": "HTML",
    }


def test_sent_message_fields_as_openclaws_code_writes_them(state: Path) -> None:
    """Values no recording holds (another channel's target, a field of another type), set on
    a copy as OpenClaw's code writes them."""
    key = hook_session("2026.9.6", "tj-write")
    _set_artifacts(
        state,
        key,
        "'$.data.messagingToolSentTexts', json('[\"Deployed.\"]'),"
        ' \'$.data.messagingToolSentTargets\', json(\'[{"tool": "message",'
        ' "provider": "slack", "to": "channel:C1", "text": "Deployed.",'
        ' "accountId": "a"}, {"tool": "conversations_send", "to": 7}]\')',
    )
    (run,) = TrajectoryStore.of(state, "main").session_runs(key)
    assert run.sent_texts == ("Deployed.",)
    assert [(m.tool, m.provider, m.to, m.text) for m in run.sent] == [
        ("message", "slack", "channel:C1", "Deployed."),
        ("conversations_send", None, None, None),  # a value of another type is not guessed
    ]


@pytest.mark.parametrize(
    ("flag", "timed_out", "aborted"),
    [
        ("timedOutByRunBudget", True, False),
        ("idleTimedOut", True, False),
        ("externalAbort", False, True),
        ("aborted", False, True),
    ],
)
def test_time_out_and_abort_flags(state: Path, flag: str, timed_out: bool, aborted: bool) -> None:
    key = hook_session("2026.9.6", "tj-write")
    _set_artifacts(state, key, f"'$.data.{flag}', json('true'), '$.data.finalStatus', 'error'")
    (run,) = TrajectoryStore.of(state, "main").session_runs(key)
    assert (run.timed_out, run.aborted, run.final_status) == (timed_out, aborted, "error")


def test_the_reply_is_the_last_assistant_text(state: Path) -> None:
    key = hook_session("2026.9.6", "tj-write")
    session_id = TrajectoryStore.of(state, "main").session_id(key)
    with connect(state) as db:
        db.execute(
            "UPDATE trajectory_runtime_events SET event_json = json_set(event_json,"
            " '$.data.assistantTexts', json('[\"Working on it.\", \"Done: notes.md.\"]'))"
            " WHERE session_id = ? AND json_extract(event_json, '$.type') = 'model.completed'",
            (session_id,),
        )
    (run,) = TrajectoryStore.of(state, "main").session_runs(key)
    assert run.assistant_texts == ("Working on it.", "Done: notes.md.")
    assert run.reply == "Done: notes.md."


@pytest.mark.parametrize("version", VERSIONS)
def test_refusals_from_the_plugins_records_are_applied_to_a_run_and_its_sub_agents(
    version: str,
) -> None:
    """A plugin's block looks like a failed call in the record: the plugin's refusals (keyed
    by run id and call id, as clawspec.gateway.refusals gives them) mark it."""
    run = hook_run(version, "tj-spawn")
    (child,) = run.children
    (write,) = child.calls
    marked = run.with_refusals({(child.run_id, write.tool_call_id), ("other-run", "x")})
    assert [c.name for c in marked.calls] == ["sessions_spawn"]
    assert marked.children[0].calls == () and marked.children[0].tool_calls[0].refused
    assert run.with_refusals(set()) == run
