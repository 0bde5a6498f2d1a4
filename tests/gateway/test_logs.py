"""The OpenClaw log adapter on recorded real gateway logs (tests/gateway/fixtures)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from clawspec.gateway.logs.index import LogIndex
from clawspec.gateway.plugin_records import TokenUsage, read_plugin_records

FIXTURES = Path(__file__).parent / "fixtures"
REAL_LOG = FIXTURES / "openclaw-real.log"
REAL_PLUGIN = FIXTURES / "plugin-real.jsonl"
LEGACY_LOG = FIXTURES / "log-legacy.log"
GRANDCHILD = "99999999-0000-4000-8000-000000000001"

# Hook run ids the gateway returned for the recorded runs (session keys hook:clawspec:<name>).
HOOK_RUN = {
    "w1": "d2817338-ee65-4634-a81a-ae6a811a050a",
    "s1": "11376b34-406b-4790-9499-7c74083581c4",
    "ca": "b35307cd-b907-429e-a665-95b07b47e9d4",
    "cb": "c34091af-cff7-4d18-80b7-d4e65e617004",
    "f1": "90f4cc09-7ca4-4676-a852-f4eff1e6e985",
}
EMBEDDED = {
    "w1": "186d41e3-3bb0-43b1-80fa-bf11d976c9f9",
    "s1": "41cbbf7e-b525-4df4-83be-081d185f4fae",
    "s1-child": "64637209-78ef-4f82-a629-c1a1dcc8c451",
    "ca": "8deed922-0f5d-48e8-a9b8-9fd393006af0",
    "cb": "2bf4368a-5523-4335-a2cf-f752f4926e0b",
    "f1": "90053e47-1cef-4acf-a992-848f45febc8b",
    "heartbeat": "9f800862-1709-4a6f-a775-6bc2c44145f7",
}


def index_for(name: str, path: Path = REAL_LOG, offset: int = 0, **kwargs) -> LogIndex:
    """Index the recorded run `name` the way the assertions do: by hook run id only."""
    return LogIndex.build(path, offset, run_ids=["clawspec0000001", HOOK_RUN[name]], **kwargs)


def real_lines() -> list[bytes]:
    return REAL_LOG.read_bytes().splitlines(keepends=True)


def first_line_of(run: str, lines: list[bytes]) -> int:
    """Index of the first line that names the run's session (where its slice begins)."""
    first_embedded = next(i for i, raw in enumerate(lines) if EMBEDDED[run].encode() in raw)
    trace = json.loads(lines[first_embedded])["traceId"].encode()
    return next(i for i, raw in enumerate(lines) if trace in raw)


def test_run_found_through_hook_session_and_its_tool_calls_listed() -> None:
    index = index_for("w1")
    assert index.exists and index.found and index.hook_seen
    assert index.run_ids == {EMBEDDED["w1"]}
    assert [(c.name, c.run_id, c.tool_call_id) for c in index.tool_calls] == [
        ("write", EMBEDDED["w1"], "call_write-file_0_0")
    ]
    assert index.tool_calls[0].time == "2026-11-22T01:43:34.443+00:00"
    assert index.subagents == []


def test_run_found_by_the_session_key_clawspec_sent() -> None:
    index = LogIndex.build(REAL_LOG, run_ids=["unknown-id"], session_keys=["hook:clawspec:w1"])
    assert index.found and index.run_ids == {EMBEDDED["w1"]}


def test_interleaved_concurrent_runs_never_see_each_others_tools() -> None:
    a, b = index_for("ca"), index_for("cb")
    assert [(c.name, c.tool_call_id) for c in a.tool_calls] == [("write", "call_slow-a_0_0")]
    assert [(c.name, c.tool_call_id) for c in b.tool_calls] == [("write", "call_slow-b_0_0")]
    assert a.run_ids.isdisjoint(b.run_ids) and a.session_ids.isdisjoint(b.session_ids)
    a_text = "\n".join(text for _, text in a.lines())
    assert EMBEDDED["ca"] in a_text and EMBEDDED["cb"] not in a_text
    assert "call_slow-b" not in a_text


def test_delegation_includes_the_sub_agent_run_and_its_tools() -> None:
    index = index_for("s1")
    assert index.run_ids == {EMBEDDED["s1"], EMBEDDED["s1-child"]}
    assert [(c.name, c.run_id) for c in index.tool_calls] == [
        ("sessions_spawn", EMBEDDED["s1"]),
        ("write", EMBEDDED["s1-child"]),
    ]
    assert index.subagents == ["main"]
    assert "agent:main:subagent:a30f8849-a0cd-45db-a05d-14a775568399" in index.session_keys


