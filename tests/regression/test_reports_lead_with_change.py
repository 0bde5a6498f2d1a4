"""Every report leads with change: summary, terminal, outputs, JUnit and annotations."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from clawspec.config.settings import RegressionSettings
from clawspec.regression.apply import with_regression
from clawspec.reports.github.annotations import select_annotations
from clawspec.reports.github.outputs import output_values
from clawspec.reports.github.summary import render_summary
from clawspec.reports.junit import render_junit
from clawspec.reports.model import BaselineRef, RunReport, RunSource
from clawspec.reports.terminal import TerminalReporter
from tests.regression.test_compare import evidence, repeated
from tests.reports.factory import CONTRACT, assertion, report, scenario

REF = BaselineRef(
    source="dir:.clawspec-history",
    branch="main",
    commit="3f2c1ab9d0e8",
    created_at="2026-11-22T10:00:00+00:00",
)


def _runs() -> tuple[RunReport, RunReport]:
    baseline = report(
        scenario("breaks", "pass", evidence=evidence("read", tokens=1000)),
        scenario("heals", "fail", assertion("fail", "missing")),
        scenario("known-bad", "fail", assertion("fail", "still missing")),
        scenario("recall", "pass", evidence=evidence("memory_search", "write", tokens=1000)),
        repeated("wobbly", 3, 3),
    )
    current = report(
        scenario(
            "breaks",
            "fail",
            assertion("fail", "'out.md' not found", line=30),
            evidence=evidence("read", tokens=1000),
        ),
        scenario("heals", "pass"),
        scenario("known-bad", "fail", assertion("fail", "still missing")),
        scenario("recall", "pass", evidence=evidence("write", tokens=2010)),
        repeated("wobbly", 2, 3, 0.6, assertions=[assertion("fail", "flaked", line=44)]),
    )
    return current, baseline


def _compared() -> RunReport:
    current, baseline = _runs()
    return with_regression(current, RegressionSettings(), baseline=baseline, ref=REF)


def test_summary_puts_regressions_since_the_baseline_first_then_fixed_flaky_behaviour() -> None:
    text = render_summary(_compared())
    heads = [
        "### Regressions since main @ `3f2c1ab` (2026-11-22 10:00 UTC): 3",
        "### Fixed (1)",
        "### Flaky (1)",
        "### Behaviour changes (1)",
        "| Scenarios | Passed |",
    ]
    positions = [text.index(head) for head in heads]
    assert positions == sorted(positions)
    assert f"- 🔻 **breaks** (`{CONTRACT}:5`): pass → fail" in text
    assert f"- 🔻 **recall** (`{CONTRACT}:5`): tokens 1,000 → 2,010 (+101%, tolerance 15%)" in text
    assert f"- ✅ **heals** (`{CONTRACT}:5`): fail → pass" in text
    assert f"- 🎲 **wobbly** (`{CONTRACT}:5`): 2/3 attempts passed (0.67, 95% CI 0.21-0.94)" in text
    assert f"- 🔀 **recall** (`{CONTRACT}:5`): tool removed: 'memory_search'" in text
    assert "Compared with the baseline: 1 regressed, 1 fixed, 1 still failing, 1 flaky, " in text
    assert "- 🔻 total tokens 2,000 → 3,010 (+50%, tolerance 15%)" in text
    assert "| Tokens | 2,000 | 3,010 | 1,010 (+50%) ⚠️ over 15% |" in text
    assert "| 2/3 🎲 flaky |" in text


def test_summary_says_clearly_when_no_baseline_was_found() -> None:
    current, _ = _runs()
    text = render_summary(
        with_regression(current, RegressionSettings(), missing="no stored run of 'main'")
    )
    assert "> No baseline found: no stored run of 'main'; judged by the normal exit policy." in text
    assert "Regressions since" not in text


def test_terminal_leads_with_change() -> None:
    stream = io.StringIO()
    TerminalReporter(stream, colour=False).summary(_compared())
    out = stream.getvalue()
    assert out.index("Regressions since main @ 3f2c1ab") < out.index("Fixed:")
    assert out.index("Fixed:") < out.index("Flaky:") < out.index("Failures:")
    assert f"  REGRESSED {CONTRACT}::breaks: pass → fail" in out
    assert f"  FLAKY     {CONTRACT}::wobbly: 2/3 attempts passed" in out


def test_outputs_count_regressed_fixed_and_flaky() -> None:
    values = output_values(_compared(), "r.json", None)
    assert (values["regressed"], values["fixed"], values["flaky"]) == ("1", "1", "1")
    # What fails the gate: the regressed scenario and the two token increases over tolerance.
    assert values["regressions"] == "3"


def test_junit_carries_pass_rate_flaky_and_change_as_properties() -> None:
    root = ET.fromstring(render_junit(_compared()))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["wobbly"].iter("property")}
    assert (props["pass_rate"], props["attempts"], props["flaky"]) == ("0.6667", "2/3", "true")
    assert props["change"] == "flaky"
    breaks = {p.get("name"): p.get("value") for p in cases["breaks"].iter("property")}
    assert breaks["change"] == "regressed" and "pass_rate" not in breaks


def test_annotations_regressed_are_errors_and_flaky_are_warnings() -> None:
    annotations = select_annotations(_compared()).annotations
    by_title = {a.title: a for a in annotations}
    regressed = by_title["ClawSpec REGRESSED: breaks / artifact_exists"]
    assert (regressed.level, regressed.line) == ("error", 30)
    flaky = by_title["ClawSpec FLAKY: wobbly / artifact_exists"]
    assert flaky.level == "warning"
    assert "flaky: 2/3 attempts passed (0.67, 95% CI 0.21-0.94)" in flaky.message


def test_trend_table_shows_pass_rate_and_tokens_over_runs() -> None:
    current, baseline = _runs()
    older = baseline.model_copy(
        update={"source": RunSource(commit="aaaaaaa1234"), "started_at": "2026-11-20T09:00:00"}
    )
    base = baseline.model_copy(
        update={"source": RunSource(commit="bbbbbbb1234"), "started_at": "2026-11-21T09:00:00"}
    )
    done = with_regression(
        current, RegressionSettings(), baseline=base, ref=REF, history=[older, base]
    )
    wobbly = next(t for t in done.trends if t.id.endswith("wobbly"))
    assert wobbly.runs == ["2026-11-20 aaaaaaa", "2026-11-21 bbbbbbb", "this run"]
    assert wobbly.pass_rates == [1.0, 1.0, 0.6667]
    recall = next(t for t in done.trends if t.id.endswith("recall"))
    assert recall.tokens == [1000, 1000, 2010]
    text = render_summary(done)
    assert "### Trends over the last 3 runs" in text
    assert "| wobbly | `██▆` | 0.67 | `···` | — |" in text
    assert "| recall | `███` | 1.00 | `▄▄█` | 2,010 |" in text


def test_pr_comment_leads_with_change_too() -> None:
    from clawspec.reports.github.pr_comment import render_pr_comment

    body = render_pr_comment(_compared(), "<!-- clawspec:w:j -->")
    assert body.index("### Regressions since main @ `3f2c1ab`") < body.index("| Scenarios |")


def test_change_sections_are_capped_when_the_summary_must_shrink() -> None:
    current = report(*(scenario(f"s{i:04d}", "fail") for i in range(3000)))
    baseline = report(*(scenario(f"s{i:04d}", "pass") for i in range(3000)))
    done = with_regression(current, RegressionSettings(), baseline=baseline, ref=REF)
    text = render_summary(done, max_bytes=60_000)
    assert len(text.encode()) <= 60_000
    assert "### Regressions since main @ `3f2c1ab` (2026-11-22 10:00 UTC): 3,000" in text
    assert "more (JSON report)" in text


def test_a_run_with_variants_and_no_baseline_says_so_once_and_how_it_was_judged() -> None:
    from clawspec.ci_context import CIContext
    from clawspec.config.settings import Settings
    from clawspec.regression.step import judge_against_history
    from clawspec.reports.model import VariantComparison

    current, _ = _runs()
    gate = VariantComparison(variant="cheap", reference="default", required=True)
    current = current.model_copy(update={"variant_comparisons": [gate]})
    settings = Settings(fail_on="regression")
    err, out = io.StringIO(), io.StringIO()
    judged = judge_against_history(current, settings, CIContext(), err=err)
    TerminalReporter(out, colour=False).summary(judged)
    said = err.getvalue() + out.getvalue()
    assert "No baseline configured (set --baseline); judged against the reference variant" in said
    assert said.lower().count("no baseline") == 1
    assert "> No baseline configured (set --baseline); judged against the reference variant." in (
        render_summary(judged)
    )
