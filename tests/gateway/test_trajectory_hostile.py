"""The run record as OpenClaw bounds, redacts and damages it: reading what it really writes.

OpenClaw 2026.9.6 bounds a tool call's data before writing it (dist/runtime-*.mjs
`limitTrajectoryPayloadValue`: markers `{"truncated": true, "reason": "trajectory-…-limit"}`),
redacts secrets in it, and keeps only a marker as the data of an event over 256 KiB. The markers
here are the shapes its code writes (checked against a real gateway's store)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from clawspec.evidence.record import STATE_DIR_HINT
from clawspec.gateway.trajectory.calls import UNKNOWN_TOOL
from clawspec.gateway.trajectory.cuts import args_cuts, cut_detail
from clawspec.gateway.trajectory.errors import StoreCorrupt, StoreMissing
from clawspec.gateway.trajectory.layout import SETTING_HINT, store_path
from clawspec.gateway.trajectory.reader import TrajectoryReader, wait_for
from clawspec.gateway.trajectory.store import TrajectoryStore
from tests.assertions.test_trajectory_assertions import add_calls, edit_events, hook_line
from tests.assertions.test_trajectory_hostile import field_cut, items_cut, keys_cut
from tests.support.fake_time import FakeTime

DATA = Path(__file__).parent / "data" / "trajectory"


DEPTH = {"truncated": True, "reason": "trajectory-depth-limit", "limitDepth": 6}
EVENT = {
    "truncated": True,
    "originalBytes": 400_123,
    "limitBytes": 262144,
    "reason": "trajectory-event-size-limit",
    "droppedFields": ["toolCallId", "name", "args"],
}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    target = tmp_path / "state"
    shutil.copytree(DATA / "2026.9.6" / "default", target)
    return target


def _write_run(state: Path) -> tuple[TrajectoryStore, str, str]:
    line = hook_line("2026.9.6", "tj-write")
    return TrajectoryStore.of(state, "main"), line["sessionKey"], line["sessionId"]


def test_openclaws_markers_are_found_where_they_stand() -> None:
    args = {
        "path": "a.md",
        "content": field_cut(40_000),
        "meta": {"k": {"k": {"k": DEPTH}}},
        "wide": {
            "k0": 0,
            "_truncated": keys_cut(70),
        },
        "items": [1, items_cut(80)],
        "header": "Authorization: Bearer <redacted>",
        "blob": "[Malformed diagnostic JSON redacted]",
        "key": "key=sk-liv\u2026cdef done",
        "image": {"redacted": "<redacted>", "bytes": 12, "sha256": "ab"},
        "plain": "an ellipsis\u2026 in prose, *** and all",
    }
    cuts = {cut.where: cut for cut in args_cuts(args)}
    assert set(cuts) == {
        "content",
        "meta.k.k.k",
        "wide",
        "items",
        "header",
        "blob",
        "key",
        "image",
    }
    assert cuts["content"].detail == "cut at its 32,768-character limit (40,000 characters sent)"
    assert cuts["wide"].reason == "trajectory-object-size-limit"
    assert cuts["items"].detail == "cut at its limit of 64 items (80 items sent)"
    assert cuts["header"].reason == "redacted"
    assert cut_detail("[Malformed diagnostic JSON redacted]") == (
        'replaced by its placeholder "[Malformed diagnostic JSON redacted]"'
    )
    assert args_cuts({"path": "a.md", "content": "# Notes"}) == ()


def test_a_call_with_cut_arguments_keeps_what_is_known(state: Path) -> None:
    store, key, session = _write_run(state)
    add_calls(
        state,
        "main",
        session,
        [("write", {"path": "f.md", "content": field_cut(40_000)}, True, "ok")],
    )
    (run,) = store.session_runs(key)
    call = run.calls[0]
    assert call.args_known and call.args["path"] == "f.md"
    assert [(c.where, c.reason) for c in call.cuts] == [("content", "trajectory-field-size-limit")]
    assert run.calls[1].cuts == ()  # the recorded write, whole


def test_a_tool_call_cut_whole_is_a_call_of_an_unknown_tool_not_a_bad_event(state: Path) -> None:
    store, key, session = _write_run(state)
    add_calls(state, "main", session, [("HUGE", {}, True, "ok")])
    edit_events(
        state, "main", session, "tool.call", lambda d: dict(EVENT) if d["name"] == "HUGE" else d
    )
    edit_events(
        state, "main", session, "tool.result", lambda d: dict(EVENT) if d["name"] == "HUGE" else d
    )
    (run,) = store.session_runs(key)
    first = run.calls[0]
    assert (first.name, first.name_known, first.args_known) == (UNKNOWN_TOOL, False, False)
    assert "262,144-byte limit" in (first.note or "")
    assert run.calls[1].name == "write" and run.complete
    assert any(note.startswith("tool.result") and "cut by OpenClaw" in note for note in run.cut)


def test_a_store_whose_damage_reaches_sqlites_message_is_corrupt(state: Path) -> None:
    path = store_path(state, "main")
    data = bytearray(path.read_bytes())
    random.seed(1)
    for i in range(4096, len(data), 997):
        data[i] = random.randrange(256)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt, match="cannot be read"):
        TrajectoryReader(state).hook_run("main", hook_line("2026.9.6", "tj-write")["sessionKey"])


def test_a_run_over_the_event_bound_has_its_end_read_and_is_not_waited_for(state: Path) -> None:
    _, key, session = _write_run(state)
    add_calls(
        state, "main", session, [("read", {"path": f"{n}.md"}, True, "ok") for n in range(40)]
    )
    capped = TrajectoryStore.of(state, "main", max_run_events=30)
    (run,) = capped.session_runs(key)
    assert run.capped and not run.complete and run.has_ended and run.settled
    assert run.stop_reason == "stop" and run.reply == "Wrote notes.md." and run.usage is not None
    assert run.final_status == "success"
    assert run.cut == ("more than 30 events: read the first ones",)
    assert len(run.calls) < 40
    by_id = capped.run(run.run_id)
    assert by_id.capped and by_id.has_ended and by_id.reply == run.reply
    fake = FakeTime()
    read = wait_for(
        lambda: capped.run(run.run_id), timeout_s=30, clock=fake.clock, sleep=fake.sleep
    )
    assert read.capped and fake.pauses == []  # its end was read: nothing to wait for


def test_the_missing_store_hint_names_the_settings_the_assertions_name(tmp_path: Path) -> None:
    with pytest.raises(StoreMissing) as caught:
        TrajectoryReader(tmp_path).hook_run("main", "agent:main:cron:x")
    assert SETTING_HINT in str(caught.value)
    assert STATE_DIR_HINT.startswith(SETTING_HINT)
    assert "OPENCLAW_STATE_DIR, action input openclaw_state_dir" in SETTING_HINT
