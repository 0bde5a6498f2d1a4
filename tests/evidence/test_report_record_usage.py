"""The report's tokens and cost, and `token_budget`, from OpenClaw's run record (recorded on the
real gateway), and what they say when the plugin's events count otherwise."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from clawspec.assertions.base import EvalContext, Status
from clawspec.config.settings import ModelPrice
from clawspec.reports.evidence import LATE_LINES_S, scenario_evidence
from clawspec.reports.model import ScenarioEvidence, TokenTotals
from clawspec.reports.spend import RunSpend, token_disagreements
from tests.assertions.test_trajectory_assertions import (
    context,
    edit_events,
    hook_line,
    recorded,
)
from tests.reports.factory import scenario
from tests.support.harness import evaluate_one

EMBEDDED = "e0000000-0000-4000-8000-000000000001"  # the run id of the context's log lines


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 0.3)


def _plugin(tmp_path: Path, input_tokens: int, output_tokens: int, cost: float | None) -> Path:
    """Plugin output with one finished model call of the context's run and its summary."""
    base = {"v": 1, "runId": EMBEDDED, "provider": "fake", "model": "fake-model"}
    records = [
        {**base, "kind": "model_call", "event": "model.call.completed", "phase": "completed",
         "inputTokens": input_tokens, "outputTokens": output_tokens,
         "totalTokens": input_tokens + output_tokens},
        {**base, "kind": "model_usage", "event": "model.usage", "inputTokens": input_tokens,
         "outputTokens": output_tokens, "costUsd": cost},
    ]  # fmt: skip
    path = tmp_path / "plugin.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _tokens(ctx: EvalContext, **pricing: ModelPrice) -> TokenTotals | None:
    assert evaluate_one({"type": "run_completed"}, ctx).status is Status.PASS  # reads the record
    result = scenario_evidence(ctx.evidence, ctx.run, pricing=pricing)
    assert result is not None
    return result.tokens


@pytest.mark.parametrize("version", ["2026.9.5", "2026.9.6"])
def test_the_record_gives_the_runs_usage(version: str, tmp_path: Path) -> None:
    usage = recorded(version, "tj-write").usage
    assert usage is not None
    assert _tokens(context(tmp_path, version)) == TokenTotals(
        input=usage.input,
        output=usage.output,
        total=usage.total,
        cost_usd=usage.cost,
        source="run record",
    )


def test_a_spawning_run_sums_its_sub_agents_usage(tmp_path: Path) -> None:
    run = recorded("2026.9.6", "tj-spawn")
    parts = [u for u in (run.usage, run.children[0].usage) if u is not None]
    tokens = _tokens(context(tmp_path, name="tj-spawn"))
    assert tokens is not None and len(parts) == 2
    assert (tokens.input, tokens.output, tokens.total) == (
        sum(u.input for u in parts),
        sum(u.output for u in parts),
        sum(u.total for u in parts),
    )


def test_the_plugin_agreeing_is_not_mentioned(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, 2500, 46, 0.0)
    tokens = _tokens(context(tmp_path, plugin=plugin))
    assert tokens is not None and tokens.source == "run record" and tokens.total == 2546


def test_a_disagreement_with_the_plugin_is_reported_not_resolved(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, 2400, 46, 0.25)
    tokens = _tokens(context(tmp_path, plugin=plugin))
    assert tokens is not None
    assert (tokens.input, tokens.cost_usd) == (2500, 0.0)  # the record's, with the plugin's named
    assert tokens.source == "run record"
    assert tokens.disagreement == (
        "the plugin's events count input 2,400, total 2,446, cost $0.25 "
        "(the run record: input 2,500, total 2,546, cost $0)"
    )