def test_heartbeat_run_sharing_the_hook_trace_is_not_in_scope() -> None:
    index = index_for("f1")
    assert EMBEDDED["heartbeat"] not in index.run_ids
    assert not any(EMBEDDED["heartbeat"] in text for _, text in index.lines())
    assert index.errors and "HTTP 500" in index.errors[0]


def _spawned_grandchild(tmp_path: Path) -> Path:
    """The real delegation, plus a grandchild the child spawned (same line shapes)."""
    lines = real_lines()
    child_start = next(
        json.loads(raw)
        for raw in lines
        if b"embedded run start: runId=" + EMBEDDED["s1-child"].encode() in raw
    )
    trace, child_span = child_start["traceId"], child_start["spanId"]

    def line(subsystem: str, message: str, span: str, parent: str | None) -> bytes:
        data = {"0": json.dumps({"subsystem": subsystem}), "1": message,
                "time": "2026-11-22T01:43:38.000+00:00", "message": message,
                "traceId": trace, "spanId": span}  # fmt: skip
        if parent:
            data["parentSpanId"] = parent
        return (json.dumps(data) + "\n").encode()

    gc_run, gc_session = GRANDCHILD, "99999999-0000-4000-8000-0000000000aa"
    child, gc_span = EMBEDDED["s1-child"], "gcspan0000000001"
    run = "agent/embedded"
    extra = [
        line(run, f"embedded run tool start: runId={child} tool=sessions_spawn", child_span, "x"),
        line(run, f"embedded run start: runId={gc_run} sessionId={gc_session} provider=f", gc_span,
             child_span),
        line("diagnostic", f"session state: sessionId={gc_session} "
             "sessionKey=agent:helper:subagent:1234 prev=idle", gc_span, child_span),
        line(run, f"embedded run tool start: runId={gc_run} tool=read toolCallId=c3", gc_span,
             child_span),
        line(run, f"embedded run done: runId={gc_run} sessionId={gc_session}", child_span, None),
    ]  # fmt: skip
    path = tmp_path / "openclaw.log"
    path.write_bytes(b"".join(lines + extra))
    return path


def test_delegation_scoping_is_recursive(tmp_path: Path) -> None:
    index = index_for("s1", _spawned_grandchild(tmp_path))
    assert GRANDCHILD in index.run_ids
    assert index.subagents == ["main", "helper"]
    assert [c.name for c in index.tool_calls] == [
        "sessions_spawn",
        "write",
        "sessions_spawn",
        "read",
    ]
    # the grandchild is not in the scope of another run of the same log
    assert (
        "99999999-0000-4000-8000-000000000001"
        not in index_for("w1", tmp_path / "openclaw.log").run_ids
    )


def s1_hook_and_child_done(lines: list[bytes]) -> tuple[int, int]:
    """Indexes of run s1's hook completion line and of its sub-agent's last line."""
    hook = next(i for i, raw in enumerate(lines) if HOOK_RUN["s1"].encode() in raw)
    done = b"embedded run done: runId=" + EMBEDDED["s1-child"].encode()
    return hook, next(i for i, raw in enumerate(lines) if done in raw)


def test_offset_ignores_lines_before_the_run_started(tmp_path: Path) -> None:
    lines = real_lines()
    start = first_line_of("ca", lines)
    offset = sum(len(raw) for raw in lines[:start])
    assert not index_for("w1", REAL_LOG, offset).found  # w1 ran before the offset
    index = index_for("ca", REAL_LOG, offset)
    assert index.found and index.start_offset == offset
    assert index.lines()[0][0] >= 1 and index.lines_read == len(lines) - start


@pytest.mark.parametrize("archive_name", ["openclaw.1.log", "openclaw.log.1"])
def test_rotation_mid_run_reads_archive_tail_then_new_file(
    tmp_path: Path, archive_name: str
) -> None:
    lines = real_lines()
    start = first_line_of("s1", lines)
    spawn = next(i for i, raw in enumerate(lines) if b"tool=sessions_spawn" in raw)
    offset = sum(len(raw) for raw in lines[:start])
    # the file rotated between the spawn and the sub-agent's run: both halves are needed
    (tmp_path / archive_name).write_bytes(b"".join(lines[: spawn + 1]))
    (tmp_path / "openclaw.log").write_bytes(b"".join(lines[spawn + 1 :]))
    index = index_for("s1", tmp_path / "openclaw.log", offset, started_at=time.time() - 60)
    assert [p.name for p, _ in index.segments] == [archive_name, "openclaw.log"]
    assert index.segments[0][1] == offset
    assert [c.name for c in index.tool_calls] == ["sessions_spawn", "write"]
    assert index.subagents == ["main"]


