"""The log scoping on a chat run's lines (OpenClaw 2026.9.6, `/v1/chat/completions`).

`data/chat/openclaw.log` is a real gateway's log (debug level): a turn that called `write` in
session `agent:main:clawspec:abc123`, two conversations of plain turns, and a turn that spawned a
sub-agent (session `agent:main:clawspec:spawn1`), whose completion OpenClaw announced back into
that session as a run of its own (`announce:v1:…`).
"""

from __future__ import annotations

import threading
from pathlib import Path

from clawspec.gateway.logs.index import LogIndex
from tests.support.fake_time import FakeStop

LOG = Path(__file__).parent / "data" / "chat" / "openclaw.log"
WRITE_RUN = "chatcmpl_7c9b8b8d-ee71-4a6b-be66-079c1ae405fb"
SPAWN_RUN = "chatcmpl_94264b1c-7467-4699-b9f2-db79c2452a46"
CHILD_RUN = "a40dbc97-2eb5-41ed-bd29-29ba8bc8149c"
THINK_TURNS = (
    "chatcmpl_083f865d-50a2-46a7-84b0-208080de71d4",
    "chatcmpl_72a095d3-e0ec-4c0c-8fa8-47df2cfa3338",
)


def _index(run_ids: tuple[str, ...] = (), keys: tuple[str, ...] = ()) -> LogIndex:
    return LogIndex.build(LOG, 0, run_ids=run_ids, session_keys=keys)


def test_the_chat_id_finds_the_turn_s_tool_calls() -> None:
    index = _index((WRITE_RUN,))
    assert index.found and index.run_ids == {WRITE_RUN}
    assert [call.name for call in index.tool_calls] == ["write"]
    assert index.pending == []


def test_the_session_key_finds_it_too_in_either_form() -> None:
    for key in ("agent:main:clawspec:abc123", "clawspec:abc123"):
        index = _index(keys=(key,))
        assert index.run_ids == {WRITE_RUN}, key
        assert [call.name for call in index.tool_calls] == ["write"]


def test_the_chat_id_follows_the_sub_agent() -> None:
    index = _index((SPAWN_RUN,))
    assert index.run_ids == {SPAWN_RUN, CHILD_RUN}
    assert sorted(call.name for call in index.tool_calls) == ["sessions_spawn", "write"]
    assert index.subagents == ["main"] and index.pending == []


def test_the_session_key_takes_every_run_of_the_session_read() -> None:
    """Earlier turns and the announce run are the session's too: a turn's scope by key is only
    its own when the log is read from the turn's start."""
    index = _index((SPAWN_RUN,), ("agent:main:clawspec:spawn1",))
    assert any(run.startswith("announce:v1:") for run in index.run_ids)
    second_turn = _index((THINK_TURNS[1],), ("agent:main:clawspec:think1",))
    assert second_turn.run_ids == set(THINK_TURNS)
    assert _index((THINK_TURNS[1],)).run_ids == {THINK_TURNS[1]}


def _written_until(path: Path, marker: str) -> list[bytes]:
    """The log's lines up to and including the first holding `marker`, written to `path`;
    the lines after it are returned, for a test to write later."""
    lines = LOG.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if marker.encode() in line) + 1
    path.write_bytes(b"".join(lines[:cut]))
    return lines[cut:]


def test_a_turn_s_lines_written_after_its_reply_are_waited_for(tmp_path: Path) -> None:
    """No hook completion ends a chat turn: its reply can come before the gateway's log has
    the turn's tool lines, and only the run's end line says they are all in."""
    path = tmp_path / "openclaw.log"
    rest = _written_until(path, f"embedded run start: runId={WRITE_RUN}")
    flushed = threading.Event()

    def flush() -> None:
        with path.open("ab") as handle:
            handle.write(b"".join(rest))
        flushed.set()

    # The wait's clock stands still until the rest is written, so it cannot run out first.
    seconds = iter(range(1_000_000))
    timer = threading.Timer(0.3, flush)
    timer.start()
    index = LogIndex.build(
        path,
        0,
        run_ids=(WRITE_RUN,),
        wait_s=60,
        poll_interval_s=0.05,
        clock=lambda: float(next(seconds)) if flushed.is_set() else 0.0,
    )
    timer.join()
    assert index.waited_s < 60
    assert [call.name for call in index.tool_calls] == ["write"]
    assert index.pending == []


def test_a_turn_whose_end_never_came_is_pending(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.log"
    _written_until(path, f"embedded run agent start: runId={WRITE_RUN}")
    seconds = iter(range(1_000_000))
    index = LogIndex.build(
        path,
        0,
        run_ids=(WRITE_RUN,),
        wait_s=5,
        poll_interval_s=0.01,
        clock=lambda: float(next(seconds)),
    )
    assert index.found and index.tool_calls == []
    assert len(index.pending) == 1
    assert f"run {WRITE_RUN} (started at line 12) has no end line yet" == index.pending[0]


def test_a_run_openclaw_timed_out_ends_at_its_cleanup() -> None:
    """A timed-out run writes no `embedded run done` (OpenClaw 2026.9.6): its `run cleanup`
    line ends it, so a run named by id is not waited for in vain."""
    log = Path(__file__).parent / "fixtures" / "openclaw-run-timeout.log"
    waits = FakeStop()  # the wait's clock and its recorded pauses: no real time passes
    index = LogIndex.build(
        log,
        0,
        run_ids=("5a14bd78-85b8-491f-b305-9818c721d9f9",),
        wait_s=5,
        poll_interval_s=0.01,
        stop=waits,
        clock=waits.clock,
    )
    assert index.found and index.pending == []
    assert waits.pauses == []  # ended at its cleanup line, not waited for
