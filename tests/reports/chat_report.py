"""A report with conversations, for the HTML report's chat: three turns (the second fails with a
hostile reply, the third replies at length), tool calls in turn 1 and a delegation in turn 3;
and a conversation whose only turn got no reply."""

from __future__ import annotations

from clawspec.assertions.base import Status
from clawspec.reports.model import (
    CheckRef,
    RunReport,
    ScenarioEvidence,
    ScenarioResult,
    TokenTotals,
    ToolCallRecord,
    TraceRef,
    TurnResult,
)
from tests.reports.factory import assertion, report

CONTRACT = "agents/helpdesk/tests/chat.yaml"
# Markdown and HTML a model may answer with, a lone surrogate (half an emoji), a bell and an
# ANSI colour, a tab and line breaks: shown as written, inert, the controls dropped.
HOSTILE_REPLY = (
    "</script><script>window.__pwned=1</script>\n"
    '<img src=x onerror="window.__pwned=1">\n'
    "**No invoice** for [you](javascript:window.__pwned=1).\n"
    "\tindented\x07\x1b[31m red\ud83d end"
)
# What the page shows of it: the controls, the ANSI code and the lone surrogate cleaned.
HOSTILE_SHOWN = (
    "</script><script>window.__pwned=1</script>\n"
    '<img src=x onerror="window.__pwned=1">\n'
    "**No invoice** for [you](javascript:window.__pwned=1).\n"
    "\tindented red\ufffd end"
)
LONG_REPLY = "".join(f"line {i:04d} of the summary.\n" for i in range(400))  # 10,400 characters


def _tokens(total: int) -> TokenTotals:
    return TokenTotals(input=total - 100, output=100, total=total, cost_usd=0.002, source="plugin")


def _turns() -> list[TurnResult]:
    return [
        TurnResult(
            index=0,
            line=8,
            say="Hi! Where is order 42?",
            reply="Order 42 shipped on Monday.\n\nTracking: ZX-1.",
            status=Status.PASS,
            duration_ms=1200,
            tokens=1500,
            gateway_run_id="chat-1",
            evidence=ScenarioEvidence(
                tools=[
                    ToolCallRecord(name="read", agent="main"),
                    ToolCallRecord(name="exec", agent="main", error=True),
                ],
                tokens=_tokens(1500),
            ),
            assertions=[
                assertion("pass", "tool 'read' was called", type="tool_was_called", line=10, turn=0)
            ],
        ),
        TurnResult(
            index=1,
            line=12,
            say="And the invoice? <b>now</b>",
            reply=HOSTILE_REPLY,
            status=Status.FAIL,
            message="reply does not contain 'invoice attached'",
            duration_ms=900,
            tokens=800,
            gateway_run_id="chat-2",
            trace=TraceRef(backend="local", id="t-2", url="javascript:window.__pwned=1"),
            evidence=ScenarioEvidence(tokens=_tokens(800)),
            assertions=[
                assertion(
                    "fail",
                    "reply does not contain 'invoice attached'",
                    type="reply_contains",
                    line=14,
                    turn=1,
                ),
                assertion("pass", "no tool loop", type="no_tool_loop", index=1, line=16, turn=1),
            ],
        ),
        TurnResult(
            index=2,
            line=18,
            say="Summarise our chat, please.",
            reply=LONG_REPLY,
            status=Status.PASS,
            duration_ms=3100,
            tokens=2400,
            gateway_run_id="chat-3",
            evidence=ScenarioEvidence(
                tools=[ToolCallRecord(name="sessions_spawn", agent="main")],
                delegations=["billing"],
                tokens=_tokens(2400),
            ),
            assertions=[
                assertion("pass", "delegated to billing", type="delegated_to", line=20, turn=2)
            ],
        ),
    ]


def chat_report() -> RunReport:
    """A failing three-turn conversation, then a conversation whose turn got no reply."""
    talk = ScenarioResult(
        id=f"{CONTRACT}::order-chat",
        contract=CONTRACT,
        line=5,
        name="order-chat",
        scenario="order-chat",
        target="agents/helpdesk",
        status=Status.FAIL,
        message="turn 2, then[0] (reply_contains): reply does not contain 'invoice attached'",
        restates=CheckRef(phase="then", index=0, turn=1),
        run_id="run-chat",
        duration_ms=5200,
        assertions=[
            assertion("pass", "file 'orders.db' exists", phase="given", line=6),
            assertion("pass", "every run completed", type="run_completed", line=22),
        ],
        turns=_turns(),
    )
    silent = ScenarioResult(
        id=f"{CONTRACT}::silent",
        contract=CONTRACT,
        line=30,
        name="silent",
        scenario="silent",
        target="agents/helpdesk",
        status=Status.ERROR,
        message="turn 1: the agent sent no reply",
        run_id="run-silent",
        duration_ms=700,
        turns=[
            TurnResult(
                index=0,
                line=32,
                say="Hello?",
                reply=None,
                status=Status.ERROR,
                message="the agent sent no reply",
                duration_ms=700,
            )
        ],
    )
    return report(talk, silent)