def test_rotation_detected_when_file_is_smaller_than_offset(tmp_path: Path) -> None:
    lines = real_lines()
    start = first_line_of("s1", lines)
    spawn = next(i for i, raw in enumerate(lines) if b"tool=sessions_spawn" in raw)
    offset = sum(len(raw) for raw in lines[:start])
    archive = tmp_path / "openclaw.1.log"
    archive.write_bytes(b"".join(lines[: spawn + 1]))
    os.utime(archive, (1_000_000, 1_000_000))  # old mtime: only the size says it rotated
    (tmp_path / "openclaw.log").write_bytes(b"".join(lines[spawn + 1 : spawn + 60]))
    assert (tmp_path / "openclaw.log").stat().st_size < offset
    index = index_for("s1", tmp_path / "openclaw.log", offset)
    assert [p.name for p, _ in index.segments] == ["openclaw.1.log", "openclaw.log"]
    assert index.found and index.subagents == ["main"]


def test_no_rotation_when_archive_is_older_than_the_run(tmp_path: Path) -> None:
    archive = tmp_path / "openclaw.1.log"
    archive.write_bytes(b'{"message":"old"}\n')
    os.utime(archive, (1_000_000, 1_000_000))
    (tmp_path / "openclaw.log").write_bytes(REAL_LOG.read_bytes())
    index = index_for("w1", tmp_path / "openclaw.log", 10, started_at=2_000_000)
    assert [p.name for p, _ in index.segments] == ["openclaw.log"]


def test_truncated_last_line_is_tolerated(tmp_path: Path) -> None:
    lines = real_lines()
    hook = next(i for i, raw in enumerate(lines) if HOOK_RUN["w1"].encode() in raw)
    path = tmp_path / "openclaw.log"
    path.write_bytes(b"".join(lines[: hook + 1]) + lines[hook + 1][:57])
    index = index_for("w1", path)
    assert index.found and [c.name for c in index.tool_calls] == ["write"]
    assert index.lines_read == hook + 2


def test_non_utf8_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    lines = real_lines()
    tool = next(i for i, raw in enumerate(lines) if b"tool=write toolCallId=call_write-file" in raw)
    lines[tool] = lines[tool].replace(
        b"toolCallId=call_write-file_0_0", b"toolCallId=call_\xff\xfe_0_0"
    )
    lines.insert(tool, b"\xc3\x28 not json, not utf-8\n")
    path = tmp_path / "openclaw.log"
    path.write_bytes(b"".join(lines))
    index = index_for("w1", path)
    assert [(c.name, c.tool_call_id) for c in index.tool_calls] == [
        ("write", "call_\ufffd\ufffd_0_0")
    ]
    assert any("\ufffd\ufffd" in text for _, text in index.lines())


def test_legacy_key_value_lines_scoped_by_run_id() -> None:
    index = LogIndex.build(LEGACY_LOG, run_ids=["abc", "gateway-id"])
    assert index.found
    assert [(c.name, c.line, c.time) for c in index.tool_calls] == [
        ("resend.send", 2, "2026-01-01T00:00:01Z"),
        ("memory.search", 5, "2026-01-01T00:00:03Z"),
    ]
    assert index.subagents == ["agents-marketing-brand"]
    assert index.legacy_usage == TokenUsage(input=2000, output=450, total=2450, calls=2)
    assert [n for n, _ in index.lines()] == [1, 2, 4, 5, 6, 8, 9, 11]


def test_legacy_run_found_by_gateway_run_id() -> None:
    index = LogIndex.build(LEGACY_LOG, run_ids=["nope", "zzz"])
    assert [c.name for c in index.tool_calls] == ["exec"]
    assert index.subagents == ["agents-sales"]


def test_missing_log_and_unknown_run() -> None:
    missing = LogIndex.build(FIXTURES / "no-such.log", run_ids=["x"])
    assert not missing.exists and not missing.found
    unknown = LogIndex.build(REAL_LOG, run_ids=["x"], session_keys=["hook:clawspec:nope"])
    assert unknown.exists and not unknown.found and unknown.tool_calls == []


