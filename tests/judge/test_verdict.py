"""Fail-closed parsing of the judge's tool call, the decision rule and usage/cost."""

from __future__ import annotations

from typing import Any

import pytest

from clawspec.assertions.base import Status
from clawspec.config.settings import ModelPrice
from clawspec.judge.verdict import (
    JudgeAnswer,
    JudgeAnswerError,
    Usage,
    decide,
    parse_answer,
    usage_record,
)


def tool_use(tool_input: Any, name: str = "record_verdict") -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}


def test_parse_answer_accepts_valid_tool_call() -> None:
    content = [{"type": "text", "text": "Thinking."}, tool_use({"score": 4, "reasoning": "Ok."})]
    assert parse_answer(content, "tool_use") == JudgeAnswer(score=4, reasoning="Ok.")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            [{"type": "text", "text": "I'd say 5/5"}],
            "judge answered without calling 'record_verdict' (got text; stop_reason end_turn)",
        ),
        ([], "judge answered without calling 'record_verdict' (got nothing; stop_reason end_turn)"),
        (
            [tool_use({"score": 5, "reasoning": "x"}, name="other")],
            "judge answered without calling 'record_verdict' (got tool_use; stop_reason end_turn)",
        ),
        (
            [tool_use("score: 5")],
            "judge's 'record_verdict' input is not an object: 'score: 5'",
        ),
        ([tool_use({"reasoning": "x"})], "judge's verdict is invalid: score: missing"),
        (
            [tool_use({"score": 0, "reasoning": "x"})],
            "judge's verdict is invalid: score: 0 is outside 1-5",
        ),
        (
            [tool_use({"score": 6, "reasoning": "x"})],
            "judge's verdict is invalid: score: 6 is outside 1-5",
        ),
        (
            [tool_use({"score": "5", "reasoning": "x"})],
            "judge's verdict is invalid: score: Input should be a valid integer, found '5'",
        ),
        (
            [tool_use({"score": 4.5, "reasoning": "x"})],
            "judge's verdict is invalid: score: Input should be a valid integer, found 4.5",
        ),
        (
            [tool_use({"score": True, "reasoning": "x"})],
            "judge's verdict is invalid: score: Input should be a valid integer, found True",
        ),
        ([tool_use({"score": 5})], "judge's verdict is invalid: reasoning: missing"),
    ],
)
def test_parse_answer_fails_closed(content: list[Any], message: str) -> None:
    with pytest.raises(JudgeAnswerError) as caught:
        parse_answer(content, "end_turn")
    assert str(caught.value) == message


def answers(*scores: int) -> list[JudgeAnswer]:
    return [JudgeAnswer(score=s, reasoning=f"reason {i}") for i, s in enumerate(scores, 1)]


@pytest.mark.parametrize(
    ("scores", "threshold", "status", "message"),
    [
        ((3,), 3, Status.PASS, "score 3 ≥ 3: reason 1"),
        ((2,), 3, Status.FAIL, "score 2 < 3: reason 1"),
        ((4,), 3.5, Status.PASS, "score 4 ≥ 3.5: reason 1"),
        ((5, 5, 5), 4, Status.PASS, "scores 5, 5, 5 (agree): 5 ≥ 4: reason 1"),
        ((5, 4, 5), 4, Status.PASS, "scores 5, 4, 5 (disagree): 4 ≥ 4: reason 2"),
        ((5, 5, 2), 4, Status.FAIL, "scores 5, 5, 2 (disagree): 2 < 4: reason 3"),
    ],
)
def test_decide_requires_every_score_to_pass(
    scores: tuple[int, ...], threshold: float, status: Status, message: str
) -> None:
    assert decide(answers(*scores), threshold) == (status == Status.PASS, message, min(scores))


def test_decide_puts_truncation_note_before_reasoning() -> None:
    _, message, _ = decide(answers(4), 3, "'a.md' truncated to 10 of 20 chars")
    assert message == "score 4 ≥ 3 ('a.md' truncated to 10 of 20 chars): reason 1"


def test_decide_keeps_message_on_one_line_and_short() -> None:
    long = [JudgeAnswer(score=1, reasoning="line one\nline two " + "x" * 500)]
    _, message, _ = decide(long, 3)
    assert "\n" not in message
    assert message.startswith("score 1 < 3: line one line two x")
    assert len(message) < 240


def test_decide_says_when_reasoning_is_empty() -> None:
    _, message, _ = decide([JudgeAnswer(score=5, reasoning="  ")], 3)
    assert message == "score 5 ≥ 3: (no reasoning given)"


PRICING = {
    "claude-sonnet": ModelPrice(input_per_mtok=2, output_per_mtok=10),
    "claude-sonnet-4-5": ModelPrice(input_per_mtok=3, output_per_mtok=15),
}


@pytest.mark.parametrize(
    ("model", "cost"),
    [
        ("claude-sonnet-4-5", 0.0045),  # the longest matching key wins
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", 0.0045),
        ("claude-sonnet-4", 0.003),
        ("claude-haiku-4-5", None),
    ],
)
def test_usage_record_prices_by_model_substring(model: str, cost: float | None) -> None:
    record = usage_record(model, Usage(2, 1000, 100), PRICING)
    assert record == {
        "model": model,
        "calls": 2,
        "input_tokens": 1000,
        "output_tokens": 100,
        "cost_usd": cost,
    }
