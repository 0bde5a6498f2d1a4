"""The judge's structured answer, parsed fail-closed, and the decision its scores make.

Fail-closed: an answer without the forced tool
call, with a missing, non-integer or out-of-scale score, is a `JudgeAnswerError`, which the
assertion reports as `error`, never as `pass`. The judge knows nothing of verdicts: the
assertions (`assertions/semantic.py`) turn its decision into one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clawspec.judge.prompt import SCALE, TOOL_NAME
from clawspec.text import fmt_number, one_line

REASONING_CHARS = 200

TOOL = {
    "name": TOOL_NAME,
    "description": "Record the score of the artifact against the rubric, with a short reasoning.",
    "input_schema": {
        "type": "object",
        "properties": {
            "score": {
                "type": "integer",
                "minimum": SCALE[0],
                "maximum": SCALE[1],
                "description": f"Integer score from {SCALE[0]} (worst) to {SCALE[1]} (best).",
            },
            "reasoning": {
                "type": "string",
                "description": "One or two sentences naming the decisive evidence.",
            },
        },
        "required": ["score", "reasoning"],
    },
}
TOOL_CHOICE = {"type": "tool", "name": TOOL_NAME}


class JudgeAnswerError(Exception):
    """The judge answered, but not with a usable verdict."""


class JudgeAnswer(BaseModel):
    """The validated input of the judge's `record_verdict` tool call."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    score: int = Field(strict=True, ge=SCALE[0], le=SCALE[1])
    reasoning: str = Field(strict=True)


@dataclass(frozen=True)
class Usage:
    """Tokens of the judge calls that got an answer."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # Calls whose answer said nothing of its usage (a proxy that drops it): their tokens and
    # cost are unknown, never 0.
    unmetered: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.unmetered + other.unmetered,
        )


def parse_answer(content: Sequence[Any], stop_reason: str | None) -> JudgeAnswer:
    """Return the verdict in the message's `record_verdict` tool call, or raise JudgeAnswerError.

    `content` is the Messages API content list (SDK blocks or plain dicts).
    """
    calls = [b for b in content if _get(b, "type") == "tool_use" and _get(b, "name") == TOOL_NAME]
    if not calls:
        kinds = ", ".join(str(_get(b, "type")) for b in content) or "nothing"
        raise JudgeAnswerError(
            f"judge answered without calling '{TOOL_NAME}' (got {kinds}; stop_reason {stop_reason})"
        )
    raw = _get(calls[0], "input")
    if not isinstance(raw, Mapping):
        raise JudgeAnswerError(f"judge's '{TOOL_NAME}' input is not an object: {_show(raw)}")
    try:
        return JudgeAnswer.model_validate(dict(raw))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'input'}: {_problem(e)}"
            for e in exc.errors(include_url=False)
        )
        raise JudgeAnswerError(f"judge's verdict is invalid: {problems}") from None


def decide(
    answers: Sequence[JudgeAnswer], threshold: float, note: str = ""
) -> tuple[bool, str, int]:
    """Return (passed, message, deciding score): every score must reach the threshold.

    One call: 'score 4 ≥ 3: reasoning'. Several: 'scores 5, 5, 2 (disagree): 2 < 4: reasoning
    of the lowest score'. `note` (truncation) goes before the reasoning so it is never cut.
    """
    lowest = min(answers, key=lambda a: a.score)
    passed = lowest.score >= threshold
    comparison = f"{lowest.score} {'≥' if passed else '<'} {fmt_number(threshold)}"
    if len(answers) == 1:
        head = f"score {comparison}"
    else:
        scores = ", ".join(str(a.score) for a in answers)
        agreement = "agree" if len({a.score for a in answers}) == 1 else "disagree"
        head = f"scores {scores} ({agreement}): {comparison}"
    if note:
        head += f" ({note})"
    reasoning = one_line(lowest.reasoning, REASONING_CHARS) or "(no reasoning given)"
    return passed, f"{head}: {reasoning}", lowest.score


def usage_record(model: str, usage: Usage, pricing: Mapping[str, Any]) -> dict[str, Any]:
    """Return the judge's usage as a verdict carries it: tokens, and the cost when a
    `model_pricing` key is in the model name.

    The longest matching key wins ('claude-sonnet-4-5' over 'claude-sonnet'); no match → null.
    """
    keys = [key for key in pricing if key and key in model]
    cost = None
    if keys and not usage.unmetered:
        price = pricing[max(keys, key=len)]
        cost = round(
            usage.input_tokens / 1e6 * price.input_per_mtok
            + usage.output_tokens / 1e6 * price.output_per_mtok,
            6,
        )
    return {
        "model": model,
        "calls": usage.calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": cost,
        **({"unmetered_calls": usage.unmetered} if usage.unmetered else {}),
    }


def _get(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def _problem(error: Mapping[str, Any]) -> str:
    if error["type"] in ("greater_than_equal", "less_than_equal"):
        return f"{_show(error['input'])} is outside {SCALE[0]}-{SCALE[1]}"
    if error["type"] == "missing":
        return "missing"
    return f"{error['msg']}, found {_show(error.get('input'))}"


def _show(value: Any) -> str:
    return one_line(repr(value), 60)
