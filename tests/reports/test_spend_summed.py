"""A report without a counted spend (an older report, a variant's column) is summed the way the
run budget counts: the agent's usage and cost with its LLM judge calls."""

from __future__ import annotations

from clawspec.reports.model import ScenarioEvidence, TokenTotals
from clawspec.reports.spend import RunSpend, Spent, cost_text, spend_of, summed
from tests.reports.factory import assertion, report, scenario


def _judged(name: str, agent_cost: float | None, judge_cost: float | None) -> object:
    tokens = TokenTotals(total=1000, cost_usd=agent_cost, source="plugin")
    if agent_cost is None:
        tokens = tokens.model_copy(update={"unpriced": ["acme/agent"]})
    usage = {"model": "acme/judge", "input_tokens": 200, "output_tokens": 50, "calls": 1}
    if judge_cost is not None:
        usage["cost_usd"] = judge_cost
    judged = assertion("pass", type="semantic_match", usage=usage)
    return scenario(name, "pass", judged, id=f"c::{name}", gateway_run_id=f"run-{name}").model_copy(
        update={"evidence": ScenarioEvidence(tokens=tokens)}
    )


def test_judge_calls_are_spend_in_the_fallback_as_in_the_budget() -> None:
    runs = [_judged("a", 0.01, 0.002), _judged("b", 0.02, 0.003)]
    spend = spend_of(report(*runs))  # no budget section: summed
    assert (spend.runs, spend.tokens, spend.cost_usd) == (2, 2500, 0.035)
    # The same figures as the budget's own counter, run by run.
    counted = Spent()
    for run in runs:
        counted = counted.plus(RunSpend.of(run))
    assert (counted.runs, counted.tokens, round(counted.cost_usd, 9)) == (2, 2500, 0.035)


def test_an_unpriced_judge_call_makes_the_runs_cost_unknown_and_names_the_model() -> None:
    spend = summed([_judged("a", 0.01, None), _judged("b", 0.02, 0.003)])
    assert (spend.unpriced_runs, spend.unpriced_models, spend.cost_usd) == (
        1,
        ["acme/judge"],
        0.023,
    )
    assert cost_text(spend) == "at least $0.023 (1 run unpriced)"


def test_a_scenario_that_never_reached_the_agent_spent_nothing() -> None:
    untouched = scenario("x", "skip", id="c::x", gateway_run_id=None)
    assert summed([untouched]).runs == 0


def test_a_conversations_judge_calls_in_its_turns_are_spent_too() -> None:
    from clawspec.reports.model import TurnResult

    judged = assertion(
        "pass",
        turn=0,
        usage={"model": "m", "input_tokens": 70, "output_tokens": 30, "cost_usd": 0.5},
    )
    turn = TurnResult(
        index=0, line=3, say="hi", reply="hello", status="pass", duration_ms=5, assertions=[judged]
    )
    evidence = ScenarioEvidence(tokens=TokenTotals(total=1000, cost_usd=1.0, source="plugin"))
    talk = scenario("talk", "pass", evidence=evidence, turns=[turn])
    spend = RunSpend.of(talk)
    assert (spend.tokens, spend.cost_usd) == (1100, 1.5)
