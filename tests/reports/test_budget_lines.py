"""Budget and comparison lines say only what happened: a variant the budget skipped entirely
was not compared; skips for one reason are one line; a Markdown list item has one bullet."""

from __future__ import annotations

import io

from clawspec.config.settings import RegressionSettings, VariantSettings
from clawspec.regression.variants import with_variants
from clawspec.reports.github.summary import render_summary
from clawspec.reports.html import render_html
from clawspec.reports.model import BudgetReport, RunReport
from clawspec.reports.terminal import TerminalReporter
from tests.reports.factory import assertion, report, scenario

STOP = "run budget spent: $0.02 of $0.01 after 6 of 12 runs"
VARIANTS = [
    VariantSettings(name="gpt", model="openai/gpt-5", reference=True),
    VariantSettings(name="mini", model="openai/gpt-5-mini"),
]


def _budget_skipped_mini() -> RunReport:
    """Six scenarios ran on gpt; the budget stopped before any ran on mini."""
    rows = []
    for i in range(6):
        rows.append(scenario(f"s{i}", "pass", assertion("pass"), variant="gpt"))
        skipped = scenario(f"s{i}", "skip", variant="mini", message=f"not run: {STOP}")
        rows.append(skipped.model_copy(update={"gateway_run_id": None, "run_id": None}))
    built = report(*rows).model_copy(
        update={"budget": BudgetReport(max_cost_usd=0.01, planned=12, runs=6, stopped=STOP)}
    )
    return with_variants(built, VARIANTS, "gpt", RegressionSettings())


def test_a_variant_the_budget_skipped_entirely_was_not_compared_in_every_output() -> None:
    run = _budget_skipped_mini()
    said = "mini against gpt: nothing compared: 6 scenarios skipped on mini"
    out = io.StringIO()
    TerminalReporter(out, colour=False).summary(run)
    assert said in out.getvalue()
    assert "unchanged" not in out.getvalue()
    summary = render_summary(run)
    assert f"\n- {said}\n" in summary  # one bullet, not '- • …'
    assert "- •" not in summary
    assert said in render_html(run)


def test_a_partly_skipped_variant_counts_its_skips_apart_from_unchanged() -> None:
    run = _budget_skipped_mini()
    ran = [s for s in run.scenarios if s.variant == "gpt"]
    ran += [s.model_copy(update={"variant": "mini"}) for s in ran[:2]]
    ran += [s for s in run.scenarios if s.variant == "mini"][2:]
    partly = with_variants(
        run.model_copy(update={"scenarios": ran}), VARIANTS, "gpt", RegressionSettings()
    )
    out = io.StringIO()
    TerminalReporter(out, colour=False).summary(partly)
    assert "mini against gpt: 2 unchanged, 4 not compared (skipped on a side)" in out.getvalue()


def test_the_summary_folds_skips_for_one_reason_into_one_line() -> None:
    summary = render_summary(_budget_skipped_mini())
    stop = STOP.replace("$", "\\$")  # Markdown: a dollar sign is data, not math
    # The verdict, the caution block, and the one folded line: not once per skipped scenario.
    assert summary.count(stop) == 3
    assert f"- ⏭️ **6 scenarios**: not run: {stop}" in summary
