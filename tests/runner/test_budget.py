"""Spend limits, through the real CLI against a hooks server whose runs spend (their gateway
log lines and ClawSpec plugin usage records, tests/support/spend_gateway.py), and the budget's
own arithmetic with a fake clock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from clawspec.cli import main
from clawspec.config.settings import BudgetSettings
from clawspec.reports.model import BudgetReport, RunReport, Totals
from clawspec.reports.spend import merged, spend_line
from clawspec.runner.budget import Budget, Limits
from tests.support.spend_gateway import SpendingGateway, spending_gateway

TOKEN = "hook-token-5c4b3a29"
HEADER = (
    'version: "1.0"\ntarget: {type: skill, path: skills/news}\n'
    "defaults: {timeout: 30, poll_interval: 0.05}\nscenarios:\n"
)


def contract(*invokes: str) -> str:
    return HEADER + "".join(
        f'  - name: s{i}\n    when: {{invoke: "go {text}"}}\n'
        "    then: [{type: token_budget, max_total_tokens: 10000000}]\n"
        for i, text in enumerate(invokes)
    )


@pytest.fixture
def gateway(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SpendingGateway]:
    with spending_gateway(TOKEN, workspace, monkeypatch) as fake:
        yield fake


@pytest.fixture
def github(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """GitHub's step files, so the run writes its summary and outputs too."""
    folder = workspace.parent / "github"
    folder.mkdir()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(folder / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(folder / "output"))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    return folder


def configure(workspace: Path, text: str) -> None:
    config = workspace / "clawspec.yaml"
    config.write_text(config.read_text("utf-8") + text, encoding="utf-8")


def outputs(folder: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    lines = iter((folder / "output").read_text("utf-8").splitlines())
    for line in lines:
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            values[name] = "\n".join(iter(lambda: next(lines), delimiter))
        else:
            name, _, value = line.partition("=")
            values[name] = value
    return values


def report_of(workspace: Path) -> dict:
    return json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))


