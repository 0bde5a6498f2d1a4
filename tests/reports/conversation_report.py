"""A report holding conversations, for the renderer tests and the golden files.

A three-turn conversation whose turn 2 fails (its reply carries Markdown, HTML, a lone
surrogate, control characters, an ANSI code, GitHub references and a registered secret), whose
turn 3's reply is longer than every output but the JSON report shows (a secret straddles the
cut), and a second conversation stopped by a turn that got no reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from clawspec import secrets as registry
from clawspec.reports.model import (
    AssertionResult,
    CheckRef,
    RunReport,
    ScenarioResult,
    Totals,
    TraceRef,
    TurnResult,
)
from clawspec.reports.turns import REPLY_CHARS
from clawspec.status import Status

CONTRACT = "agents/concierge/tests/conversation.yaml"
# Registered by the tests (clawspec.secrets): no built-in pattern would mask it.
SECRET = "zebra-hunter-42-passphrase"


def hostile_reply(secret: str = SECRET) -> str:
    return (
        "I don't know **x** <script>alert(1)</script> [link](http://evil.example) "
        "lone \ud800 surrogate, bell \x07 and \x1b[31mred\x1b[0m, ping @octocat #12, "
        f"token {secret}\nsecond line | pipe `tick`"
    )


def long_reply(secret: str = SECRET) -> str:
    """Over REPLY_CHARS, with the secret cut through at REPLY_CHARS by a naive cut."""
    return "a" * (REPLY_CHARS - 10) + secret + " " + "b" * 300 + " THE END"


LONG_REPLY = long_reply()
FAILED = "the reply does not contain 'Zed'"


def _check(
    turn: int | None, index: int, line: int, status: str, message: str, **kw: object
) -> AssertionResult:
    return AssertionResult(
        phase=str(kw.pop("phase", "then")),  # type: ignore[arg-type]
        index=index,
        turn=turn,
        type=str(kw.pop("type", "reply_contains")),
        line=line,
        status=Status(status),
        message=message,
        **kw,  # type: ignore[arg-type]
    )


def remembers_the_name(secret: str = SECRET) -> ScenarioResult:
    """Three turns, turn 2 fails; given and a scenario-level then around them."""
    turns = [
        TurnResult(
            index=0,
            line=8,
            say="Hi, my name is Zed.",
            reply="Nice to meet you, Zed!",
            status=Status.PASS,
            duration_ms=1200,
            tokens=310,
            gateway_run_id="chat-1",
            assertions=[_check(0, 0, 10, "pass", "the reply contains 'Zed'")],
        ),
        TurnResult(
            index=1,
            line=12,
            say="What is my name? **bold** <b>tag</b>",
            reply=hostile_reply(secret),
            status=Status.FAIL,
            message=f"then[0] (reply_contains): {FAILED}",
            duration_ms=1500,
            tokens=420,
            gateway_run_id="chat-2",
            assertions=[
                _check(1, 0, 14, "fail", FAILED),
                _check(1, 1, 16, "pass", "the reply has no 'error'", type="reply_not_contains"),
            ],
        ),
        TurnResult(
            index=2,
            line=18,
            say="Tell me a long story.",
            reply=long_reply(secret),
            status=Status.PASS,
            duration_ms=4100,
            tokens=2200,
            gateway_run_id="chat-3",
            assertions=[_check(2, 0, 20, "pass", "the reply contains 'THE END'")],
        ),
    ]
    return ScenarioResult(
        id=f"{CONTRACT}::remembers the name",
        contract=CONTRACT,
        line=4,
        name="remembers the name",
        scenario="remembers the name",
        target="agents/concierge",
        status=Status.FAIL,
        message=f"turn 2, then[0] (reply_contains): {FAILED}",
        restates=CheckRef(phase="then", index=0, turn=1),
        run_id="run-conv-1",
        gateway_run_id="chat-3",
        duration_ms=6800,
        trace=TraceRef(backend="local", id="trace-conv-1"),
        assertions=[
            _check(None, 0, 6, "pass", "the workspace is ready", phase="given", type="file_exists"),
            _check(None, 0, 22, "pass", "every run completed", type="run_completed"),
        ],
        turns=turns,
    )


def no_reply() -> ScenarioResult:
    """Two turns: turn 2 got no reply, so the conversation errored and never went on."""
    turns = [
        TurnResult(
            index=0,
            line=30,
            say="Book a table for two.",
            reply="Which evening?",
            status=Status.PASS,
            duration_ms=900,
            assertions=[_check(0, 0, 32, "pass", "the reply contains 'evening'")],
        ),
        TurnResult(
            index=1,
            line=34,
            say="Friday <at> 8pm",
            reply=None,
            status=Status.ERROR,
            message="the gateway closed the chat before a reply (HTTP 502)",
            duration_ms=30000,
        ),
    ]
    return ScenarioResult(
        id=f"{CONTRACT}::books a table",
        contract=CONTRACT,
        line=27,
        name="books a table",
        scenario="books a table",
        target="agents/concierge",
        status=Status.ERROR,
        message="turn 2: the gateway closed the chat before a reply (HTTP 502)",
        run_id="run-conv-2",
        duration_ms=30900,
        turns=turns,
    )


def conversation_report(secret: str = SECRET) -> RunReport:
    scenarios = [remembers_the_name(secret), no_reply()]
    return RunReport(
        version="0.1.0",
        run_id="run-conversation",
        started_at="2026-11-25T09:00:00+00:00",
        duration_ms=37700,
        totals=Totals.of(scenarios),
        scenarios=scenarios,
    )


@contextmanager
def secret_registered() -> Iterator[None]:
    """Render inside this: the secret is registered as a command's would be. A report built
    before it holds the secret unmasked (as one read from an older file could), so the
    renderers themselves must mask it."""
    with registry.scope() as active:
        active.add(SECRET)
        yield


def assert_inert(text: str) -> None:
    """No secret or part of one, no control character, no lone surrogate in an output."""
    assert SECRET not in text
    assert "zebra-hun" not in text
    assert "\ud800" not in text
    assert not any(ord(c) < 32 and c not in "\n\r\t" for c in text)
