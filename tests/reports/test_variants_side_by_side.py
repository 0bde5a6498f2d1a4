"""Variants side by side in every output: the terminal's final table, the job summary and the
PR comment (within their size limits), JUnit (one testcase per scenario and variant, as its
consumers parse it), annotations and Code Quality (naming the variant)."""

from __future__ import annotations

import io
import json
import re

from junitparser.xunit2 import JUnitXml

from clawspec.config.settings import RegressionSettings, VariantSettings
from clawspec.regression.variants import with_variants
from clawspec.reports.codequality import render_codequality
from clawspec.reports.github.annotations import select_annotations
from clawspec.reports.github.pr_comment import BODY_BUDGET_BYTES, render_pr_comment
from clawspec.reports.github.summary import render_summary
from clawspec.reports.junit import render_junit, write_junit
from clawspec.reports.model import (
    AttemptStats,
    RunReport,
    ScenarioEvidence,
    TokenTotals,
)
from clawspec.reports.terminal import TerminalReporter
from clawspec.reports.variants import variant_table
from tests.reports.factory import assertion, report, scenario
from tests.reports.test_junit_consumers import SCHEMA

VARIANTS = [
    VariantSettings(name="sonnet", model="anthropic/claude-sonnet-4-6"),
    VariantSettings(name="haiku", model="anthropic/claude-haiku-4-5"),
    VariantSettings(name="mini", model="openai/gpt-5-mini", required=False),
]


def tokens(total: int, cost: float | None) -> ScenarioEvidence:
    unpriced = [] if cost is not None else ["openai/gpt-5-mini"]
    return ScenarioEvidence(
        tokens=TokenTotals(total=total, cost_usd=cost, unpriced=unpriced, source="plugin")
    )


def three_variants() -> RunReport:
    """'tools' fails on haiku (required: a regression) and on mini (advisory); 'drafts[easter]'
    is an outline row passing everywhere; mini's cost is unknown."""
    rows = []
    for name, example, statuses in (
        ("smoke", None, ("pass", "pass", "pass")),
        ("tools", None, ("pass", "fail", "fail")),
        ("drafts", "easter", ("pass", "pass", "pass")),
    ):
        for variant, status, cost, ms in zip(
            ("sonnet", "haiku", "mini"),
            statuses,
            (0.02, 0.004, None),
            (4000, 2000, 3000),
            strict=True,
        ):
            shown = name if example is None else f"{name}[{example}]"
            rows.append(
                scenario(
                    shown,
                    status,
                    assertion(status, line=14),
                    variant=variant,
                    example=example,
                    duration_ms=ms,
                    evidence=tokens(1000, cost),
                )
            )
    return with_variants(report(*rows), VARIANTS, "sonnet", RegressionSettings())


def test_the_table_has_a_row_per_scenario_and_a_column_per_variant() -> None:
    table = variant_table(three_variants())
    assert table is not None
    assert [c.name for c in table.columns] == ["sonnet", "haiku", "mini"]
    assert [r.identity.name for r in table.rows] == ["smoke", "tools", "drafts[easter]"]
    assert all(r.identity.variant is None for r in table.rows)
    assert [r.differs for r in table.rows] == [False, True, False]
    sonnet, haiku, mini = table.columns
    assert (sonnet.passed, haiku.passed, mini.passed) == (3, 2, 2)
    assert sonnet.tokens == 3000 and sonnet.cost == "$0.06"
    assert mini.cost.startswith("unknown")  # never $0
    assert haiku.duration_ms_median == 2000
    assert haiku.gate is not None and haiku.gate.regressions and sonnet.gate is None
    # No evidence of the models that answered: nothing is claimed.
    assert all(c.models == () and c.models_text() == "" for c in table.columns)


def test_a_report_without_variants_has_no_table() -> None:
    assert variant_table(report(scenario("smoke", "pass"))) is None
    assert "Variants side by side" not in render_summary(report(scenario("smoke", "pass")))


def test_the_terminal_shows_the_table_and_why_the_gate_fails() -> None:
    out = io.StringIO()
    TerminalReporter(out, colour=False).summary(three_variants())
    text = out.getvalue()
    table = text[text.index("Variants side by side:") :]
    lines = table.splitlines()
    assert re.match(r"\s+scenario\s+sonnet \(reference\)\s+haiku\s+mini \(advisory\)$", lines[1])
    assert re.match(r"\s+tools\s+pass\s+FAIL ↓ regressed\s+FAIL ↓ regressed$", lines[3])
    assert re.search(r"cost\s+\$0\.06\s+\$0\.012\s+unknown \(3 runs unpriced\)", table)
    assert re.search(r"median duration\s+4 s\s+2 s\s+3 s", table)
    assert "haiku against sonnet: 1 regressed, 2 unchanged; fails the job" in table
    assert "mini against sonnet: 1 regressed, 2 unchanged; advisory: never fails the job" in table
    assert "REGRESSED skills/newsletter/tests/scenarios.yaml::tools @ haiku: pass → fail" in table


def test_the_summary_and_the_pr_comment_show_the_table() -> None:
    data = three_variants()
    summary = render_summary(data)
    block = summary[summary.index("### Variants side by side") :]
    assert "| Scenario | sonnet (reference) | haiku | mini (advisory) |" in block
    assert (
        "| tools `skills/newsletter/tests/scenarios.yaml:5` | ✅ pass | ❌ fail 🔻 regressed "
        "| ❌ fail 🔻 regressed |" in block
    )
    assert "| drafts\\[easter\\] `skills/newsletter/tests/scenarios.yaml:5` |" in block
    assert "| **cost** | \\$0.06 | \\$0.012 | unknown (3 runs unpriced) |" in block
    assert "- 🔻 haiku against sonnet: 1 regressed" in block
    comment = render_pr_comment(data, "<!-- clawspec:w:j -->")
    assert "| **pass rate** | 100% (3/3) | 67% (2/3) | 67% (2/3) |" in comment


