"""`clawspec merge` joins the runs of different variants (one CI job per `--variant NAME`),
and the shards of a run split by (scenario, variant), into the report of one run: the same
verdicts, the same side-by-side table, the same gate and exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.config.settings import RegressionSettings, VariantSettings
from clawspec.regression.variants import with_variants
from clawspec.reports.json_report import render_json
from clawspec.reports.model import RunReport, ScenarioResult, ShardInfo, Totals
from clawspec.reports.variants import VariantTable, text_table, variant_table
from tests.reports.factory import assertion, scenario
from tests.sharding.conftest import read_report

HAIKU = """  - name: haiku
    model: anthropic/claude-haiku-4-5
"""
CONFIG = f"""report_dir: reports
variants:
  - name: sonnet
    model: anthropic/claude-sonnet-4-6
{HAIKU}  - name: mini
    model: openai/gpt-5-mini
    required: false
"""
VARIANTS = [
    VariantSettings(name="sonnet", model="anthropic/claude-sonnet-4-6"),
    VariantSettings(name="haiku", model="anthropic/claude-haiku-4-5"),
    VariantSettings(name="mini", model="openai/gpt-5-mini", required=False),
]
# scenario -> verdict on sonnet, haiku, mini: 'tools' regresses on haiku (required)
VERDICTS = {
    "smoke": ("pass", "pass", "pass"),
    "tools": ("pass", "fail", "fail"),
    "broken": ("fail", "fail", "pass"),  # the reference fails it too: not a regression
}


def results(variant: str) -> list[ScenarioResult]:
    column = [v.name for v in VARIANTS].index(variant)
    return [
        scenario(name, statuses[column], assertion(statuses[column]), variant=variant)
        for name, statuses in VERDICTS.items()
    ]


def run_report(items: list[ScenarioResult], run_id: str, **kw: object) -> RunReport:
    return RunReport(
        version="0.1.0",
        run_id=run_id,
        started_at="2026-11-22T10:00:00+00:00",
        duration_ms=5000,
        totals=Totals.of(items),
        scenarios=items,
        **kw,  # type: ignore[arg-type]
    )


def write(path: Path, report: RunReport) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_json(report), encoding="utf-8")
    return path


def one_run() -> RunReport:
    """What one run of every variant reports (scenario by scenario, each variant in turn)."""
    by_variant = {v.name: results(v.name) for v in VARIANTS}
    items = [by_variant[v.name][i] for i in range(len(VERDICTS)) for v in VARIANTS]
    return with_variants(run_report(items, "whole"), VARIANTS, "sonnet", RegressionSettings())


def table_of(data: dict) -> VariantTable:
    table = variant_table(RunReport.model_validate(data))
    assert table is not None
    return table


def verdicts(data: dict) -> list[tuple[str, str | None, str]]:
    """Each result's key and verdict, in report order (one run's: scenario, then the
    configured variant order)."""
    return [(s["id"], s["variant"], s["status"]) for s in data["scenarios"]]


@pytest.fixture
def config(workspace: Path) -> Path:
    (workspace / "clawspec.yaml").write_text(CONFIG, encoding="utf-8")
    return workspace


def test_variant_jobs_merged_give_the_report_of_one_run(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = one_run()
    for variant in ("haiku", "mini", "sonnet"):  # in any order
        write(config / "jobs" / f"{variant}.json", run_report(results(variant), variant))
    code = main(["merge", "jobs", "--fail-on", "regression", "--report-json", "merged.json"])
    out = capsys.readouterr().out
    merged = read_report(config / "merged.json")
    assert code == 1  # haiku regressed against sonnet
    expected = RunReport.model_validate_json(render_json(whole)).model_dump(mode="json")
    assert verdicts(merged) == verdicts(expected)
    assert text_table(table_of(merged)) == text_table(table_of(expected))
    assert [s["name"] for s in merged["scenarios"][:3]] == ["smoke"] * 3  # side by side
    # in the configured order, not the order the files were read in (haiku, mini, sonnet)
    assert [s["variant"] for s in merged["scenarios"][:3]] == ["sonnet", "haiku", "mini"]
    gates = {g["variant"]: g for g in merged["variant_comparisons"]}
    assert gates["haiku"]["counts"]["regressed"] == 1 and gates["haiku"]["required"]
    assert gates["haiku"]["counts"]["still_failing"] == 1
    assert gates["mini"]["counts"]["regressed"] == 1 and not gates["mini"]["required"]
    assert [v["name"] for v in merged["variants"]] == ["sonnet", "haiku", "mini"]
    assert "haiku against sonnet: 1 regressed, 1 fixed" not in out  # broken is still failing
    assert "haiku against sonnet: 1 regressed, 1 still failing, 1 unchanged; fails the job" in out


def test_without_a_required_regression_the_merge_passes_the_gate(config: Path) -> None:
    # Only the reference and the advisory variant are configured (and run) here.
    (config / "clawspec.yaml").write_text(CONFIG.replace(HAIKU, ""), encoding="utf-8")
    for variant in ("sonnet", "mini"):  # mini (advisory) regresses: shown, not failing
        write(config / "jobs" / f"{variant}.json", run_report(results(variant), variant))
    assert main(["merge", "jobs", "--fail-on", "regression", "--report-json", "m.json"]) == 0
    merged = read_report(config / "m.json")
    assert merged["variant_comparisons"][0]["regressions"]
    assert merged["variants_missing"] == []
    # The normal policy fails on what the reference (a required variant) fails.
    assert main(["merge", "jobs", "--report-json", "m2.json"]) == 1


def test_a_required_variant_without_a_report_makes_the_merge_incomplete(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """haiku's job died before writing its report: the merge of the others must not pass the
    gate on what haiku never ran (nor be saved as a baseline); an advisory variant missing is
    not a gap in the gate."""
    for variant in ("sonnet", "mini"):
        write(config / "jobs" / f"{variant}.json", run_report(results(variant), variant))
    code = main(
        ["merge", "jobs", "--fail-on", "never", "--report-json", "m.json", "--save-baseline",
         "--baseline", f"dir:{config / 'history'}"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    merged = read_report(config / "m.json")
    assert merged["variants_missing"] == ["haiku"]
    assert "no report holds a result of the required variant(s) haiku" in err
    assert "baseline not saved: no report holds a result of the required variant(s) haiku" in err
    assert not (config / "history").exists()
    write(config / "jobs" / "haiku.json", run_report(results("haiku"), "haiku"))
    (config / "jobs" / "mini.json").unlink()  # advisory: its absence leaves the gate whole
    assert main(["merge", "jobs", "--fail-on", "never", "--report-json", "m2.json"]) == 0
    assert read_report(config / "m2.json")["variants_missing"] == []


def test_shards_of_scenario_variant_pairs_merge_into_the_table_of_one_run(config: Path) -> None:
    whole = one_run()
    pairs = whole.scenarios
    for index in (1, 2):
        positions = [p for p in range(len(pairs)) if p % 2 == index - 1]
        shard = ShardInfo(
            index=index, total=2, fingerprint="f" * 64, selected=len(pairs), positions=positions
        )
        part = run_report([pairs[p] for p in positions], f"s{index}", shard=shard)
        write(config / "shards" / f"{index}.json", part)
    assert main(["merge", "shards", "--fail-on", "regression", "--report-json", "m.json"]) == 1
    merged = read_report(config / "m.json")
    expected = RunReport.model_validate_json(render_json(whole)).model_dump(mode="json")
    assert [(s["id"], s["variant"], s["status"]) for s in merged["scenarios"]] == [
        (s["id"], s["variant"], s["status"]) for s in expected["scenarios"]
    ]
    assert text_table(table_of(merged)) == text_table(table_of(expected))
    assert merged["variant_comparisons"] == expected["variant_comparisons"]


def test_sharded_variant_jobs_merge_too(config: Path) -> None:
    """`--variant haiku --shard i/2` in one job, `--variant sonnet` in another."""
    haiku = results("haiku")
    for index in (1, 2):
        positions = [p for p in range(len(haiku)) if p % 2 == index - 1]
        shard = ShardInfo(
            index=index, total=2, fingerprint="h" * 64, selected=len(haiku), positions=positions
        )
        write(
            config / "jobs" / f"haiku-{index}.json",
            run_report([haiku[p] for p in positions], f"h{index}", shard=shard),
        )
    write(config / "jobs" / "sonnet.json", run_report(results("sonnet"), "sonnet"))
    assert main(["merge", "jobs", "--fail-on", "regression", "--report-json", "m.json"]) == 1
    merged = read_report(config / "m.json")
    assert len(merged["scenarios"]) == 6
    assert [g["variant"] for g in merged["variant_comparisons"]] == ["haiku"]


def test_two_runs_of_the_same_variant_are_refused(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(config / "jobs" / "a.json", run_report(results("haiku"), "a"))
    write(config / "jobs" / "b.json", run_report(results("haiku"), "b"))
    assert main(["merge", "jobs/a.json", "jobs/b.json"]) == 2
    err = capsys.readouterr().err
    assert "both hold results of variant 'haiku'" in err and "jobs/a.json" in err


def test_a_merge_without_the_variants_configured_says_what_it_cannot_judge(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Merged where clawspec.yaml is not at hand (a job that only downloaded the reports),
    there is no reference and no advisory variant: the exit code is not the one run's."""
    for variant in ("sonnet", "haiku", "mini"):
        write(config / "jobs" / f"{variant}.json", run_report(results(variant), variant))
    assert main(["merge", "jobs", "--fail-on", "regression", "--report-json", "m.json"]) == 1
    assert "warning" not in capsys.readouterr().err
    (config / "bare.yaml").write_text("report_dir: reports\n", encoding="utf-8")
    argv = ["merge", "jobs", "--config", "bare.yaml", "--report-json", "bare.json"]
    assert main(argv) == 1  # mini's failures count as a required variant's
    err = capsys.readouterr().err
    assert "the reports ran on variant(s) haiku, mini, sonnet, which " in err
    assert "bare.yaml does not define" in err and "--config FILE" in err
    assert read_report(config / "bare.json")["variant_comparisons"] == []


def test_a_parts_own_comparison_does_not_speak_for_the_merge(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part compared under its job's `fail_on: regression` without a baseline: the merge,
    judged by `fail`, says nothing of that part's missing baseline."""
    from clawspec.reports.model import Comparison

    missing = Comparison(baseline_missing="no baseline configured (set --baseline)")
    write(
        config / "jobs" / "sonnet.json",
        run_report(results("sonnet"), "sonnet", comparison=missing),
    )
    assert main(["merge", "jobs", "--fail-on", "fail", "--report-json", "m.json"]) == 1
    out = capsys.readouterr().out
    assert "No baseline" not in out and "baseline" not in out.lower()
    assert read_report(config / "m.json")["comparison"] is None