def test_a_cost_not_recorded_is_priced_or_named_never_zero(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    line = hook_line("2026.9.6", "tj-write")

    def without_cost(data: dict[str, object]) -> dict[str, object]:
        usage = dict(data["usage"])  # type: ignore[call-overload]
        usage.pop("cost", None)
        return {**data, "usage": usage}

    edit_events(tmp_path / "state", "main", line["sessionId"], "model.completed", without_cost)
    tokens = _tokens(ctx)
    assert tokens is not None and tokens.cost_usd is None
    assert tokens.unpriced == ["fake/fake-model"]
    price = ModelPrice(input_per_mtok=1.0, output_per_mtok=10.0)
    priced = scenario_evidence(ctx.evidence, ctx.run, pricing={"fake-model": price})
    assert priced is not None and priced.tokens is not None
    assert priced.tokens.cost_usd == pytest.approx((2500 * 1.0 + 46 * 10.0) / 1_000_000)


def test_the_report_reads_the_record_when_no_assertion_did(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, 2400, 46, 0.25)
    ctx = context(tmp_path, plugin=plugin)
    assert evaluate_one({"type": "tool_not_called", "tool": "exec"}, ctx).status is Status.PASS
    assert ctx.evidence.built_records() is None  # only the log was read
    result = scenario_evidence(ctx.evidence, ctx.run, settings=ctx.settings)
    assert result is not None and result.tokens is not None
    assert (result.tokens.source, result.tokens.input) == ("run record", 2500)
    assert result.tokens.disagreement is not None
    assert "input 2,400" in result.tokens.disagreement


def test_without_the_record_the_plugin_counts_as_before(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, 2400, 46, 0.25)
    ctx = context(tmp_path, plugin=plugin, state=False)
    assert evaluate_one({"type": "tool_not_called", "tool": "exec"}, ctx).status is Status.PASS
    result = scenario_evidence(ctx.evidence, ctx.run, settings=ctx.settings)
    assert result is not None and result.tokens is not None
    assert (result.tokens.source, result.tokens.input) == ("plugin", 2400)
    assert result.tokens.disagreement is None


class Waits(threading.Event):
    """A stop event that records each wait (and waits it): the report's waits are told by
    these, which a busy machine only makes fewer, not by timing the report."""

    def __init__(self) -> None:
        super().__init__()
        self.delays: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None, "a wait without a bound"
        self.delays.append(timeout)
        return super().wait(timeout)


def test_a_record_that_cannot_be_read_leaves_the_plugins_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state folder without the agent's store: the report counts the plugin's events, after a
    bounded wait (never the scenario's whole timeout, here a minute)."""
    monkeypatch.setattr(EvalContext, "evidence_wait_s", lambda self: 60.0)
    plugin = _plugin(tmp_path, 2400, 46, 0.25)
    ctx = context(tmp_path, plugin=plugin)
    shutil.rmtree(tmp_path / "state" / "agents" / "main")
    waits = Waits()
    result = scenario_evidence(ctx.evidence, ctx.run, stop=waits, settings=ctx.settings)
    assert waits.delays and sum(waits.delays) <= LATE_LINES_S + 0.1
    assert result is not None and result.tokens is not None
    assert (result.tokens.source, result.tokens.input) == ("plugin", 2400)


def test_a_state_folder_no_agent_ran_with_is_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong `openclaw_state_dir` (no agents/ folder, while the run has ended): the report
    counts the plugin's events at once, without a wait per scenario for a record that cannot
    come."""
    from clawspec.evidence import record

    def no_wait(*args: object, **kwargs: object) -> None:
        raise AssertionError("the record was waited for")

    monkeypatch.setattr(record, "wait_for", no_wait)
    ctx = context(tmp_path, plugin=_plugin(tmp_path, 2400, 46, 0.25))
    shutil.rmtree(tmp_path / "state" / "agents")
    result = scenario_evidence(ctx.evidence, ctx.run, settings=ctx.settings)
    assert result is not None and result.tokens is not None
    assert (result.tokens.source, result.tokens.input) == ("plugin", 2400)


# -- token_budget on the same evidence ---------------------------------------------------------


def test_token_budget_counts_the_record_and_says_so(tmp_path: Path) -> None:
    verdict = evaluate_one({"type": "token_budget", "max_total_tokens": 3000}, context(tmp_path))
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "total tokens 2,546 ≤ 3,000 (from the run record, 1 run)",
    )


def test_token_budget_decides_on_the_record_and_names_the_disagreement(tmp_path: Path) -> None:
    """The plugin's 2,400 input tokens would pass a limit of 2,450; the record's 2,500 do not."""
    ctx = context(tmp_path, plugin=_plugin(tmp_path, 2400, 46, 0.25))
    verdict = evaluate_one({"type": "token_budget", "max_input_tokens": 2450}, ctx)
    assert verdict.status is Status.FAIL
    assert verdict.message == (
        "input tokens 2,500 > 2,450 (from the run record, 1 run); the plugin's events count "
        "input 2,400, total 2,446, cost $0.25 (the run record: input 2,500, total 2,546, cost "
        "$0): decided on the run record"
    )
    assert verdict.value == {"input": 2500, "output": 46, "total": 2546}


def test_token_budget_agreeing_sources_name_no_disagreement(tmp_path: Path) -> None:
    ctx = context(tmp_path, plugin=_plugin(tmp_path, 2500, 46, 0.0))
    verdict = evaluate_one({"type": "token_budget", "max_cost_usd": 0.01}, ctx)
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "cost $0 ≤ $0.01 (from the run record, 1 run)",
    )


def test_token_budget_without_a_state_folder_counts_the_plugins_events(tmp_path: Path) -> None:
    ctx = context(tmp_path, plugin=_plugin(tmp_path, 2400, 46, 0.25), state=False)
    verdict = evaluate_one({"type": "token_budget", "max_input_tokens": 2450}, ctx)
    assert (verdict.status, verdict.message) == (
        Status.PASS,
        "input tokens 2,400 ≤ 2,450 (from 1 model call in the plugin's events)",
    )


def test_token_budget_says_why_the_record_was_not_used(tmp_path: Path) -> None:
    ctx = context(tmp_path, plugin=_plugin(tmp_path, 2400, 46, 0.25))
    shutil.rmtree(tmp_path / "state" / "agents")
    verdict = evaluate_one({"type": "token_budget", "max_input_tokens": 2450}, ctx)
    assert verdict.status is Status.PASS
    assert verdict.message.startswith(
        "input tokens 2,400 ≤ 2,450 (from 1 model call in the plugin's events; the run record "
        "was not read: cannot read the run's record: "
    ), verdict.message


def test_the_spend_line_names_a_disagreement() -> None:
    differ = "the plugin's events count input 2,400 (the run record: input 2,500)"
    tokens = TokenTotals(input=2500, total=2546, source="run record", disagreement=differ)
    runs = [
        scenario("acts", "pass").model_copy(update={"evidence": ScenarioEvidence(tokens=tokens)}),
        scenario("quiet", "pass"),
    ]
    label = runs[0].identity.label
    assert token_disagreements(runs) == f"Tokens of '{label}' counted from the run record; {differ}"
    assert RunSpend.of(runs[0]).tokens == 2546  # the spend limits count the report's tokens
    assert token_disagreements(runs[1:]) is None
