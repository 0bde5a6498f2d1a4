"""The replies in an evidence scope: each run's final assistant text.

A conversation's turn has its reply from the chat response (`RunInfo.transcript`); a plain
scenario's hook answer carries none, and its log line neither, so its reply is read from the
run's record (`clawspec.evidence.record`): the last of `model.completed`'s `assistantTexts`,
the same text the chat response carries (checked on the real gateway). Texts written before
tool calls are not the reply. A reply over OpenClaw's limit for one recorded text (32,768
characters) is kept there only as its marker: nothing about its text can be decided, so the
replies are then an `error` saying so (the rest of the record is read as usual).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from clawspec.evidence.context import EvalContext, Verdict
from clawspec.evidence.record import STATE_DIR_HINT, run_records
from clawspec.gateway.trajectory.cuts import placeholder, redacted_text

__all__ = ["STATE_DIR_HINT", "Reply", "redaction_form", "replies"]


@dataclass(frozen=True)
class Reply:
    """One run's reply. `text` None: the run wrote no final text."""

    text: str | None
    source: str  # what a message names it by: "turn 2", "run <id>"
    say: str | None = None  # a conversation's turn: the user's message it answers
    # Read from OpenClaw's record, which holds the reply as it was after OpenClaw redacted the
    # secrets it recognised (not the chat response's text, which is what the agent said).
    recorded: bool = False

    @property
    def redacted(self) -> bool:
        """Whether OpenClaw recorded it with a part redacted (shown as `abcdef…wxyz`,
        `<redacted>`): what the agent said there is not known."""
        return self.recorded and self.text is not None and redacted_text(self.text)


def redaction_form(text: str) -> bool:
    """Whether a text holds the form of OpenClaw's redaction: found in a recorded reply, it is
    found in what OpenClaw wrote in place of a secret, not in what the agent said."""
    return redacted_text(text)


def replies(ctx: EvalContext) -> tuple[Reply, ...] | Verdict:
    """The scope's replies in order, or an `error` verdict saying why they cannot be had."""
    transcript = ctx.run.transcript
    if transcript is not None:
        return tuple(Reply(e.reply, f"turn {e.turn + 1}", e.say) for e in transcript)
    # The reply is the parent run's: its sub-agents need not have ended.
    found = run_records(ctx, until="complete")
    if isinstance(found, Verdict):
        return found
    for run in found.runs:
        if run.reply is None and run.reply_cut is not None:
            return Verdict.errored(
                f"OpenClaw kept no text of the reply of run {run.run_id}: "
                f"{run.reply_cut.detail}; its record holds only a marker in its place, so "
                "nothing about the reply's text can be decided"
            )
        if placeholder(run.reply):
            return Verdict.errored(
                f"OpenClaw kept no text of the reply of run {run.run_id}: its record holds its "
                f"placeholder {json.dumps(run.reply)} in its place (OpenClaw records one for "
                "a text it takes for broken JSON), so nothing about the reply's text can be "
                "decided"
            )
    return tuple(Reply(run.reply, f"run {run.run_id}", recorded=True) for run in found.runs)