def test_a_cost_limit_reached_after_three_runs_skips_the_rest_in_every_output_and_fails(
    workspace: Path,
    write_contract,
    gateway: SpendingGateway,
    github: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(
        workspace, "concurrency: 1\njunit: reports/junit.xml\nreport_html: reports/report.html\n"
    )
    write_contract(contract(*["[usage:anthropic/claude-x:1000:100:0.1]"] * 6))
    assert main(["run", ".", "--max-cost-usd", "0.25"]) == 1
    reason = "run budget spent: $0.30 of $0.25 after 3 of 6 runs"
    assert gateway.started == ["s0", "s1", "s2"]  # no further agent run started
    report = report_of(workspace)
    assert [s["status"] for s in report["scenarios"]] == ["pass"] * 3 + ["skip"] * 3
    assert {s["message"] for s in report["scenarios"][3:]} == {f"not run: {reason}"}
    budget = report["budget"]
    assert budget["stopped"] == reason
    assert (budget["max_cost_usd"], budget["runs"], budget["planned"]) == (0.25, 3, 6)
    assert (round(budget["cost_usd"], 9), budget["tokens"], budget["unpriced_runs"]) == (
        0.3,
        3300,
        0,
    )
    line = "Budget: cost $0.30 of $0.25, 3,300 tokens; 3 of 6 agent runs"
    out = capsys.readouterr().out
    assert line in out and f"stopped: {reason}" in out
    summary = (github / "summary.md").read_text("utf-8")
    assert "> [!CAUTION]" in summary and "run budget spent: \\$0.30 of \\$0.25" in summary
    values = outputs(github)
    assert values["budget_stopped"] == reason and values["cost_usd"] == "0.3"
    assert values["spent"] == line
    assert "stopped by the run budget" in values["summary"]
    junit = ET.parse(workspace / "reports" / "junit.xml").getroot()
    (case,) = [c for c in junit.iter("testcase") if c.get("name") == "run budget"]
    assert reason in case.find("error").get("message")
    assert junit.get("errors") == "1" and junit.get("skipped") == "3"
    spent = {p.get("value") for p in junit.iter("property") if p.get("name") == "spend"}
    assert spent == {line}
    html = (workspace / "reports" / "report.html").read_text("utf-8")
    assert reason in html  # the page's data; report.js shows it in a banner


def test_a_token_limit_stops_the_run_the_same_way(
    workspace: Path, write_contract, gateway: SpendingGateway
) -> None:
    write_contract(contract(*["[usage:fake/m:400:100:0]"] * 5))
    configure(workspace, "concurrency: 1\nbudget: {max_tokens: 1000}\n")
    assert main(["run", "."]) == 1
    assert gateway.started == ["s0", "s1"]
    assert report_of(workspace)["budget"]["stopped"] == (
        "run budget spent: 1,000 of 1,000 tokens after 2 of 5 runs"
    )


def test_every_scenario_gets_its_progress_line_when_a_limit_holds_back_repeated_attempts(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    """s0 runs 3 times; the limit is reached after its second attempt: its third and the
    other scenarios never start, and each still has its line, with its status and why."""
    text = contract(*["[usage:fake/m:400:100:0]"] * 3)
    write_contract(text.replace("  - name: s0\n", "  - name: s0\n    repeat: 3\n", 1))
    configure(workspace, "concurrency: 1\nbudget: {max_tokens: 1000}\n")
    assert main(["run", ".", "--no-color"]) == 1
    assert gateway.started == ["s0", "s0"]
    reason = "run budget spent: 1,000 of 1,000 tokens after 2 of 5 runs"
    report = report_of(workspace)
    assert [s["status"] for s in report["scenarios"]] == ["pass", "skip", "skip"]
    lines = capsys.readouterr().out.splitlines()
    progress = [line for line in lines if line.startswith("[")]
    assert len(progress) == 3, lines
    assert progress[0].startswith("[1/3] PASS  case.clawspec.yaml::s0 (")
    assert progress[0].endswith(" 2/2 attempts passed (1.00, 95% CI 0.34-1.00)")
    held = f"      1 of 3 attempts skipped: not run: {reason}"
    assert lines[lines.index(progress[0]) + 1] == held
    for n, line in enumerate(progress[1:], 1):
        assert line.startswith(f"[{n + 1}/3] SKIP  case.clawspec.yaml::s{n} ("), lines
        assert lines[lines.index(line) + 1] == f"      not run: {reason}"


def test_of_many_scenarios_a_limit_kept_from_running_a_few_lines_show_the_summary_counts(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    """A spend limit reached early in a large suite leaves thousands that never ran: ten
    progress lines show them, then one line says the rest are counted in the summary."""
    write_contract(contract(*["[usage:fake/m:800:200:0]"] * 30))
    configure(workspace, "concurrency: 1\nbudget: {max_tokens: 1000}\n")
    assert main(["run", ".", "--no-color"]) == 1
    lines = capsys.readouterr().out.splitlines()
    progress = [line for line in lines if line.startswith("[")]
    assert progress[0].startswith("[1/30] PASS  case.clawspec.yaml::s0 (")
    skipped = [line for line in progress if " SKIP  " in line]
    assert [line.split(" ", 1)[0] for line in skipped] == [f"[{n}/30]" for n in range(2, 12)]
    more = "      … the other scenarios not run for the same reason are counted in the summary"
    assert lines.count(more) == 1 and lines.index(more) > lines.index(skipped[-1])
    assert len(report_of(workspace)["scenarios"]) == 30


def test_under_the_limit_the_run_passes_and_says_what_it_spent(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    write_contract(contract(*["[usage:fake/m:400:100:0.01]"] * 3))
    assert main(["run", ".", "--max-cost-usd", "5", "--max-tokens", "2000000"]) == 0
    assert "Budget: cost $0.03 of $5.00, 1,500 of 2,000,000 tokens; 3 of 3 agent runs" in (
        capsys.readouterr().out
    )


def _run_past_the_limit(workspace: Path, write_contract) -> subprocess.Popen[str]:
    """The real CLI over five runs at concurrency 2 and a $0.50 limit: s0 (and the last three)
    wait at the gateway for their gate, s1 alone spends $1.00."""
    write_contract(
        contract(
            "[wait:first] [usage:fake/m:1000:0:0.1]",
            "[usage:fake/m:1000:0:1.0]",
            *["[wait:rest] [usage:fake/m:1000:0:0.1]"] * 3,
        )
    )
    configure(workspace, "concurrency: 2\nbudget: {max_cost_usd: 0.5}\n")
    return subprocess.Popen(
        [sys.executable, "-m", "clawspec", "run", ".", "--no-color"],
        cwd=workspace,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_runs_in_flight_when_the_limit_is_reached_finish_and_are_counted(
    workspace: Path, write_contract, gateway: SpendingGateway
) -> None:
    """s0 is held at the gateway while s1 goes over the limit; s0 is let go only once s1 has
    been reported (its progress line read from the real CLI's output), so the limit is
    reached while s0 is in flight. The other lane may have started s2 before s1's checks
    counted it (a lane starts the next run as soon as the gateway answers): s2 is held too,
    and is then in flight as well."""
    child = _run_past_the_limit(workspace, write_contract)
    assert child.stdout is not None
    lines: list[str] = []
    for text in child.stdout:
        lines.append(text)
        if "case.clawspec.yaml::s1" in text:
            gateway.gate("first").set()  # s1 is counted: now let the runs in flight finish
            gateway.gate("rest").set()
    assert child.wait(timeout=120) == 1, "".join(lines)
    started = sorted(gateway.started)
    assert started in (["s0", "s1"], ["s0", "s1", "s2"])
    report = report_of(workspace)
    statuses = [s["status"] for s in report["scenarios"]]
    assert statuses == ["pass"] * len(started) + ["skip"] * (5 - len(started))
    budget = report["budget"]
    assert budget["stopped"] == "run budget spent: $1.00 of $0.50 after 1 of 5 runs"
    # Every run in flight finished and was counted: s0 (and s2 if it had started).
    assert budget["runs"] == len(started)
    assert round(budget["cost_usd"], 9) == round(1.0 + 0.1 * (len(started) - 1), 9)


def test_a_signal_after_the_limit_stopped_the_run_leaves_it_the_limits_verdict(
    workspace: Path, write_contract, gateway: SpendingGateway
) -> None:
    """The limit is reached (s1) while s0 is in flight; a SIGINT then cuts nothing short: s0
    finishes, and what never started was held back by the limit, not by the signal. The run
    fails by its budget (1), its skips name the limit, and it is not 'interrupted' (130)."""
    child = _run_past_the_limit(workspace, write_contract)
    assert child.stdout is not None
    lines: list[str] = []
    for text in child.stdout:
        lines.append(text)
        if "case.clawspec.yaml::s1" in text:  # the limit is reached: now the signal
            child.send_signal(signal.SIGINT)
        if "SIGINT: starting no more scenarios" in text:
            gateway.gate("first").set()
            gateway.gate("rest").set()
    assert child.wait(timeout=120) == 1, "".join(lines)
    report = report_of(workspace)
    assert report["interrupted"] is False
    reason = "run budget spent: $1.00 of $0.50 after 1 of 5 runs"
    assert report["budget"]["stopped"] == reason
    skipped = [s["message"] for s in report["scenarios"] if s["status"] == "skip"]
    assert skipped and all(message == f"not run: {reason}" for message in skipped), skipped
    assert "INTERRUPTED" not in "".join(lines)
    note = "note: the spend limit had already stopped the run, and the scenarios running finished"
    assert note in "".join(lines)


def test_a_run_of_unknown_cost_stops_a_cost_budget_naming_the_model(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    write_contract(contract("[usage:acme/mystery-7:1000:100:none]", "[usage:fake/m:1:1:0]"))
    configure(workspace, "concurrency: 1\nbudget: {max_cost_usd: 100}\n")
    assert main(["run", "."]) == 1
    assert gateway.started == ["s0"]
    report = report_of(workspace)
    stopped = report["budget"]["stopped"]
    assert stopped.startswith("run budget cannot be kept: the cost of 'case.clawspec.yaml::s0'")
    assert "no model_pricing for 'mystery-7'; add it to model_pricing" in stopped
    assert report["scenarios"][1] == {**report["scenarios"][1], "status": "skip"}
    assert report["scenarios"][0]["evidence"]["tokens"]["cost_usd"] is None
    assert "cost unknown (1 run unpriced)" in capsys.readouterr().out


def test_a_run_without_recorded_usage_stops_a_token_budget_and_is_never_0_tokens(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    """Tokens nobody recorded are unknown, not 0: a token budget cannot be kept past such a
    run (it would never stop), and every output says the count is unknown."""
    write_contract(contract("[nousage]", "[usage:fake/m:1:1:0]"))
    configure(workspace, "concurrency: 1\nbudget: {max_tokens: 10}\n")
    assert main(["run", "."]) == 1
    assert gateway.started == ["s0"]
    report = report_of(workspace)
    assert report["budget"]["stopped"].startswith(
        "run budget cannot be kept: the tokens of 'case.clawspec.yaml::s0' are unknown (no token "
        "usage was recorded for it; a budget needs the gateway's run record"
    )
    assert report["budget"]["unmetered_runs"] == 1
    assert "cost unknown (1 run unpriced), unknown of 10 tokens (1 run without usage)" in (
        capsys.readouterr().out
    )


def test_a_limit_reached_by_the_last_run_stopped_nothing_and_says_no_stop(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    # The second run's cost is unknown, which stops a cost budget, but no run was left to
    # hold back: both ran, the suite is fully checked.
    write_contract(contract("[usage:fake/m:1000:0:0.1]", "[usage:acme/mystery-7:1000:100:none]"))
    configure(workspace, "concurrency: 1\nbudget: {max_cost_usd: 0.5}\n")
    assert main(["run", "."]) == 0
    assert gateway.started == ["s0", "s1"]
    budget = report_of(workspace)["budget"]
    assert (budget["runs"], budget["planned"], budget["stopped"]) == (2, 2, None)
    out = capsys.readouterr().out
    assert "stopped" not in out and "partly checked" not in out
    assert "cost at least $0.10 (1 run unpriced) of $0.50" in out
    assert "add 'mystery-7' to model_pricing" in out
    assert "\nPASSED\n" in out


def test_a_model_name_with_a_line_break_stays_on_the_spend_line(
    workspace: Path, write_contract, gateway: SpendingGateway, github: Path, capsys
) -> None:
    """A model name comes from the gateway's records: one holding a line break and a workflow
    command must not start a line of its own in the terminal or the step outputs."""
    hostile = quote("acme/evil\n::error file=a.yaml,line=1::INJECTED\x07", safe="/")
    write_contract(contract(f"[usage:{hostile}:1000:100:none]"))
    assert main(["run", "."]) == 0
    out = capsys.readouterr().out
    assert "add 'evil ::error file=a.yaml,line=1::INJECTED' to model_pricing" in out
    written = out + (github / "output").read_text("utf-8")
    assert not [line for line in written.splitlines() if line.startswith("::error")]
    assert "\x07" not in written


def test_model_pricing_prices_usage_without_a_native_cost(
    workspace: Path, write_contract, gateway: SpendingGateway
) -> None:
    write_contract(contract("[usage:acme/mystery-7:1000000:500000:none]"))
    configure(
        workspace,
        "budget: {max_cost_usd: 100}\n"
        "model_pricing: {mystery-7: {input_per_mtok: 3, output_per_mtok: 15}}\n",
    )
    assert main(["run", "."]) == 0
    report = report_of(workspace)
    assert report["scenarios"][0]["evidence"]["tokens"]["cost_usd"] == 10.5
    assert report["budget"]["stopped"] is None and report["budget"]["cost_usd"] == 10.5


def test_without_a_budget_an_unknown_cost_reads_unknown_in_every_output_never_0(
    workspace: Path,
    write_contract,
    gateway: SpendingGateway,
    github: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(contract(*["[usage:acme/mystery-7:1000:100:none]"] * 2))
    configure(workspace, "junit: reports/junit.xml\n")
    assert main(["run", "."]) == 0  # no budget: an unknown cost fails nothing
    line = "Spent: cost unknown (2 runs unpriced), 2,200 tokens; 2 of 2 agent runs; "
    line += "add 'mystery-7' to model_pricing"
    out = capsys.readouterr().out
    summary = (github / "summary.md").read_text("utf-8")
    values = outputs(github)
    junit = (workspace / "reports" / "junit.xml").read_text("utf-8")
    assert line in out and line in junit and values["spent"] == line
    assert "cost unknown (2 runs unpriced)" in summary
    assert values["cost_usd"] == "unknown"
    for text in (out, summary, junit, values["spent"]):
        assert "$0" not in text and "0.0000" not in text
    report = report_of(workspace)
    assert report["budget"]["unpriced_runs"] == 2 and report["budget"]["cost_usd"] == 0


def test_max_duration_starts_no_run_past_the_deadline(
    workspace: Path, write_contract, gateway: SpendingGateway
) -> None:
    """A deadline of a microsecond has passed before the first run could start (no timing
    is asserted: only that nothing started and why)."""
    write_contract(contract("[usage:fake/m:1:1:0]", "[usage:fake/m:1:1:0]"))
    assert main(["run", ".", "--max-duration", "0.000001s"]) == 1
    assert gateway.started == []
    stopped = report_of(workspace)["budget"]["stopped"]
    assert stopped.startswith("run budget spent: ") and stopped.endswith("after 0 of 2 runs")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_deadline_is_read_from_the_clock() -> None:
    clock = FakeClock()
    budget = Budget(Limits(max_duration_s=1800), clock=clock)
    budget.start(120)
    clock.now += 1799.9
    assert budget.reason() is None
    clock.now += 0.1
    assert budget.reason() == "run budget spent: 30 min 0 s of 30 min 0 s after 0 of 120 runs"
    clock.now += 60  # once reached, the reason stays the one of that moment
    assert budget.reason() == "run budget spent: 30 min 0 s of 30 min 0 s after 0 of 120 runs"
    assert budget.report().stopped == budget.reason()


def test_a_shard_keeps_its_share_and_merge_reports_the_whole() -> None:
    settings = BudgetSettings(max_cost_usd=5.0, max_tokens=2_000_000, max_duration="30m")
    share = Limits.of(settings, 4)
    assert (share.max_cost_usd, share.max_tokens, share.max_duration_s) == (1.25, 500_000, 1800)
    assert share.shard_share == 4
    assert Limits.of(settings, None) == Limits(5.0, 2_000_000, 1800.0, None)

    def shard(cost: float, tokens: int, stopped: str | None = None) -> RunReport:
        spent = BudgetReport(
            max_cost_usd=1.25, max_tokens=500_000, max_duration_s=1800, shard_share=4,
            planned=30, runs=10, cost_usd=cost, tokens=tokens, duration_s=60, stopped=stopped,
        )  # fmt: skip
        return RunReport(
            version="0", run_id="r", started_at="", duration_ms=0, totals=Totals(),
            scenarios=[], budget=spent,
        )  # fmt: skip

    whole = merged(
        [
            ("1/4", shard(1.0, 100_000)),
            ("2/4", shard(1.3, 90_000, "run budget spent: $1.30 of $1.25 after 9 of 30 runs")),
            ("3/4", shard(0.5, 50_000)),
            ("4/4", shard(0.2, 10_000)),
        ]
    )
    assert whole is not None
    assert (whole.max_cost_usd, whole.max_tokens, whole.shard_share) == (5.0, 2_000_000, None)
    assert (whole.cost_usd, whole.tokens, whole.runs, whole.planned) == (3.0, 250_000, 40, 120)
    assert whole.stopped == "shard 2/4: run budget spent: $1.30 of $1.25 after 9 of 30 runs"
    assert spend_line(whole) == (
        "Budget: cost $3.00 of $5.00, 250,000 of 2,000,000 tokens, 1 min 0 s of 30 min 0 s; "
        "40 of 120 agent runs"
    )


def test_a_budget_stop_fails_the_run_whatever_fail_on_says() -> None:
    from clawspec.reports.outcome import Policy, decide

    stopped = RunReport(
        version="0", run_id="r", started_at="", duration_ms=0, totals=Totals(), scenarios=[],
        budget=BudgetReport(max_tokens=1, stopped="run budget spent: 2 of 1 tokens"),
    )  # fmt: skip
    assert decide(stopped, Policy("never", None)).exit_code == 1
    assert decide(stopped.model_copy(update={"budget": None}), Policy("never", None)).exit_code == 0


def test_bad_budget_values_are_usage_errors(workspace: Path, capsys) -> None:
    assert main(["run", ".", "--max-duration", "soon"]) == 2
    assert "--max-duration: budget.max_duration: expected a duration such as 90s" in (
        capsys.readouterr().err
    )


def test_budget_threads_are_safe_to_count_from(tmp_path: Path) -> None:
    """Counting from many checking threads at once loses no run."""
    from tests.reports.factory import scenario

    budget = Budget(Limits())
    budget.start(400)
    result = scenario("a", "pass")
    threads = [
        threading.Thread(target=lambda: [budget.add("a", result) for _ in range(50)])
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.report().runs == 400


def test_a_contract_states_a_run_cost_limit_without_a_trace_backend(
    workspace: Path, write_contract, gateway: SpendingGateway
) -> None:
    """token_budget.max_cost_usd: native cost, else model_pricing; unknown is an error."""
    write_contract(
        HEADER
        + "".join(
            f'  - name: {name}\n    when: {{invoke: "go {usage}"}}\n'
            "    then: [{type: token_budget, max_cost_usd: 0.05}]\n"
            for name, usage in (
                ("cheap", "[usage:fake/m:1000:0:0.01]"),
                ("dear", "[usage:fake/m:1000:0:0.1]"),
                ("priced", "[usage:acme/listed:1000000:0:none]"),
                ("unpriced", "[usage:acme/mystery-7:1000:0:none]"),
            )
        )
    )
    configure(workspace, "model_pricing: {listed: {input_per_mtok: 0.04, output_per_mtok: 1}}\n")
    assert main(["run", "."]) == 1
    checks = {s["name"]: s["assertions"][0] for s in report_of(workspace)["scenarios"]}
    assert (checks["cheap"]["status"], checks["cheap"]["message"]) == (
        "pass",
        "cost $0.01 ≤ $0.05 (from 1 model call in the plugin's events)",
    )
    assert (checks["dear"]["status"], checks["dear"]["message"]) == (
        "fail",
        "cost $0.1 > $0.05 (from 1 model call in the plugin's events)",
    )
    assert checks["dear"]["value"]["cost_usd"] == 0.1
    assert (
        checks["priced"]["status"] == "pass"
        and "cost $0.04 ≤ $0.05" in (checks["priced"]["message"])
    )
    assert checks["unpriced"]["status"] == "error"
    assert (
        "no model_pricing for 'mystery-7'; add it to model_pricing"
        in (checks["unpriced"]["message"])
    )


def test_the_dry_run_shows_the_expected_spend_from_the_baseline_next_to_the_budget(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    write_contract(contract(*["[usage:fake/m:1000:100:0.1]"] * 4))
    configure(workspace, "concurrency: 1\n")
    assert main(["run", ".", "--max-cost-usd", "0.25"]) == 1  # two scenarios skipped
    baseline = workspace.parent / "baseline.json"
    baseline.write_text((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    capsys.readouterr()
    assert main(["run", ".", "--dry-run", "--baseline", str(baseline), "--max-cost-usd", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "budget: $5.00",
        "expected spend (baseline medians): $0.30, 3,300 tokens for 4 agent runs; "
        "1 scenario with no run in the baseline",
    ]
    assert gateway.started == ["s0", "s1", "s2"]  # the dry run started nothing


def test_the_dry_runs_expected_spend_reads_each_variants_own_runs_in_the_baseline(
    workspace: Path, write_contract, gateway: SpendingGateway, capsys
) -> None:
    write_contract(contract("[usage:fake/m:1000:100:0.1]", "[usage:fake/m:2000:0:0.2]"))
    configure(workspace, "concurrency: 1\nvariants:\n  - {name: a, model: fake/m}\n  - {name: b}\n")
    assert main(["run", "."]) == 0
    baseline = workspace.parent / "baseline.json"
    baseline.write_text((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    capsys.readouterr()
    assert main(["run", ".", "--dry-run", "--baseline", str(baseline), "--variant", "b"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "expected spend (baseline medians): $0.30, 3,100 tokens for 2 agent runs"
    )