def test_large_runs_stay_within_the_summary_and_comment_limits() -> None:
    rows = [
        scenario(f"case-{i:04d}", "fail" if i % 3 == 0 and v == "haiku" else "pass", variant=v)
        for i in range(1500)
        for v in ("sonnet", "haiku", "mini")
    ]
    data = with_variants(report(*rows), VARIANTS, "sonnet", RegressionSettings())
    comment = render_pr_comment(data, "<!-- clawspec:w:j -->")
    assert len(comment.encode()) <= BODY_BUDGET_BYTES
    assert "### Variants side by side" in comment
    assert "(JSON report) |" in comment  # rows were cut, and it says so
    assert "| **pass rate** | 100% (1,500/1,500) | 67% (1,000/1,500) |" in comment
    summary = render_summary(data, max_bytes=200_000)
    assert len(summary.encode()) <= 200_000 and "| **median duration** |" in summary


def test_repeats_show_the_pass_rate_in_each_cell() -> None:
    def stats(passes: int) -> AttemptStats:
        return AttemptStats(attempts=5, passes=passes, pass_rate=passes / 5, ci_low=0, ci_high=1)

    data = with_variants(
        report(
            scenario("tools", "pass", variant="sonnet", attempts=stats(5)),
            scenario("tools", "fail", variant="haiku", attempts=stats(0)),
        ),
        VARIANTS[:2],
        "sonnet",
        RegressionSettings(),
    )
    summary = render_summary(data)
    assert "| ✅ 5/5 pass | ❌ 0/5 fail 🔻 regressed |" in summary


def test_junit_has_one_testcase_per_scenario_and_variant() -> None:
    data = three_variants()
    xml = render_junit(data)
    SCHEMA.validate(xml.decode("utf-8"))
    cases = [case for suite in JUnitXml.fromstring(xml) for case in suite]
    keys = [(case.classname, case.name) for case in cases]
    assert len(keys) == len(set(keys)) == 9  # GitLab and Jenkins key a test on both
    assert ("skills/newsletter/tests/scenarios", "drafts[easter] @ haiku") in keys
    failed = {case.name for case in cases if not case.is_passed}
    assert failed == {"tools @ haiku", "tools @ mini"}
    strict = [c.name for s in JUnitXml.fromstring(render_junit(data, strict=True)) for c in s]
    assert strict == [case.name for case in cases]


def test_junit_written_to_a_file_reads_back_with_junitparser(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write_junit(three_variants(), tmp_path / "junit.xml")
    cases = [case for suite in JUnitXml.fromfile(str(path)) for case in suite]
    assert sorted(c.name for c in cases if c.name.startswith("smoke")) == [
        "smoke @ haiku",
        "smoke @ mini",
        "smoke @ sonnet",
    ]


def test_annotations_and_code_quality_name_the_variant() -> None:
    data = three_variants()
    titles = [a.title or "" for a in select_annotations(data).annotations]
    assert any("tools @ haiku" in t for t in titles) and any("tools @ mini" in t for t in titles)
    findings = json.loads(render_codequality(data))
    described = [f["description"] for f in findings]
    assert any("tools @ haiku" in d for d in described)
    assert len({f["fingerprint"] for f in findings}) == len(findings)


def test_an_advisory_variants_failures_are_warnings_and_minor_findings() -> None:
    data = three_variants()
    levels = {
        (a.title or "").split(": ", 1)[1]: (a.level, (a.title or "").split(":")[0])
        for a in select_annotations(data).annotations
        if "tools @" in (a.title or "")
    }
    assert levels == {
        "tools @ haiku / artifact_exists": ("error", "ClawSpec FAIL"),
        "tools @ mini / artifact_exists": ("warning", "ClawSpec ADVISORY"),
    }
    severities = {
        f["description"].split(":")[0]: f["severity"]
        for f in json.loads(render_codequality(data))
        if f["description"].startswith("tools @")
    }
    assert severities == {"tools @ haiku": "major", "tools @ mini": "minor"}


def test_the_models_that_answered_come_from_the_evidence_and_show_a_fallback() -> None:
    def answered(*models: str) -> ScenarioEvidence:
        return ScenarioEvidence(models=list(models))

    data = with_variants(
        report(
            scenario(
                "a", "pass", variant="sonnet", evidence=answered("anthropic/claude-sonnet-4-6")
            ),
            scenario(
                "b", "pass", variant="sonnet", evidence=answered("anthropic/claude-sonnet-4-6")
            ),
            # haiku's override fell back once: both models show, with how often each answered
            scenario("a", "pass", variant="haiku", evidence=answered("anthropic/claude-haiku-4-5")),
            scenario(
                "b", "pass", variant="haiku", evidence=answered("anthropic/claude-sonnet-4-6")
            ),
        ),
        VARIANTS[:2],
        "sonnet",
        RegressionSettings(),
    )
    table = variant_table(data)
    assert table is not None
    assert [c.models_text() for c in table.columns] == [
        "anthropic/claude-sonnet-4-6",
        "anthropic/claude-haiku-4-5 (1), anthropic/claude-sonnet-4-6 (1)",
    ]
    assert (
        "| **models that answered** | anthropic/claude-sonnet-4-6 "
        "| anthropic/claude-haiku-4-5 (1), anthropic/claude-sonnet-4-6 (1) |"
    ) in render_summary(data)
