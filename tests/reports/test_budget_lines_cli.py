"""Budget and comparison lines through the real `clawspec run` CLI, against a hooks server on
127.0.0.1 whose runs spend (tests/support/spend_gateway.py): when a cost limit stops the run
before any run of variant `mini` started, no output says `mini` was compared with the reference
(no "unchanged"), the JSON report's changes say `not_compared`, the job summary's line has one
bullet, and the summary folds the skips for the budget into one line (not one per scenario)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports.json_report import schema_path
from tests.support.spend_gateway import SpendingGateway, spending_gateway

TOKEN = "hook-token-budget-lines-7e21c4"
SCENARIOS = 3
# Each run: 1,000,000 input tokens of a model OpenClaw has no price for; model_pricing prices
# it at $0.10 a run, over the $0.05 limit: the first run counted stops the run.
CONTRACT = (
    'version: "1.0"\ntarget: {type: skill, path: skills/news}\n'
    "defaults: {timeout: 30, poll_interval: 0.05}\nscenarios:\n"
    + "".join(
        f'  - name: s{i}\n    when: {{invoke: "go [wait:go] [usage:acme/listed:1000000:0:none]"}}\n'
        "    then: [{type: token_budget, max_total_tokens: 10000000}]\n"
        for i in range(SCENARIOS)
    )
)
CONFIG = f"""\
concurrency: {SCENARIOS}
report_html: reports/report.html
budget: {{max_cost_usd: 0.05}}
model_pricing: {{listed: {{input_per_mtok: 0.1, output_per_mtok: 1}}}}
variants:
  - {{name: gpt, model: acme/gpt, reference: true}}
  - {{name: mini, model: acme/mini}}
"""
STOP = f"run budget spent: $0.10 of $0.05 after 1 of {2 * SCENARIOS} runs"
NOT_COMPARED = f"mini against gpt: nothing compared: {SCENARIOS} scenarios skipped on mini"


@pytest.fixture
def gateway(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SpendingGateway]:
    with spending_gateway(TOKEN, workspace, monkeypatch) as fake:
        yield fake


@pytest.fixture
def outputs(
    workspace: Path,
    write_contract,
    gateway: SpendingGateway,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """One run: the reference's runs all start (one lane each: a scenario's variants never run
    at once), are held at the gateway until all have started, then answer; the first one
    counted stops the run, so no run of `mini` ever starts. Its terminal output, job summary,
    HTML and JSON reports."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    config = workspace / "clawspec.yaml"
    config.write_text(config.read_text("utf-8") + CONFIG, encoding="utf-8")
    write_contract(CONTRACT)

    def release() -> None:
        gateway.wait_for(SCENARIOS)
        gateway.gate("go").set()

    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    code = main(["run", ".", "--no-color", "--summary", "preview/summary.md"])
    releaser.join(timeout=60)
    assert code == 1  # a budget stop fails the run
    assert sorted(gateway.started) == [f"s{i}" for i in range(SCENARIOS)]  # on gpt only
    reports = workspace / "reports"
    return {
        "terminal": capsys.readouterr().out,
        "summary": (workspace / "preview" / "summary.md").read_text("utf-8"),
        "html": (reports / "report.html").read_text("utf-8"),
        "json": (reports / "clawspec-report.json").read_text("utf-8"),
    }


def test_a_variant_the_budget_skipped_entirely_says_nothing_compared_in_every_output(
    outputs: dict[str, str],
) -> None:
    report = json.loads(outputs["json"])
    jsonschema.validate(report, json.loads(schema_path().read_text("utf-8")))
    assert report["budget"]["stopped"] == STOP
    mini = [s for s in report["scenarios"] if s["variant"] == "mini"]
    assert [s["status"] for s in mini] == ["skip"] * SCENARIOS
    (gate,) = report["variant_comparisons"]
    assert (gate["variant"], gate["reference"]) == ("mini", "gpt")
    # Nothing was compared: no change says so, and the counts agree.
    assert {c["change"] for c in gate["scenarios"]} == {"not_compared"}
    assert {k: n for k, n in gate["counts"].items() if n} == {"not_compared": SCENARIOS}

    terminal = outputs["terminal"]
    assert f"\n{NOT_COMPARED}\n" in terminal
    assert "unchanged" not in terminal
    summary = outputs["summary"]
    assert f"\n- {NOT_COMPARED}\n" in summary  # one bullet: not '- • …'
    assert "- •" not in summary and "unchanged" not in summary
    assert NOT_COMPARED in outputs["html"]  # the page's data; report.js shows it
    assert f"{SCENARIOS} unchanged" not in outputs["html"]


def test_the_summary_says_the_budget_stop_once_for_all_the_skips(
    outputs: dict[str, str],
) -> None:
    stop = STOP.replace("$", "\\$")  # Markdown: a dollar sign is data, not math
    summary = outputs["summary"]
    # The verdict, the caution block, and one folded line for the skipped runs: not once per
    # skipped scenario.
    assert f"- ⏭️ **{SCENARIOS} scenarios**: not run: {stop}" in summary
    assert summary.count(stop) == 3
    # The terminal's summary folds them the same way: the reason once, with its count, below
    # each skipped scenario's own progress line.
    lines = outputs["terminal"].splitlines()
    assert lines.count(f"      not run: {STOP}") == SCENARIOS  # under mini's progress lines
    assert lines.count(f"  SKIP  {SCENARIOS} scenarios: not run: {STOP}") == 1
    assert outputs["terminal"].count(f"not run: {STOP}") == SCENARIOS + 1
