"""A conversation's turns in the text outputs: which turn a check belongs to, what was said.

The report counts turns from 0 (`TurnResult.index`, `AssertionResult.turn`); people count from
1, so every text says "turn 2" for index 1. What a user says and what the agent replies are
masked in the report already; JUnit and the HTML report cut them to `limits.reply_chars`
(default `REPLY_CHARS`), the terminal, summary and PR comment shorter (`cut`: masked first, and
a secret's prefix left at the cut is masked too). Each renderer then
escapes them for its format like any other text from outside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawspec.status import Status
from clawspec.text import cut

if TYPE_CHECKING:
    from clawspec.reports.model import AssertionResult, ScenarioResult, TurnResult

# The default of `limits.reply_chars`: the most of a `say` or a reply JUnit and the HTML show.
REPLY_CHARS = 4_000
_FAILING = (Status.FAIL, Status.ERROR)


def turn_label(index: int) -> str:
    """'turn 2' for the turn of index 1."""
    return f"turn {index + 1}"


def check_label(check: AssertionResult) -> str:
    """'then[0]', or 'turn 2, then[0]' for a check of a conversation's turn."""
    place = f"{check.phase}[{check.index}]"
    return place if check.turn is None else f"{turn_label(check.turn)}, {place}"


def failing_turn(result: ScenarioResult) -> TurnResult | None:
    """The turn that made the conversation fail: the first failed or errored one, else the
    first that warned; None for other scenarios and conversations whose turns all passed."""
    turns = result.turns or []
    for statuses in (_FAILING, (Status.WARN,)):
        for turn in turns:
            if turn.status in statuses:
                return turn
    return None


def shown(text: str | None, limit: int = REPLY_CHARS) -> str:
    """A `say` or a reply as an output shows it: cut to `limit` (`limits.reply_chars`)."""
    return cut(text or "", limit)