def test_hook_completion_line_alone_does_not_count_as_found(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.log"
    path.write_bytes(b"".join(raw for raw in real_lines() if b"gateway/hooks" in raw))
    index = index_for("w1", path)
    assert index.hook_seen and not index.found


def test_waits_for_lines_flushed_after_the_hook_answer(tmp_path: Path) -> None:
    lines = real_lines()
    hook, child_done = s1_hook_and_child_done(lines)
    path = tmp_path / "openclaw.log"
    path.write_bytes(b"".join(lines[:hook]))  # neither the hook line nor the sub-agent yet

    flushed = threading.Event()

    def flush() -> None:
        with path.open("ab") as handle:
            handle.write(b"".join(lines[hook : child_done + 1]))
        flushed.set()

    # The wait's clock: one second per reading, and frozen until the lines were flushed (by
    # another thread, as the gateway does), so the wait cannot run out before they are there.
    seconds = iter(range(1_000_000))

    def clock() -> float:
        return float(next(seconds)) if flushed.is_set() else 0.0

    timer = threading.Timer(0.3, flush)
    timer.start()
    index = index_for("s1", path, wait_s=60, poll_interval_s=0.05, clock=clock)
    timer.join()
    assert index.waited_s < 60  # it stopped when the lines came, not at the end of its budget
    assert index.subagents == ["main"]
    assert [c.name for c in index.tool_calls] == ["sessions_spawn", "write"]


def test_wait_ends_early_on_stop() -> None:
    stop = threading.Event()
    stop.set()
    seconds = iter(range(1_000_000))  # one second per reading of the wait's clock
    index = LogIndex.build(
        REAL_LOG,
        run_ids=["x"],
        wait_s=10,
        poll_interval_s=1,
        stop=stop,
        clock=lambda: float(next(seconds)),
    )
    assert index.waited_s < 10 and not index.found  # not the whole budget


def test_plugin_usage_sums_the_run_and_its_sub_agents() -> None:
    records = read_plugin_records(REAL_PLUGIN)
    index = index_for("s1")
    assert index.usage_from_plugin(records) == TokenUsage(1710, 58, 1768, 4)
    assert index.plugin_settled(records)
    assert index_for("w1").usage_from_plugin(records) == TokenUsage(2100, 57, 2157, 2)


def test_plugin_usage_excludes_heartbeat_run_sharing_the_trace() -> None:
    records = read_plugin_records(REAL_PLUGIN)
    # 8 failed calls with zero tokens; the heartbeat's 110 tokens are not the run's
    assert index_for("f1").usage_from_plugin(records) == TokenUsage(0, 0, 0, 8)


def test_plugin_not_settled_while_a_harness_run_is_open() -> None:
    records = read_plugin_records(REAL_PLUGIN)
    cut = max(
        i for i, r in enumerate(records) if r.kind == "harness" and r.run_id == EMBEDDED["s1-child"]
    )
    assert not index_for("s1").plugin_settled(records[:cut])


def test_lines_split_at_line_feeds_only_like_reading_the_file(tmp_path: Path) -> None:
    """The slice is read in one call and split in C: a carriage return alone does not end a
    line (CRLF lines and a bare CR inside a line count as iterating the file does)."""
    path = tmp_path / "run.log"
    path.write_bytes(
        b"t0 run_id=abc tool=a\r\n"
        b"t1 run_id=abc note=x\ry tool=b\n"
        b"t2 run_id=zzz tool=c\n"
        b"t3 run_id=abc tool=d"
    )
    index = LogIndex.build(path, run_ids=["abc"])
    with path.open("rb") as handle:
        assert index.lines_read == len(list(handle)) == 4
    assert [(c.name, c.line) for c in index.tool_calls] == [("a", 1), ("b", 2), ("d", 4)]
    assert [n for n, _ in index.lines()] == [1, 2, 4]


def test_a_line_half_written_at_a_poll_is_read_whole_at_the_next(tmp_path: Path) -> None:
    lines = real_lines()
    hook, child_done = s1_hook_and_child_done(lines)
    path = tmp_path / "openclaw.log"
    path.write_bytes(b"".join(lines[:hook]) + lines[hook][:40])  # the hook line cut short

    def flush() -> None:
        with path.open("ab") as handle:
            handle.write(lines[hook][40:] + b"".join(lines[hook + 1 : child_done + 1]))

    timer = threading.Timer(0.3, flush)
    timer.start()
    index = index_for("s1", path, wait_s=5, poll_interval_s=0.05)
    timer.join()
    assert index.hook_seen and index.lines_read == child_done + 1
    assert [c.name for c in index.tool_calls] == ["sessions_spawn", "write"]
