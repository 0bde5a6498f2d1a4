"""Run record assertions on what OpenClaw really records of hostile runs: arguments it cut or
redacted, a call it cut whole, more events than ClawSpec reads, a damaged store, a wrong state
folder. None of them may pass or fail on what the record does not hold, and none may wait out
the scenario's timeout for a run that has ended (told by the waits they recorded on a fake clock,
not by timing them)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from clawspec.assertions.base import EvalContext, Status
from clawspec.config.settings import Settings
from clawspec.gateway.trajectory.layout import store_path
from tests.assertions.test_trajectory_assertions import (
    add_calls,
    check,
    context,
    edit_events,
    hook_line,
)
from tests.support.fake_time import FakeStop


def field_cut(chars: int) -> dict[str, Any]:
    """OpenClaw's marker for a string over 32,768 characters (limitTrajectoryPayloadValue)."""
    return {
        "truncated": True,
        "reason": "trajectory-field-size-limit",
        "originalChars": chars,
        "limitChars": 32768,
    }


def keys_cut(keys: int) -> dict[str, Any]:
    """OpenClaw's marker, under `_truncated`, for an object cut at its 64 keys."""
    return {
        "truncated": True,
        "reason": "trajectory-object-size-limit",
        "originalKeys": keys,
        "limitKeys": 64,
    }


def items_cut(items: int) -> dict[str, Any]:
    """OpenClaw's marker, as the last item, for a list cut at its 64 items."""
    return {
        "truncated": True,
        "reason": "trajectory-array-size-limit",
        "originalLength": items,
        "limitItems": 64,
    }


def _with_calls(tmp_path: Path, calls: list[tuple[str, Any, bool, str]]) -> EvalContext:
    ctx = context(tmp_path)
    add_calls(tmp_path / "state", "main", hook_line("2026.9.6", "tj-write")["sessionId"], calls)
    return ctx


def _write(tmp_path: Path, args: dict[str, Any]) -> EvalContext:
    return _with_calls(tmp_path, [("write", args, True, "ok")])


def _called_with(ctx: EvalContext, **args: Any) -> tuple[Status, str]:
    return check(ctx, {"type": "tool_called_with", "tool": "write", "args": args})


# --- tool_called_with ----------------------------------------------------------------------


def test_a_pattern_on_a_cut_string_is_no_false_pass(tmp_path: Path) -> None:
    ctx = _write(tmp_path, {"path": "f.md", "content": field_cut(40_000)})
    status, message = _called_with(ctx, content={"matches": "truncated"})
    assert status is Status.ERROR, message
    assert (
        "OpenClaw recorded the argument 'content' cut at its 32,768-character limit "
        "(40,000 characters sent): it cannot be compared"
    ) in message


def test_a_cut_string_is_no_false_fail_but_what_is_known_still_fails(tmp_path: Path) -> None:
    ctx = _write(tmp_path, {"path": "f.md", "content": field_cut(40_000)})
    status, message = _called_with(ctx, path="f.md", content={"matches": "^A+$"})
    assert status is Status.ERROR and "call 1 of run" in message, message
    # The path is recorded whole: a call of another path cannot match, cut or not.
    status, message = _called_with(ctx, path="other.md", content={"matches": "^A+$"})
    assert status is Status.FAIL, message
    # Another call matching whole still passes.
    assert _called_with(ctx, path="notes.md")[0] is Status.PASS


