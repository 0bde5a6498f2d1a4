"""Texts OpenClaw kept only as its marker: the record is read, the text is not known.

OpenClaw 2026.9.6 writes a string over 32,768 characters as `{"truncated": true, "reason":
"trajectory-field-size-limit", "originalChars": …, "limitChars": 32768}` wherever it stands; a
reply of 40,004 characters on the real gateway (/v1 chat, scripted provider) left that marker as
`model.completed`'s and `trace.artifacts`' `assistantTexts[0]` and as the reply's text in the
`messagesSnapshot`. These runs are the recorded tj-write run with its events edited that way.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.trajectory.errors import BadEvent
from clawspec.gateway.trajectory.reader import TrajectoryReader
from clawspec.gateway.trajectory.values import SentMessage, TextCut, Trajectory
from tests.assertions.test_trajectory_assertions import DATA, edit_events, hook_line
from tests.assertions.test_trajectory_hostile import field_cut

CUT = TextCut(
    "trajectory-field-size-limit", "40,004 characters, over its trajectory limit of 32,768"
)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    target = tmp_path / "state"
    shutil.copytree(DATA / "2026.9.6" / "default", target)
    return target


def cut_reply(state: Path, texts: list[Any]) -> None:
    """Set the run's assistantTexts as OpenClaw writes them, in both events that carry them,
    and the reply's text in model.completed's message snapshot."""
    session = hook_line("2026.9.6", "tj-write")["sessionId"]

    def completed(data: dict[str, Any]) -> dict[str, Any]:
        snapshot = data["messagesSnapshot"]
        if texts:
            snapshot[-1]["content"][0]["text"] = texts[-1]
        return {**data, "assistantTexts": texts, "messagesSnapshot": snapshot}

    edit_events(state, "main", session, "model.completed", completed)
    edit_events(
        state, "main", session, "trace.artifacts", lambda data: {**data, "assistantTexts": texts}
    )


def read(state: Path) -> Trajectory:
    return TrajectoryReader(state).hook_run("main", hook_line("2026.9.6", "tj-write")["sessionKey"])


def test_a_reply_kept_only_as_its_marker_is_not_known_and_the_rest_is_read(state: Path) -> None:
    whole = read(state)
    cut_reply(state, [field_cut(40_004)])
    run = read(state)
    assert (run.reply, run.reply_cut, run.assistant_texts) == (None, CUT, (None,))
    # Everything else is as recorded.
    assert run.usage == whole.usage and run.usage is not None
    assert (run.stop_reason, run.final_status, run.complete) == ("stop", "success", True)
    assert [(c.name, c.args) for c in run.calls] == [(c.name, c.args) for c in whole.calls]
    assert run.prompt == whole.prompt and run.prompt_cut is None


def test_an_earlier_text_is_never_taken_for_a_cut_reply(state: Path) -> None:
    cut_reply(state, ["Working on it.", field_cut(40_004)])
    run = read(state)
    assert run.assistant_texts == ("Working on it.", None)
    assert (run.reply, run.reply_cut) == (None, CUT)


def test_a_cut_earlier_text_leaves_the_reply_whole(state: Path) -> None:
    cut_reply(state, [field_cut(33_000), "Done."])
    run = read(state)
    assert (run.reply, run.reply_cut, run.assistant_texts) == ("Done.", None, (None, "Done."))


def test_a_marker_without_its_sizes_still_says_what_it_is(state: Path) -> None:
    cut_reply(state, [{"truncated": True, "reason": "trajectory-field-size-limit"}])
    run = read(state)
    assert run.reply_cut == TextCut("trajectory-field-size-limit", "over its trajectory limit of ?")


def test_a_prompt_kept_only_as_its_marker(state: Path) -> None:
    session = hook_line("2026.9.6", "tj-write")["sessionId"]
    edit_events(
        state,
        "main",
        session,
        "prompt.submitted",
        lambda data: {**data, "prompt": field_cut(50_000)},
    )
    run = read(state)
    assert run.prompt is None
    assert run.prompt_cut == TextCut(
        "trajectory-field-size-limit", "50,000 characters, over its trajectory limit of 32,768"
    )
    assert run.reply == "Wrote notes.md."


def test_messages_sent_whose_texts_were_kept_only_as_markers(state: Path) -> None:
    """One message to a target, whose text OpenClaw cut in both lists, and one cut text sent
    without a target: both are messages sent, of a text not known."""
    session = hook_line("2026.9.6", "tj-write")["sessionId"]
    edit_events(
        state,
        "main",
        session,
        "trace.artifacts",
        lambda data: {
            **data,
            "messagingToolSentTexts": ["Short.", field_cut(40_000), field_cut(45_000)],
            "messagingToolSentTargets": [
                {"tool": "message", "provider": "slack", "to": "C1", "text": field_cut(40_000)},
                {"tool": "message", "provider": "slack", "to": "C2", "text": "Short."},
            ],
        },
    )
    run = read(state)
    assert run.sent_texts == ("Short.",)
    big = TextCut(
        "trajectory-field-size-limit", "40,000 characters, over its trajectory limit of 32,768"
    )
    bigger = TextCut(
        "trajectory-field-size-limit", "45,000 characters, over its trajectory limit of 32,768"
    )
    assert run.sent == (
        SentMessage("message", "slack", "C1", None, big),
        SentMessage("message", "slack", "C2", "Short."),
        SentMessage(None, None, None, None, bigger),
    )


@pytest.mark.parametrize("value", [42, {"text": "x"}, {"truncated": True, "reason": "other"}])
def test_a_value_that_is_neither_text_nor_a_marker_is_still_a_bad_event(
    state: Path, value: Any
) -> None:
    cut_reply(state, [value])
    with pytest.raises(BadEvent, match=r"assistantTexts\.0: .*OpenClaw's marker"):
        read(state)
