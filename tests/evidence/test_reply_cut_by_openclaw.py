"""A reply OpenClaw kept only as its marker (over its 32,768-character limit for one recorded
text, as a real 2026.9.6 gateway did with a reply of 40,004 characters): the run record
assertions are judged as usual, and every reply assertion is an `error` saying why, never a
verdict on a text that is not there, and never a word about unsupported releases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawspec.assertions.base import EvalContext, Status
from tests.assertions.test_trajectory_assertions import (
    check,
    context,
    edit_events,
    hook_line,
    recorded,
)
from tests.assertions.test_trajectory_hostile import field_cut
from tests.gateway.test_trajectory_cut_texts import cut_reply


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 0.3)


def _cut(tmp_path: Path, texts: list[Any] | None = None) -> EvalContext:
    ctx = context(tmp_path)  # the recorded tj-write run: one write of notes.md, then its reply
    cut_reply(tmp_path / "state", [field_cut(40_004)] if texts is None else texts)
    return ctx


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        ({"type": "run_completed"}, Status.PASS),
        ({"type": "tool_call_count", "tool": "write", "min": 1, "max": 1}, Status.PASS),
        ({"type": "tool_call_count", "tool": "write", "max": 0}, Status.FAIL),
        ({"type": "tool_called_with", "tool": "write", "args": {"path": "notes.md"}}, Status.PASS),
        ({"type": "tool_called_with", "tool": "write", "args": {"path": "x.md"}}, Status.FAIL),
        ({"type": "no_tool_loop"}, Status.PASS),
        ({"type": "message_not_sent"}, Status.PASS),
        ({"type": "message_sent"}, Status.FAIL),
    ],
    ids=lambda v: v["type"] if isinstance(v, dict) else v.value,
)
def test_run_record_assertions_are_judged_as_usual(
    assertion: dict[str, Any], status: Status, tmp_path: Path
) -> None:
    got, message = check(_cut(tmp_path), assertion)
    assert got is status, message
    assert "cannot read the run's record" not in message


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "reply_contains", "text": "Wrote"},
        {"type": "reply_not_contains", "words": ["sorry"]},
        {"type": "reply_not_contains", "text": "sorry"},
        {"type": "reply_matches", "pattern": "."},
        {"type": "llm_judge", "source": "reply", "rubric": "Score 1-5."},
    ],
    ids=lambda a: a["type"],
)
def test_reply_assertions_say_openclaw_kept_no_text(
    assertion: dict[str, Any], tmp_path: Path
) -> None:
    status, message = check(_cut(tmp_path), assertion)
    run = recorded("2026.9.6", "tj-write").run_id
    assert (status, message) == (
        Status.ERROR,
        f"OpenClaw kept no text of the reply of run {run}: 40,004 characters, over its "
        "trajectory limit of 32,768; its record holds only a marker in its place, so nothing "
        "about the reply's text can be decided",
    )
    assert "release" not in message


def test_the_text_before_a_cut_reply_is_not_judged_as_the_reply(tmp_path: Path) -> None:
    ctx = _cut(tmp_path, ["Working on it.", field_cut(40_004)])
    status, message = check(ctx, {"type": "reply_contains", "text": "Working on it"})
    assert status is Status.ERROR and "OpenClaw kept no text of the reply" in message


def test_a_reply_with_no_text_at_all_still_fails(tmp_path: Path) -> None:
    """No final text (nothing cut) is what it was: a fail, not this error."""
    status, message = check(_cut(tmp_path, []), {"type": "reply_contains", "text": "x"})
    assert status is Status.FAIL and "ended without a final text" in message


def _cut_messages(tmp_path: Path) -> EvalContext:
    """One message to C1 whose text OpenClaw kept only as its marker, one to C2 'Short.'."""
    ctx = context(tmp_path)
    session = hook_line("2026.9.6", "tj-write")["sessionId"]
    edit_events(
        tmp_path / "state",
        "main",
        session,
        "trace.artifacts",
        lambda data: {
            **data,
            "messagingToolSentTexts": [field_cut(40_000), "Short."],
            "messagingToolSentTargets": [
                {"tool": "message", "provider": "slack", "to": "C1", "text": field_cut(40_000)},
                {"tool": "message", "provider": "slack", "to": "C2", "text": "Short."},
            ],
        },
    )
    return ctx


@pytest.mark.parametrize(
    ("assertion", "status"),
    [
        # what the cut text might hold cannot be told either way
        ({"type": "message_sent", "text": "deployed"}, Status.ERROR),
        ({"type": "message_not_sent", "text": "deployed"}, Status.ERROR),
        ({"type": "message_not_sent", "to": "C1", "pattern": "dep.oyed"}, Status.ERROR),
        # a text found is found; a target the cut message was not sent to is decided
        ({"type": "message_sent", "text": "short"}, Status.PASS),
        ({"type": "message_not_sent", "text": "short"}, Status.FAIL),
        ({"type": "message_not_sent", "to": "C2", "text": "deployed"}, Status.PASS),
        ({"type": "message_sent", "to": "C1"}, Status.PASS),
    ],
    ids=lambda v: str(v) if isinstance(v, dict) else v.value,
)
def test_a_message_whose_text_was_cut_decides_only_what_it_can(
    assertion: dict[str, Any], status: Status, tmp_path: Path
) -> None:
    got, message = check(_cut_messages(tmp_path), assertion)
    assert got is status, message
    if status is Status.ERROR:
        assert "OpenClaw kept no text of a message" in message
        assert "40,000 characters, over its trajectory limit of 32,768" in message


@pytest.mark.parametrize(
    "text", ["[Malformed diagnostic JSON redacted]", "[Oversized diagnostic JSON redacted]"]
)
def test_a_reply_openclaw_recorded_as_its_placeholder_is_not_taken_for_the_reply(
    text: str, tmp_path: Path
) -> None:
    """A reply holding `{` (`Cost is ${USER}`) was recorded as OpenClaw's placeholder by a
    real 2026.9.6 gateway: the reply is not known, whatever an assertion asks of it."""
    ctx = _cut(tmp_path, [text])
    for assertion in (
        {"type": "reply_contains", "text": "Cost is"},
        {"type": "reply_contains", "text": text},
        {"type": "reply_not_contains", "text": "sorry"},
    ):
        status, message = check(ctx, assertion)
        assert status is Status.ERROR, message
        assert f"its placeholder {json.dumps(text)} in its place" in message
    assert check(ctx, {"type": "run_completed"})[0] is Status.PASS