@pytest.mark.parametrize(
    ("args", "expected", "status"),
    [
        # a value 6 levels deep
        (
            {"meta": {"k": {"k": {"k": {"truncated": True, "reason": "trajectory-depth-limit"}}}}},
            {"meta": {"k": {"k": {"k": "z"}}}},
            Status.ERROR,
        ),
        # an object cut at 64 keys: the expected key may be among those left out
        (
            {
                "k0": 0,
                "_truncated": keys_cut(70),
            },
            {"k69": 69},
            Status.ERROR,
        ),
        # a list cut at 64 items: its length is recorded, so a list of another length fails
        (
            {"items": [*range(64), items_cut(80)]},
            {"items": list(range(3))},
            Status.FAIL,
        ),
        (
            {"items": [*range(64), items_cut(80)]},
            {"items": list(range(80))},
            Status.ERROR,
        ),
        # as a real gateway records 66 keys: the first 64, the marker dropped by its redaction
        ({f"k{n}": n for n in range(64)}, {"k65": 65}, Status.ERROR),
        ({f"k{n}": n for n in range(64)}, {"k65": 65, "k1": 2}, Status.FAIL),
        ({f"k{n}": n for n in range(63)}, {"k65": 65}, Status.FAIL),
        ({"items": list(range(64))}, {"items": list(range(70))}, Status.ERROR),
        ({"items": list(range(64))}, {"items": list(range(3))}, Status.FAIL),
        # secrets and text OpenClaw redacted, credential keys it left out
        ({"command": "curl -H 'Authorization: <redacted>'"}, {"command": "curl"}, Status.ERROR),
        ({"content": "[Malformed diagnostic JSON redacted]"}, {"content": "x"}, Status.ERROR),
        ({"path": "s.md"}, {"path": "s.md", "password": "hunter2"}, Status.ERROR),
        ({"path": "s.md"}, {"path": "s.md", "mode": "append"}, Status.FAIL),
    ],
)
def test_parts_openclaw_cut_or_redacted_are_not_compared(
    tmp_path: Path, args: dict[str, Any], expected: dict[str, Any], status: Status
) -> None:
    ctx = _with_calls(tmp_path, [("probe", args, True, "ok")])
    got, message = check(ctx, {"type": "tool_called_with", "tool": "probe", "args": expected})
    assert got is status, message
    if status is Status.ERROR:
        assert "OpenClaw recorded" in message and "cannot be compared" in message


# --- no_tool_loop, tool_call_count ---------------------------------------------------------


def test_cut_arguments_do_not_make_a_loop(tmp_path: Path) -> None:
    """Four writes of different 40,000-character contents: recorded alike, not the same call."""
    ctx = _with_calls(
        tmp_path, [("write", {"path": "l.md", "content": field_cut(40_000)}, True, "ok")] * 4
    )
    status, message = check(ctx, {"type": "no_tool_loop", "max_repeats": 3})
    assert status is Status.ERROR, message
    assert "calls 1 to 4 could be one call repeated 4 times" in message
    assert "argument 'content' cut at its 32,768-character limit" in message
    # What OpenClaw did record tells them apart: never a loop, never in doubt.
    ctx = _with_calls(
        tmp_path / "sizes",
        [
            ("write", {"path": "l.md", "content": field_cut(40_000 + n)}, True, "ok")
            for n in range(4)
        ],
    )
    assert check(ctx, {"type": "no_tool_loop", "max_repeats": 3})[0] is Status.PASS
    # The count does not depend on the arguments.
    count = {"type": "tool_call_count", "tool": "write", "min": 5, "max": 5}
    assert check(ctx, count)[0] is Status.PASS


def _nameless(tmp_path: Path) -> EvalContext:
    """A run with a tool.call OpenClaw cut whole (over 256 KiB): no id, name or arguments."""
    ctx = _with_calls(tmp_path, [("HUGE", {}, True, "ok")])
    cut = {
        "truncated": True,
        "originalBytes": 400_000,
        "limitBytes": 262144,
        "reason": "trajectory-event-size-limit",
        "droppedFields": ["toolCallId", "name", "args"],
    }
    session = hook_line("2026.9.6", "tj-write")["sessionId"]
    edit_events(
        tmp_path / "state",
        "main",
        session,
        "tool.call",
        lambda d: cut if d["name"] == "HUGE" else d,
    )
    return ctx


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        ({"type": "tool_call_count", "tool": "write", "max": 1}, Status.ERROR),
        ({"type": "tool_call_count", "tool": "write", "min": 2}, Status.ERROR),
        ({"type": "tool_call_count", "tool": "write", "min": 1}, Status.PASS),
        ({"type": "tool_call_count", "tool": "write", "max": 0}, Status.FAIL),
        ({"type": "tool_called_with", "tool": "exec", "args": {"cmd": "ls"}}, Status.ERROR),
        ({"type": "tool_called_with", "tool": "write", "args": {"path": "notes.md"}}, Status.PASS),
        ({"type": "no_tool_loop", "max_repeats": 1}, Status.ERROR),
        ({"type": "no_tool_loop"}, Status.PASS),
        ({"type": "run_completed"}, Status.PASS),
    ],
)
def test_a_call_openclaw_cut_whole_is_a_call_of_an_unknown_tool(
    tmp_path: Path, assertion: dict[str, Any], status: Status
) -> None:
    got, message = check(_nameless(tmp_path), assertion)
    assert got is status, message
    if status is Status.ERROR and assertion["type"] != "no_tool_loop":
        assert "without the tool's name" in message


# --- more events than ClawSpec reads -------------------------------------------------------


@pytest.fixture
def long_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 60.0)


def _waits(ctx: EvalContext) -> FakeStop:
    """Give `ctx` a fake clock and a stop that records its waits instead of waiting."""
    fake = FakeStop()
    ctx.stop, ctx.clock = fake, fake.clock
    return fake


def test_a_run_over_the_event_bound_is_judged_on_what_decides_it(
    tmp_path: Path, long_wait: None
) -> None:
    ctx = _with_calls(tmp_path, [("read", {"path": "notes.md"}, True, "ok")] * 2600)
    waits = _waits(ctx)
    status, message = check(ctx, {"type": "no_tool_loop"})
    assert status is Status.FAIL and "in a row" in message, message
    status, message = check(ctx, {"type": "tool_call_count", "tool": "read", "max": 10})
    assert status is Status.FAIL, message
    assert check(ctx, {"type": "run_completed"})[0] is Status.PASS
    assert check(ctx, {"type": "message_not_sent"})[0] is Status.PASS
    assert waits.pauses == []  # the run has ended: nothing was waited for


def test_a_run_over_the_event_bound_is_an_error_where_the_rest_could_change_it(
    tmp_path: Path, long_wait: None
) -> None:
    calls = [("read", {"path": f"{n}.md"}, True, "ok") for n in range(2600)]
    ctx = _with_calls(tmp_path, calls)
    waits = _waits(ctx)
    status, message = check(ctx, {"type": "no_tool_loop"})
    assert status is Status.ERROR, message
    assert "more than 5000 events: read the first ones" in message
    status, message = check(ctx, {"type": "tool_call_count", "tool": "read", "max": 3000})
    assert status is Status.ERROR and "calls after those were not read" in message
    assert check(ctx, {"type": "tool_call_count", "tool": "read", "min": 10})[0] is Status.PASS
    read = {"type": "tool_called_with", "tool": "read", "args": {"path": "7.md"}}
    assert check(ctx, read)[0] is Status.PASS
    read = {"type": "tool_called_with", "tool": "read", "args": {"path": "2599.md"}}
    assert check(ctx, read)[0] is Status.ERROR
    assert waits.pauses == []  # the run has ended: nothing was waited for


# --- a damaged store, a wrong state folder -------------------------------------------------


def test_a_store_whose_damage_reaches_sqlites_message_is_an_error(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    path = store_path(tmp_path / "state", "main")
    data = bytearray(path.read_bytes())
    random.seed(1)
    for i in range(4096, len(data), 997):
        data[i] = random.randrange(256)
    path.write_bytes(bytes(data))
    status, message = check(ctx, {"type": "run_completed"})
    assert status is Status.ERROR and "the store cannot be read" in message, message


@pytest.mark.parametrize("folder", ["no-such-folder", "empty"])
def test_a_wrong_state_folder_is_an_error_at_once(
    tmp_path: Path, folder: str, long_wait: None
) -> None:
    ctx = context(tmp_path)
    wrong = tmp_path / folder
    if folder == "empty":
        wrong.mkdir()
    ctx = dataclasses.replace(ctx, settings=Settings(openclaw_state_dir=str(wrong)))
    waits = _waits(ctx)
    status, message = check(ctx, {"type": "run_completed"})
    assert waits.pauses == []  # said at once, not after the evidence wait
    assert status is Status.ERROR and str(wrong) in message
    assert "CLAWSPEC_OPENCLAW_STATE_DIR or OPENCLAW_STATE_DIR" in message
